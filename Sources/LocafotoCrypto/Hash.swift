internal import CSodium

/// A streaming hash function, as Noise (§4.3) and HMAC need it.
public protocol HashFunction: Sendable {
    /// Output length in bytes (HASHLEN).
    static var outputLength: Int { get }
    /// Internal block length in bytes (BLOCKLEN), used by HMAC.
    static var blockLength: Int { get }
    init()
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// Returns the digest. The value must not be updated afterwards.
    mutating func finalize() -> [UInt8]
}

extension HashFunction {
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    public static func hash(_ bytes: some ContiguousBytes) -> [UInt8] {
        var h = Self()
        h.update(bytes)
        return h.finalize()
    }
}

/// SHA-256 (libsodium `crypto_hash_sha256`).
public struct SHA256: HashFunction, @unchecked Sendable {
    public static let outputLength = 32
    public static let blockLength = 64
    private var state: HeapState

    public init() {
        Sodium.ready()
        state = HeapState(bytes: crypto_hash_sha256_statebytes())
        crypto_hash_sha256_init(state.pointer.assumingMemoryBound(to: crypto_hash_sha256_state.self))
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        uniquify()
        crypto_hash_sha256_update(
            state.pointer.assumingMemoryBound(to: crypto_hash_sha256_state.self),
            bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func finalize() -> [UInt8] {
        uniquify()
        var out = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256_final(state.pointer.assumingMemoryBound(to: crypto_hash_sha256_state.self), &out)
        return out
    }

    private mutating func uniquify() {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
    }
}

/// BLAKE2b with a 64-byte output (Noise's "BLAKE2b") or any length from 16 to 64 via `BLAKE2b(outputLength:)`.
public struct BLAKE2b: HashFunction, @unchecked Sendable {
    public static let outputLength = 64
    public static let blockLength = 128
    private var state: HeapState
    private let length: Int

    public init() { self.init(outputLength: 64) }

    /// - Parameter outputLength: 16...64 bytes (libsodium `crypto_generichash` limits).
    public init(outputLength: Int) {
        Sodium.ready()
        precondition((16...64).contains(outputLength), "BLAKE2b output length must be 16...64")
        length = outputLength
        state = HeapState(bytes: crypto_generichash_statebytes())
        crypto_generichash_init(
            OpaquePointer(state.pointer), nil, 0, outputLength)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        crypto_generichash_update(
            OpaquePointer(state.pointer),
            bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func finalize() -> [UInt8] {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        var out = [UInt8](repeating: 0, count: length)
        crypto_generichash_final(
            OpaquePointer(state.pointer), &out, length)
        return out
    }
}

/// BLAKE2b-256: the content hash of photos (32 bytes).
public struct ContentHash {
    public static func hasher() -> BLAKE2b { BLAKE2b(outputLength: 32) }
    public static func of(_ bytes: some ContiguousBytes) -> [UInt8] {
        var h = hasher()
        h.update(bytes)
        return h.finalize()
    }
}

/// HMAC (RFC 2104) over any `HashFunction`, as Noise §4.3 defines HMAC-HASH.
public enum HMAC<H: HashFunction> {
    public static func authenticate(key: some ContiguousBytes, message: some ContiguousBytes) -> [UInt8] {
        authenticate(key: key, parts: [message.withUnsafeBytes { Array($0) }])
    }

    public static func authenticate(key: some ContiguousBytes, parts: [[UInt8]]) -> [UInt8] {
        var k = key.withUnsafeBytes { Array($0) }
        if k.count > H.blockLength { k = H.hash(k) }
        k += [UInt8](repeating: 0, count: H.blockLength - k.count)
        var ipad = k.map { $0 ^ 0x36 }
        var opad = k.map { $0 ^ 0x5c }
        defer {
            secureZero(&k)
            secureZero(&ipad)
            secureZero(&opad)
        }
        var inner = H()
        inner.update(ipad)
        for p in parts { inner.update(p) }
        var innerDigest = inner.finalize()
        defer { secureZero(&innerDigest) }
        var outer = H()
        outer.update(opad)
        outer.update(innerDigest)
        return outer.finalize()
    }
}

/// Heap storage for libsodium state structs, which require more alignment than Swift guarantees
/// for imported structs (BLAKE2b's state is declared 64-byte aligned).
final class HeapState: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let bytes: Int

    init(bytes: Int) {
        self.bytes = bytes
        pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
    }

    func copy() -> HeapState {
        let c = HeapState(bytes: bytes)
        c.pointer.copyMemory(from: pointer, byteCount: bytes)
        return c
    }

    deinit {
        sodium_memzero(pointer, bytes)
        pointer.deallocate()
    }
}
