import LocafotoCrypto
import LocafotoErrors

/// The keys that wrap the master key and the private albums' keys: derived from a passphrase
/// (Argon2id), in one place for creating, unlocking and changing either.
extension Vault {
    /// `what` names the key in the error ("the album key from the new passphrase"). Tests' hook
    /// `beforeKeyDerivation` runs first.
    func deriveKEK(_ passphrase: SecretBytes, salt: [UInt8], _ parameters: PasswordKDF.Parameters, what: String)
        throws -> SecretBytes
    {
        hooks.beforeKeyDerivation?()
        return try Self.deriveKEK(passphrase, salt: salt, parameters, what: what)
    }

    /// The same for a vault being created (no instance, no hooks yet).
    static func deriveKEK(_ passphrase: SecretBytes, salt: [UInt8], _ parameters: PasswordKDF.Parameters, what: String)
        throws -> SecretBytes
    {
        do {
            return try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        } catch {
            throw VaultError(.io, "could not derive \(what)", cause: error)
        }
    }

    /// An album key as the album row stores it: wrapped under the passphrase's key, then under
    /// the master key, both bound to the album (so opening it needs the vault unlocked and the
    /// album's passphrase).
    static func wrapAlbumKey(_ key: SecretBytes, kek: SecretBytes, master: SecretBytes, albumID: String) -> [UInt8] {
        let aad = albumKeyAAD(albumID)
        var inner = KeyWrap.wrap(key, with: kek, aad: aad)
        return KeyWrap.wrap(SecretBytes(consuming: &inner), with: master, aad: aad)
    }
}
