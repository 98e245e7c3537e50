internal import CSodium
import LocafotoErrors

/// The AEAD algorithms of the LOCA and `.locaphoto` formats (values are the LOCA algorithm byte).
public enum AEADAlgorithm: UInt8, Sendable, Codable, CaseIterable {
    /// AES-256-GCM, 12-byte nonce, 16-byte tag. One-shot only in libsodium; needs AES-NI.
    case aes256gcm = 0x01
    /// ChaCha20-Poly1305 (RFC 8439, IETF variant), 12-byte nonce, 16-byte tag. Streamable.
    case chacha20poly1305 = 0x02

    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    public var isAvailable: Bool {
        Sodium.ready()
        switch self {
        case .aes256gcm: return crypto_aead_aes256gcm_is_available() == 1
        case .chacha20poly1305: return true
        }
    }

    /// The name used in JSON documents (`.locaphoto` "algorithm").
    public var name: String {
        switch self {
        case .aes256gcm: "aes-256-gcm"
        case .chacha20poly1305: "chacha20-poly1305"
        }
    }

    public init?(name: String) {
        guard let v = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = v
    }
}

/// One-shot AEAD with a detached tag (ciphertext length == plaintext length).
public enum AEAD {
    public static func seal(
        _ algorithm: AEADAlgorithm, key: SecretBytes, nonce: [UInt8],
        plaintext: some ContiguousBytes, aad: [UInt8] = []
    ) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        try check(algorithm, key: key, nonce: nonce)
        return plaintext.withUnsafeBytes { p in
            var c = [UInt8](repeating: 0, count: p.count)
            let tag = key.withUnsafeBytes { k in
                c.withUnsafeMutableBytes { out in
                    BulkAEAD.seal(
                        algorithm, key: k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce: nonce, input: p,
                        output: out, aad: aad)
                }
            }
            return (c, tag)
        }
    }

    /// Decrypts into a new buffer; throws `authenticationFailed` when the tag does not verify.
    public static func open(
        _ algorithm: AEADAlgorithm, key: SecretBytes, nonce: [UInt8],
        ciphertext: some ContiguousBytes, tag: [UInt8], aad: [UInt8] = []
    ) throws -> [UInt8] {
        try check(algorithm, key: key, nonce: nonce)
        guard tag.count == 16 else { throw CryptoError.length("authentication tag", expected: 16, got: tag.count) }
        return try ciphertext.withUnsafeBytes { c in
            var m = [UInt8](repeating: 0, count: c.count)
            let ok = key.withUnsafeBytes { k in
                m.withUnsafeMutableBytes { out in
                    BulkAEAD.open(
                        algorithm, key: k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce: nonce, input: c,
                        output: out, aad: aad, tag: tag)
                }
            }
            guard ok else {
                throw CryptoError(.authenticationFailed, "authentication failed: wrong key or the data was altered")
            }
            return m
        }
    }

    static func check(_ algorithm: AEADAlgorithm, key: SecretBytes, nonce: [UInt8]) throws {
        Sodium.ready()
        guard algorithm.isAvailable else {
            throw CryptoError(.unavailable, "AES-256-GCM needs a CPU with AES-NI; this one has none")
        }
        guard key.count == 32 else { throw CryptoError.length("AEAD key", expected: 32, got: key.count) }
        guard nonce.count == 12 else { throw CryptoError.length("AEAD nonce", expected: 12, got: nonce.count) }
    }
}

/// Wraps small secrets (master key, photo keys) under a key-encryption key with
/// XChaCha20-Poly1305: output is nonce (24) ‖ ciphertext ‖ tag (16). The random 192-bit nonce
/// makes nonce reuse a non-issue for any number of wraps.
public enum KeyWrap {
    public static let overhead = 24 + 16

    public static func wrap(_ secret: SecretBytes, with kek: SecretBytes, aad: [UInt8] = []) -> [UInt8] {
        Sodium.ready()
        precondition(kek.count == 32, "key-encryption key must be 32 bytes")
        var out = [UInt8](repeating: 0, count: overhead + secret.count)
        out.withUnsafeMutableBufferPointer { o in
            randombytes_buf(o.baseAddress!, 24)
            secret.withUnsafeBytes { s in
                kek.withUnsafeBytes { k in
                    var clen: UInt64 = 0
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        o.baseAddress! + 24, &clen, s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        UInt64(s.count), aad, UInt64(aad.count), nil, o.baseAddress!,
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return out
    }

    public static func unwrap(_ wrapped: [UInt8], with kek: SecretBytes, aad: [UInt8] = []) throws -> SecretBytes {
        Sodium.ready()
        guard kek.count == 32 else { throw CryptoError.length("key-encryption key", expected: 32, got: kek.count) }
        guard wrapped.count > overhead, wrapped.count <= overhead + 1024 else {
            throw CryptoError(.invalidLength, "wrapped key has an invalid length (\(wrapped.count) bytes)")
        }
        let out = SecretBytes(count: wrapped.count - overhead)
        let rc = wrapped.withUnsafeBufferPointer { w in
            out.withUnsafeMutableBytes { o in
                kek.withUnsafeBytes { k in
                    var mlen: UInt64 = 0
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self), &mlen, nil, w.baseAddress! + 24,
                        UInt64(w.count - 24), aad, UInt64(aad.count), w.baseAddress!,
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard rc == 0 else {
            throw CryptoError(.authenticationFailed, "could not unwrap key: wrong key or corrupted data")
        }
        return out
    }
}

extension AEAD {
    /// Encrypts `buffer` in place and returns the tag. The transport hot path: no allocation
    /// besides the 16-byte tag.
    public static func sealInPlace(
        _ algorithm: AEADAlgorithm, key: SecretBytes, nonce: [UInt8], buffer: UnsafeMutableRawBufferPointer,
        aad: [UInt8] = []
    ) throws -> [UInt8] {
        try check(algorithm, key: key, nonce: nonce)
        return key.withUnsafeBytes { k in
            BulkAEAD.seal(
                algorithm, key: k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce: nonce,
                input: UnsafeRawBufferPointer(buffer),
                output: buffer, aad: aad)
        }
    }

    /// Verifies `tag` and decrypts `buffer` in place. On failure no plaintext is released: the
    /// buffer is zeroed. Callers must treat it as lost.
    public static func openInPlace(
        _ algorithm: AEADAlgorithm, key: SecretBytes, nonce: [UInt8], buffer: UnsafeMutableRawBufferPointer,
        tag: [UInt8],
        aad: [UInt8] = []
    ) throws {
        try check(algorithm, key: key, nonce: nonce)
        guard tag.count == 16 else { throw CryptoError.length("authentication tag", expected: 16, got: tag.count) }
        let ok = key.withUnsafeBytes { k in
            BulkAEAD.open(
                algorithm, key: k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce: nonce,
                input: UnsafeRawBufferPointer(buffer),
                output: buffer, aad: aad, tag: tag)
        }
        guard ok else {
            throw CryptoError(.authenticationFailed, "authentication failed: wrong key or the data was altered")
        }
    }
}

/// XChaCha20-Poly1305 with a random 192-bit nonce for small records of any content (the
/// vault catalog's sealed rows): output is nonce (24) ‖ ciphertext ‖ tag (16). Unlike `KeyWrap`
/// the plaintext is ordinary bytes, up to `maxPlaintext`.
public enum SealedRecord {
    public static let overhead = 24 + 16
    public static let maxPlaintext = 1 << 20

    public static func seal(_ plaintext: [UInt8], with key: SecretBytes, aad: [UInt8] = []) -> [UInt8] {
        Sodium.ready()
        precondition(key.count == 32, "record key must be 32 bytes")
        precondition(plaintext.count <= maxPlaintext, "record too large to seal")
        var out = [UInt8](repeating: 0, count: overhead + plaintext.count)
        out.withUnsafeMutableBufferPointer { o in
            randombytes_buf(o.baseAddress!, 24)
            key.withUnsafeBytes { k in
                var clen: UInt64 = 0
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress! + 24, &clen, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil,
                    o.baseAddress!, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    /// Throws `invalidLength` or `authenticationFailed` (wrong key, altered bytes, other aad).
    public static func open(_ sealed: some ContiguousBytes, with key: SecretBytes, aad: [UInt8] = []) throws -> [UInt8]
    {
        Sodium.ready()
        guard key.count == 32 else { throw CryptoError.length("record key", expected: 32, got: key.count) }
        return try sealed.withUnsafeBytes { (s: UnsafeRawBufferPointer) -> [UInt8] in
            guard s.count >= overhead, s.count <= overhead + maxPlaintext else {
                throw CryptoError(.invalidLength, "sealed record has an invalid length (\(s.count) bytes)")
            }
            let base = s.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var out = [UInt8](repeating: 0, count: s.count - overhead)
            let rc = out.withUnsafeMutableBufferPointer { o in
                key.withUnsafeBytes { k in
                    var mlen: UInt64 = 0
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        o.baseAddress, &mlen, nil, base + 24, UInt64(s.count - 24), aad, UInt64(aad.count), base,
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            guard rc == 0 else {
                throw CryptoError(.authenticationFailed, "could not open the sealed record: wrong key or altered data")
            }
            return out
        }
    }
}
