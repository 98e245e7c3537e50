internal import CSodium
import LocafotoErrors

/// An Ed25519 public key (32 bytes): a node's long-term identity.
public struct SigningPublicKey: Hashable, Sendable, Codable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw CryptoError.length("Ed25519 public key", expected: 32, got: bytes.count) }
        self.bytes = bytes
    }

    public func isValidSignature(_ signature: [UInt8], for message: some ContiguousBytes) -> Bool {
        Sodium.ready()
        guard signature.count == 64 else { return false }
        return message.withUnsafeBytes { m in
            crypto_sign_verify_detached(
                signature, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count), bytes) == 0
        }
    }

    /// The X25519 key agreement key that belongs to this identity (birational map of the curve point,
    /// `crypto_sign_ed25519_pk_to_curve25519`). Locafoto derives the node's X25519 key this way
    /// rather than keeping a second key pair, so one fingerprint covers both.
    public func agreementKey() throws -> X25519PublicKey {
        Sodium.ready()
        var out = [UInt8](repeating: 0, count: 32)
        guard crypto_sign_ed25519_pk_to_curve25519(&out, bytes) == 0 else {
            throw CryptoError(.invalidKey, "the Ed25519 public key is not a valid curve point")
        }
        return try X25519PublicKey(bytes: out)
    }
}

/// An Ed25519 key pair. The 32-byte seed is the only secret stored.
public struct SigningKey: Sendable {
    public let seed: SecretBytes
    private let secretKey: SecretBytes  // libsodium's 64-byte form (seed ‖ public key)
    public let publicKey: SigningPublicKey

    public init(seed: SecretBytes) throws {
        Sodium.ready()
        guard seed.count == 32 else { throw CryptoError.length("Ed25519 seed", expected: 32, got: seed.count) }
        var pk = [UInt8](repeating: 0, count: 32)
        let sk = SecretBytes(count: 64)
        seed.withUnsafeBytes { s in
            sk.withUnsafeMutableBytes { k in
                _ = crypto_sign_seed_keypair(
                    &pk, k.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        self.seed = seed
        secretKey = sk
        publicKey = try SigningPublicKey(bytes: pk)
    }

    public static func generate() -> SigningKey {
        // A 32-byte random seed is always a valid Ed25519 seed.
        try! SigningKey(seed: SecretBytes(randomCount: 32))
    }

    public func signature(for message: some ContiguousBytes) -> [UInt8] {
        var sig = [UInt8](repeating: 0, count: 64)
        message.withUnsafeBytes { m in
            secretKey.withUnsafeBytes { k in
                _ = crypto_sign_detached(
                    &sig, nil, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return sig
    }

    /// The X25519 secret key derived from this identity (`crypto_sign_ed25519_sk_to_curve25519`).
    public func agreementKey() throws -> X25519SecretKey {
        let out = SecretBytes(count: 32)
        let rc = secretKey.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { o in
                crypto_sign_ed25519_sk_to_curve25519(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else { throw CryptoError(.invalidKey, "could not derive the X25519 key from the identity key") }
        return try X25519SecretKey(secret: out)
    }
}

/// An X25519 public key (32 bytes).
public struct X25519PublicKey: Hashable, Sendable, Codable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw CryptoError.length("X25519 public key", expected: 32, got: bytes.count) }
        self.bytes = bytes
    }
}

/// An X25519 secret key.
public struct X25519SecretKey: Sendable {
    public let secret: SecretBytes
    public let publicKey: X25519PublicKey

    public init(secret: SecretBytes) throws {
        Sodium.ready()
        guard secret.count == 32 else { throw CryptoError.length("X25519 secret key", expected: 32, got: secret.count) }
        var pk = [UInt8](repeating: 0, count: 32)
        secret.withUnsafeBytes { s in
            _ = crypto_scalarmult_base(&pk, s.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        self.secret = secret
        publicKey = try X25519PublicKey(bytes: pk)
    }

    public static func generate() -> X25519SecretKey {
        try! X25519SecretKey(secret: SecretBytes(randomCount: 32))
    }

    /// X25519(secret, peer). Throws for low-order peer points, where libsodium refuses
    /// to return the all-zero output.
    public func sharedSecret(with peer: X25519PublicKey) throws -> SecretBytes {
        let out = SecretBytes(count: 32)
        let rc = secret.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { o in
                crypto_scalarmult(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    peer.bytes)
            }
        }
        guard rc == 0 else { throw CryptoError(.invalidKey, "the peer's X25519 public key is a low-order point") }
        return out
    }
}

/// Anonymous public-key encryption to an X25519 key (libsodium sealed boxes: an ephemeral
/// X25519 key, XSalsa20-Poly1305; 48 bytes of overhead).
public enum SealedBox {
    public static let overhead = 48

    public static func seal(_ message: some ContiguousBytes, to recipient: X25519PublicKey) -> [UInt8] {
        Sodium.ready()
        return message.withUnsafeBytes { m in
            var out = [UInt8](repeating: 0, count: m.count + overhead)
            _ = crypto_box_seal(
                &out, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count), recipient.bytes)
            return out
        }
    }

    /// `maxPlaintext`: the largest message the caller expects (keys: the default; previews: 16 KiB).
    public static func open(_ sealed: [UInt8], with recipient: X25519SecretKey, maxPlaintext: Int = 4096) throws
        -> SecretBytes
    {
        Sodium.ready()
        guard sealed.count >= overhead, sealed.count <= overhead + maxPlaintext else {
            throw CryptoError(.invalidLength, "sealed box has an invalid length (\(sealed.count) bytes)")
        }
        let out = SecretBytes(count: sealed.count - overhead)
        let rc = recipient.secret.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { o in
                crypto_box_seal_open(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count),
                    recipient.publicKey.bytes, s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else {
            throw CryptoError(
                .authenticationFailed, "sealed box could not be opened: not addressed to this key, or altered")
        }
        return out
    }
}
