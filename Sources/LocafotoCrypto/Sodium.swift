internal import CSodium

/// Process-wide libsodium initialisation. `sodium_init` is idempotent and thread-safe;
/// every public entry point of this module calls `Sodium.ready()` first.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() {
        precondition(initialised, "libsodium failed to initialise (sodium_init < 0)")
    }
}

/// Cryptographically secure random bytes (libsodium `randombytes_buf`).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ready()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return out
    }

    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        Sodium.ready()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }
}

/// Constant-time equality for secrets, tags and keys (`sodium_memcmp`).
public func constantTimeEquals(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
    Sodium.ready()
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            pa.count == pb.count && (pa.count == 0 || sodium_memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0)
        }
    }
}

/// Overwrites a buffer with zeros in a way the optimiser cannot remove (`sodium_memzero`).
public func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(base, buffer.count)
}

/// Zeroes an array's storage in place; use for short-lived copies of key material.
public func secureZero(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { secureZero($0) }
}
