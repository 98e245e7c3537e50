internal import CSodium
import LocafotoErrors

/// Argon2id (libsodium `crypto_pwhash`, ALG_ARGON2ID13): turns a passphrase into a key-encryption key.
public enum PasswordKDF {
    public struct Parameters: Codable, Equatable, Sendable {
        public var opsLimit: UInt64
        public var memLimit: UInt64

        public init(opsLimit: UInt64, memLimit: UInt64) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }

        /// libsodium's INTERACTIVE limits: 2 passes, 64 MiB.
        public static let interactive = Parameters(opsLimit: 2, memLimit: 64 << 20)
        /// libsodium's MODERATE limits: 3 passes, 256 MiB (the vault default).
        public static let moderate = Parameters(opsLimit: 3, memLimit: 256 << 20)
        /// libsodium's SENSITIVE limits: 4 passes, 1 GiB.
        public static let sensitive = Parameters(opsLimit: 4, memLimit: 1 << 30)

        /// Bounds accepted when reading parameters from a file, so a hostile file cannot ask
        /// for terabytes of memory or years of work.
        public var isWithinBounds: Bool {
            (1...16).contains(opsLimit) && (8 << 20...4 << 30).contains(memLimit)
        }
    }

    public static let saltLength = 16

    public static func deriveKey(
        passphrase: SecretBytes, salt: [UInt8], parameters: Parameters, length: Int = 32
    ) throws -> SecretBytes {
        Sodium.ready()
        guard salt.count == saltLength else {
            throw CryptoError.length("Argon2id salt", expected: saltLength, got: salt.count)
        }
        guard parameters.isWithinBounds else {
            throw CryptoError(
                .kdfFailed, "Argon2id parameters out of bounds (ops \(parameters.opsLimit), mem \(parameters.memLimit))"
            )
        }
        let out = SecretBytes(count: length)
        var empty: CChar = 0
        let rc = passphrase.withUnsafeBytes { p in
            out.withUnsafeMutableBytes { o in
                crypto_pwhash(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(length),
                    p.baseAddress?.assumingMemoryBound(to: CChar.self) ?? withUnsafePointer(to: &empty) { $0 },
                    UInt64(p.count), salt, parameters.opsLimit, Int(parameters.memLimit),
                    crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else {
            throw CryptoError(.kdfFailed, "Argon2id failed: not enough memory for \(parameters.memLimit >> 20) MiB?")
        }
        return out
    }
}
