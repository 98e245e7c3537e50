import LocafotoCrypto
import LocafotoErrors

/// The node identity's seed wrapped under the vault (identity.json version 2, "protection":
/// "vault"; see protocol/formats.md):
///
///     kek         = crypto_kdf_derive_from_key(32, subkey id 1, context "LFIDENT1", master key)
///     wrappedSeed = KeyWrap(seed, kek, aad = "locafoto identity v2:" ‖ Ed25519 public key)
///
/// Under the master key rather than a passphrase of its own: one passphrase, and `vault passwd`
/// (which re-wraps the master key, never changes it) leaves the identity readable. A subkey, not
/// the master key itself, so that this wrapping can never be confused with a photo key's (those
/// use the master key with the photo ID as aad). The public key in the aad binds the seed to the
/// clear public key beside it: a file whose public key was swapped does not unwrap.
extension Vault {
    public static let identityKDFContext = "LFIDENT1"
    public static let identityKDFSubkeyID: UInt64 = 1

    public static func identityAAD(publicKey: [UInt8]) -> [UInt8] {
        Array("locafoto identity v2:".utf8) + publicKey
    }

    /// The key-encryption key for the identity seed, from a master key (exposed for the vector test).
    public static func identityKEK(master: SecretBytes) -> SecretBytes {
        SecretStream.deriveKey(from: master, id: identityKDFSubkeyID, context: identityKDFContext)
    }

    /// Wraps a 32-byte identity seed. Needs the vault unlocked.
    public func wrapIdentitySeed(_ seed: SecretBytes, publicKey: [UInt8]) throws -> [UInt8] {
        guard seed.count == 32, publicKey.count == 32 else {
            throw VaultError(.invalidArgument, "an identity seed and its public key are 32 bytes each")
        }
        return KeyWrap.wrap(
            seed, with: Self.identityKEK(master: try requireMasterKey()), aad: Self.identityAAD(publicKey: publicKey))
    }

    /// Unwraps what `wrapIdentitySeed` made. Needs the vault unlocked; another vault's master
    /// key, an altered file or a swapped public key fail authentication (`decryptionFailed`).
    public func unwrapIdentitySeed(_ wrapped: [UInt8], publicKey: [UInt8]) throws -> SecretBytes {
        try Self.unwrapIdentitySeed(wrapped, publicKey: publicKey, master: try requireMasterKey())
    }

    /// The unwrapping itself, from a master key (the vector test in formats.md uses a fixed one).
    static func unwrapIdentitySeed(_ wrapped: [UInt8], publicKey: [UInt8], master: SecretBytes) throws -> SecretBytes {
        let kek = identityKEK(master: master)
        let seed: SecretBytes
        do {
            seed = try KeyWrap.unwrap(wrapped, with: kek, aad: identityAAD(publicKey: publicKey))
        } catch {
            throw VaultError(
                .decryptionFailed,
                "the node identity does not open with this vault's key: it was protected under another vault, or identity.json was altered"
            )
        }
        guard seed.count == 32 else { throw VaultError(.corrupt, "the protected node identity has the wrong length") }
        return seed
    }
}
