import LocafotoCrypto
import LocafotoErrors

/// The cipher functions of §12.3–12.4.
public enum NoiseCipher: String, Sendable, CaseIterable {
    case chaChaPoly = "ChaChaPoly"
    case aesGCM = "AESGCM"

    public var name: String { rawValue }

    var algorithm: AEADAlgorithm {
        switch self {
        case .chaChaPoly: .chacha20poly1305
        case .aesGCM: .aes256gcm
        }
    }

    /// The 96-bit AEAD nonce for counter `n`: 32 zero bits then the 64-bit counter, little-endian
    /// for ChaChaPoly (§12.3) but big-endian for AESGCM (§12.4).
    func nonceBytes(_ n: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 {
            let byte = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i)))
            switch self {
            case .chaChaPoly: out[4 + i] = byte
            case .aesGCM: out[11 - i] = byte
            }
        }
        return out
    }
}

/// The hash functions of §12.5–12.8 that this implementation offers.
public enum NoiseHash: String, Sendable, CaseIterable {
    case sha256 = "SHA256"
    case blake2b = "BLAKE2b"

    public var name: String { rawValue }

    /// HASHLEN.
    var hashLength: Int {
        switch self {
        case .sha256: SHA256.outputLength
        case .blake2b: BLAKE2b.outputLength
        }
    }

    /// HASH(parts[0] ‖ parts[1] ‖ …).
    func hash(_ parts: [[UInt8]]) -> [UInt8] {
        switch self {
        case .sha256: Self.digest(SHA256(), parts)
        case .blake2b: Self.digest(BLAKE2b(), parts)
        }
    }

    private static func digest<H: HashFunction>(_ hasher: H, _ parts: [[UInt8]]) -> [UInt8] {
        var h = hasher
        for p in parts { h.update(p) }
        return h.finalize()
    }

    /// HMAC-HASH(key, parts[0] ‖ parts[1] ‖ …) (§4.3).
    func hmac(key: SecretBytes, _ parts: [[UInt8]]) -> [UInt8] {
        switch self {
        case .sha256: HMAC<SHA256>.authenticate(key: key, parts: parts)
        case .blake2b: HMAC<BLAKE2b>.authenticate(key: key, parts: parts)
        }
    }
}

/// A full protocol name (§8), e.g. "Noise_XX_25519_ChaChaPoly_BLAKE2b". The DH is always 25519.
public struct NoiseProtocolName: Sendable, Equatable, CustomStringConvertible {
    public let pattern: NoisePattern
    public let cipher: NoiseCipher
    public let hash: NoiseHash

    public init(pattern: NoisePattern, cipher: NoiseCipher, hash: NoiseHash) {
        self.pattern = pattern
        self.cipher = cipher
        self.hash = hash
    }

    /// Parses "Noise_<pattern>_<dh>_<cipher>_<hash>"; anything unsupported throws `.unsupported`.
    public init(parsing name: String) throws {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "Noise" else {
            throw NoiseError(
                .unsupported, "\"\(name)\" is not a Noise protocol name of the form Noise_PATTERN_DH_CIPHER_HASH")
        }
        guard parts[2] == "25519" else {
            throw NoiseError(.unsupported, "DH function \"\(parts[2])\" is not supported (only 25519)")
        }
        guard let cipher = NoiseCipher(rawValue: String(parts[3])) else {
            throw NoiseError(.unsupported, "cipher \"\(parts[3])\" is not supported (ChaChaPoly, AESGCM)")
        }
        guard let hash = NoiseHash(rawValue: String(parts[4])) else {
            throw NoiseError(.unsupported, "hash \"\(parts[4])\" is not supported (SHA256, BLAKE2b)")
        }
        self.init(pattern: try NoisePattern(named: String(parts[1])), cipher: cipher, hash: hash)
    }

    public var name: String { "Noise_\(pattern.name)_25519_\(cipher.name)_\(hash.name)" }
    public var description: String { name }

    /// Locafoto's session protocol.
    public static let locafoto = NoiseProtocolName(pattern: .xx, cipher: .chaChaPoly, hash: .blake2b)
}
