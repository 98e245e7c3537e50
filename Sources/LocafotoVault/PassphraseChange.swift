import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors

/// Changing the passphrase of the vault or of a private album (`vault passwd`, `album passwd`).
///
/// Only the key that the passphrase protects is re-wrapped — the vault master key, or the inner
/// wrapping of a private album's key — under Argon2id(new passphrase, new random salt), with the
/// Argon2id parameters the record already has. No photo is re-encrypted and no photo key
/// changes. The new wrapped key, salt and parameters replace the old ones in one UPDATE of one
/// row, in one SQLite transaction: after a crash the catalog holds either the old record (the old
/// passphrase works) or the new one (the new passphrase works), never a mixture.
///
/// The old passphrase is checked exactly as `unlock` / `unlockAlbum` check it, under the same
/// unlock throttle: `passwd` is no way around the backoff.
///
/// Backups written before the change still open with the old passphrase (their header carries
/// the key record of their time); docs/usage.md says so ("Catalog speed, unlocking and changing a passphrase").
extension Vault {
    /// Re-wraps the master key under `new`. Works whether the vault is unlocked or not, and
    /// leaves it as it was. Throws `wrongPassphrase` / `throttled` for the old passphrase,
    /// `invalidArgument` for an empty new one, `conflict` if another change committed meanwhile.
    public func changePassphrase(old: SecretBytes, new: SecretBytes) throws {
        guard new.count > 0 else { throw VaultError(.invalidArgument, "the new passphrase is empty") }
        let (master, row) = try checkVaultPassphrase(old)
        let salt = SecureRandom.bytes(PasswordKDF.saltLength)
        let params = PasswordKDF.Parameters(
            opsLimit: UInt64(clamping: row.kdfOpsLimit), memLimit: UInt64(clamping: row.kdfMemLimit))
        let kek = try deriveKEK(new, salt: salt, params, what: "the vault key from the new passphrase")
        let wrapped = KeyWrap.wrap(master, with: kek, aad: Self.masterKeyAAD)
        let hook = hooks.beforePassphraseCommit
        try writeCatalog("could not store the new vault passphrase (the old one still works)") { db in
            // Compare-and-swap on the record read above: a change that committed in between
            // (another process) is not silently overwritten.
            try db.execute(
                sql: "UPDATE vaultKey SET wrappedMasterKey = ?, kdfSalt = ? WHERE id = 1 AND wrappedMasterKey = ?",
                arguments: [Data(wrapped), Data(salt), row.wrappedMasterKey])
            guard db.changesCount == 1 else {
                throw VaultError(
                    .conflict,
                    "the vault passphrase was changed meanwhile by another process; nothing changed, try again with the current passphrase"
                )
            }
            try hook?()
        }
    }

    /// Re-wraps a private album's key under `new`. Requires the vault unlocked (the album key is
    /// also wrapped under the master key). Leaves the album locked or unlocked as it was. Throws
    /// `wrongPassphrase` / `throttled` for the old passphrase, `albumNotFound`, `invalidArgument`
    /// for an album that is not private or an empty new passphrase, `conflict` as above.
    public func changeAlbumPassphrase(_ album: String, old: SecretBytes, new: SecretBytes) throws {
        let master = try requireMasterKey()
        guard new.count > 0 else { throw VaultError(.invalidArgument, "the new passphrase is empty") }
        let row = try readCatalog { db in try Self.findAlbum(db, album) }
        let (albumKey, params) = try checkAlbumPassphrase(row, old, master: master)
        let salt = SecureRandom.bytes(PasswordKDF.saltLength)
        let kek = try deriveKEK(new, salt: salt, params, what: "the album key from the new passphrase")
        let outer = Self.wrapAlbumKey(albumKey, kek: kek, master: master, albumID: row.id)
        let hook = hooks.beforePassphraseCommit
        try writeCatalog("could not store the new passphrase of the album \"\(row.name)\" (the old one still works)") {
            db in
            try db.execute(
                sql: "UPDATE album SET wrappedAlbumKey = ?, kdfSalt = ? WHERE id = ? AND wrappedAlbumKey = ?",
                arguments: [Data(outer), Data(salt), row.id, row.wrappedAlbumKey])
            guard db.changesCount == 1 else {
                throw VaultError(
                    .conflict, "the album \"\(row.name)\" was changed or deleted meanwhile; nothing changed, try again")
            }
            try hook?()
        }
    }
}
