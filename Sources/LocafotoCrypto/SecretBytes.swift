internal import CSodium

/// Key material that is locked in memory where the OS allows it (`sodium_mlock`), zeroed when
/// released (`sodium_munlock` zeroes before unlocking) and never printed.
///
/// A class, not an array, so that copies do not escape the zeroing: share the reference instead.
public final class SecretBytes: @unchecked Sendable, ContiguousBytes, CustomStringConvertible,
    CustomDebugStringConvertible
{
    // Immutable after init except through `withUnsafeMutableBytes`, which callers use only
    // before publishing the value; hence @unchecked Sendable.
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    public init(count: Int) {
        Sodium.ready()
        self.count = count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        // Best effort: RLIMIT_MEMLOCK may be small; failing to lock is not fatal.
        _ = sodium_mlock(pointer, max(count, 1))
    }

    /// `count` fresh random bytes.
    public convenience init(randomCount count: Int) {
        self.init(count: count)
        randombytes_buf(pointer, count)
    }

    /// Copies `bytes`; the caller remains responsible for zeroing its own copy.
    public convenience init(copying bytes: some ContiguousBytes) {
        let n = bytes.withUnsafeBytes { $0.count }
        self.init(count: n)
        bytes.withUnsafeBytes { src in
            if let base = src.baseAddress, n > 0 { pointer.copyMemory(from: base, byteCount: n) }
        }
    }

    /// Takes ownership of `bytes` and zeroes the array afterwards.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(copying: bytes)
        secureZero(&bytes)
    }

    deinit {
        _ = sodium_munlock(pointer, max(count, 1))
        pointer.deallocate()
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy as a plain array, for the rare API that needs one (e.g. tests). Zero it after use.
    public func unsafeCopy() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        LocafotoCrypto.constantTimeEquals(self, other)
    }

    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}
