import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import Synchronization

/// Private albums (seed 001: "Private albums with separate PIN or biometric protection").
///
/// A private album has its own passphrase and a random 256-bit album key. The key is stored
/// wrapped twice (`album.wrappedAlbumKey`, 112 bytes):
///
///     inner = KeyWrap(albumKey, kek: Argon2id(album passphrase, album.kdfSalt), aad)
///     outer = KeyWrap(inner,    kek: master key,                               aad)
///     aad   = "locafoto private album key v1:" ‖ album ID
///
/// so opening it needs the album passphrase *and* the vault unlocked: neither the master key
/// alone nor the album passphrase alone (even with a copy of the catalog) yields the album key.
/// The key of every photo in the album is wrapped under the album key instead of the master key
/// (aad "locafoto private album photo key v1:" ‖ album ID ‖ ":" ‖ photo ID) and
/// `photo.privateAlbumId` names the album. A photo leaving the album (remove, move, album
/// deletion without its photos) gets its key wrapped under the master key again.
///
/// While the album is not unlocked in this `Vault` instance its photos are left out of every
/// listing and query, and reading one (export, stream, encrypted file, `photo(matching:)`)
/// throws `albumLocked` naming the album. Album keys are forgotten by `lockAlbum` and `lock`.
/// A photo of a private album is in no other album. Wrong album passphrases are throttled like
/// the vault's (UnlockThrottle.swift), counted in the album row.
extension Vault {
    static let albumKeyAADPrefix = "locafoto private album key v1:"
    static let albumPhotoKeyAADPrefix = "locafoto private album photo key v1:"

    static func albumKeyAAD(_ albumID: String) -> [UInt8] { Array((albumKeyAADPrefix + albumID).utf8) }

    static func albumPhotoKeyAAD(albumID: String, photoID: String) -> [UInt8] {
        Array((albumPhotoKeyAADPrefix + albumID + ":" + photoID).utf8)
    }

    // MARK: - Unlocking

    /// Unlocks a private album in this instance: its photos become visible and readable until
    /// `lockAlbum` or `lock`. Runs Argon2id (slow by design) unless the album is already
    /// unlocked. Throws `wrongPassphrase`, `throttled` (too many wrong passphrases: wait, the
    /// message says how long), `albumNotFound`, or `invalidArgument` for an album that is not
    /// private. Requires the vault unlocked.
    public func unlockAlbum(_ album: String, passphrase: SecretBytes) throws {
        let master = try requireMasterKey()
        let row = try readCatalog { db in try Self.findAlbum(db, album) }
        // Checked before the early return, so a public album is refused even when "unlocked".
        _ = try Self.albumKDF(row)
        if unlockedAlbums.withLock({ $0[row.id] != nil }) { return }
        let (key, _) = try checkAlbumPassphrase(row, passphrase, master: master)
        keyRing.unlockAlbum(row.id, albumKey: key)
        do {
            try remirror(album: row.id, unlocked: true)
        } catch {
            keyRing.lockAlbum(row.id)  // the failed remirror rolled back: its rows stay unavailable
            throw error
        }
        unlockedAlbums.withLock { $0[row.id] = key }
    }

    /// The album's wrapped key, salt and Argon2id parameters, checked.
    static func albumKDF(_ row: AlbumRow) throws -> (wrapped: Data, salt: Data, params: PasswordKDF.Parameters) {
        guard row.isPrivate, let wrapped = row.wrappedAlbumKey, let salt = row.kdfSalt,
            let ops = row.kdfOpsLimit, let mem = row.kdfMemLimit
        else {
            throw VaultError(.invalidArgument, "the album \"\(row.name)\" is not private: it has no passphrase")
        }
        let params = PasswordKDF.Parameters(opsLimit: UInt64(clamping: ops), memLimit: UInt64(clamping: mem))
        guard row.kdfAlgorithm == VaultKeyRow.kdfAlgorithmName, params.isWithinBounds,
            salt.count == PasswordKDF.saltLength
        else {
            throw VaultError(
                .corrupt,
                "the private album \"\(row.name)\" has invalid key-derivation settings; restore the catalog from a backup"
            )
        }
        return (wrapped, salt, params)
    }

    /// Checks a private album's passphrase under the unlock throttle (`unlockAlbum`,
    /// `changeAlbumPassphrase`): the album key and the album's Argon2id parameters.
    func checkAlbumPassphrase(_ row: AlbumRow, _ passphrase: SecretBytes, master: SecretBytes)
        throws -> (key: SecretBytes, params: PasswordKDF.Parameters)
    {
        let (wrapped, salt, params) = try Self.albumKDF(row)
        let subject = UnlockSubject.album(id: row.id, name: row.name)
        try beginUnlockAttempt(subject)
        var outcome = UnlockOutcome.inconclusive
        defer { endUnlockAttempt(subject, outcome) }
        let aad = Self.albumKeyAAD(row.id)
        let inner: SecretBytes
        do {
            inner = try KeyWrap.unwrap([UInt8](wrapped), with: master, aad: aad)
        } catch {
            throw VaultError(
                .corrupt, "the key of the private album \"\(row.name)\" is damaged; restore the catalog from a backup")
        }
        let kek = try deriveKEK(passphrase, salt: [UInt8](salt), params, what: "the album key from the passphrase")
        let key: SecretBytes
        do {
            var innerBytes = inner.unsafeCopy()
            defer { secureZero(&innerBytes) }
            key = try KeyWrap.unwrap(innerBytes, with: kek, aad: aad)
        } catch {
            outcome = .wrongPassphrase
            throw VaultError(.wrongPassphrase, "wrong passphrase for the private album \"\(row.name)\"; try again")
        }
        guard key.count == 32 else {
            throw VaultError(
                .corrupt,
                "the key of the private album \"\(row.name)\" has the wrong length; restore the catalog from a backup")
        }
        outcome = .success
        return (key, params)
    }

    /// Forgets a private album's key: its photos disappear from listings again. No effect on an
    /// album that is not unlocked. While the vault is locked every album is locked already (and
    /// album names cannot be read): nothing to do.
    public func lockAlbum(_ album: String) throws {
        guard isUnlocked else { return }
        let row = try readCatalog { db in try Self.findAlbum(db, album) }
        guard unlockedAlbums.withLock({ $0.removeValue(forKey: row.id) }) != nil else { return }
        keyRing.lockAlbum(row.id)
        try remirror(album: row.id, unlocked: false)
    }

    /// Seconds before the next `unlockAlbum` attempt on this album is allowed (0: now).
    public func albumUnlockDelay(_ album: String) throws -> TimeInterval {
        let now = hooks.now()
        return try readCatalog { db in
            let row = try Self.findAlbum(db, album)
            let (failures, last) = try Self.throttleState(db, .album(id: row.id, name: row.name))
            return UnlockThrottle.remaining(failures: failures, lastFailure: last, now: now)
        }
    }

    // MARK: - Creating the album key

    /// A new album key wrapped for the album row: (album key, wrapped, salt).
    func makeAlbumKey(albumID: String, passphrase: SecretBytes, kdf: PasswordKDF.Parameters, master: SecretBytes)
        throws -> (key: SecretBytes, wrapped: [UInt8], salt: [UInt8])
    {
        let key = SecretBytes(randomCount: 32)
        let salt = SecureRandom.bytes(PasswordKDF.saltLength)
        let kek = try deriveKEK(passphrase, salt: salt, kdf, what: "the album key from the passphrase")
        return (key, Self.wrapAlbumKey(key, kek: kek, master: master, albumID: albumID), salt)
    }

    // MARK: - Visibility

    /// IDs of the private albums unlocked in this instance.
    func unlockedAlbumIDs() -> [String] { unlockedAlbums.withLock { Array($0.keys).sorted() } }

    /// The visibility condition as SQL on table `photo`: not in a private album, or in one that is
    /// unlocked here. The unary `+` keeps SQLite from using `photo_on_privateAlbumId` for it
    /// (the sort indexes must drive listings).
    static func visibilitySQL(_ unlocked: [String]) -> (sql: String, arguments: [any DatabaseValueConvertible]) {
        if unlocked.isEmpty { return ("+photo.privateAlbumId IS NULL", []) }
        let marks = Array(repeating: "?", count: unlocked.count).joined(separator: ", ")
        return ("(+photo.privateAlbumId IS NULL OR +photo.privateAlbumId IN (\(marks)))", unlocked)
    }

    func isVisible(_ row: PhotoRow) -> Bool {
        guard let album = row.privateAlbumId else { return true }
        return unlockedAlbums.withLock { $0[album] != nil }
    }

    /// Throws `albumLocked` for a photo of a private album that is not unlocked here. Pass the
    /// transaction's `db` when inside one (the album name is looked up for the message).
    func requireVisible(_ row: PhotoRow, _ db: Database? = nil) throws {
        guard let album = row.privateAlbumId, !isVisible(row) else { return }
        let lookup = { (db: Database) in
            try String.fetchOne(db, sql: "SELECT name FROM albumView WHERE id = ?", arguments: [album])
        }
        let name = db.map { try? lookup($0) } ?? (try? self.db.read(lookup))
        throw Self.albumLockedError(photo: row.record.id, album: (name ?? nil) ?? album)
    }

    static func albumLockedError(photo: String, album: String) -> VaultError {
        VaultError(
            .albumLocked,
            "photo \(photo) is in the private album \"\(album)\", which is locked; unlock the album with its passphrase first"
        )
    }

    /// The key and associated data the photo's key is wrapped with: the master key, or its
    /// private album's key (`albumLocked` when that album is not unlocked here).
    func photoKeyWrapping(_ row: PhotoRow, master: SecretBytes, _ db: Database? = nil) throws -> (
        kek: SecretBytes, aad: [UInt8]
    ) {
        guard let album = row.privateAlbumId else { return (master, Array(row.record.id.utf8)) }
        guard let key = unlockedAlbums.withLock({ $0[album] }) else {
            try requireVisible(row, db)
            throw Self.albumLockedError(photo: row.record.id, album: album)
        }
        return (key, Self.albumPhotoKeyAAD(albumID: album, photoID: row.record.id))
    }

    /// The key of an unlocked private album (`albumLocked` otherwise).
    func requireAlbumKey(_ album: AlbumRow) throws -> SecretBytes {
        guard let key = unlockedAlbums.withLock({ $0[album.id] }) else {
            throw VaultError(
                .albumLocked, "the private album \"\(album.name)\" is locked; unlock it with its passphrase first")
        }
        return key
    }

    /// Re-wraps the photo's key: from where it is now to under `albumKey` of `album` (nil: the
    /// master key), and records the album in `photo.privateAlbumId`. Within a write transaction;
    /// the photo's memberships must already allow it (see the triggers of v2-organisation).
    func rewrapPhotoKey(
        _ db: Database, _ row: PhotoRow, master: SecretBytes, to album: (id: String, key: SecretBytes)?
    ) throws {
        let (fromKey, fromAAD) = try photoKeyWrapping(row, master: master, db)
        let photoKey: SecretBytes
        do {
            photoKey = try KeyWrap.unwrap(row.wrappedKey, with: fromKey, aad: fromAAD)
        } catch {
            throw VaultError(
                .corrupt, "the key of photo \(row.record.id) cannot be unwrapped: the catalog row is damaged")
        }
        let wrapped: [UInt8]
        if let album {
            wrapped = KeyWrap.wrap(
                photoKey, with: album.key, aad: Self.albumPhotoKeyAAD(albumID: album.id, photoID: row.record.id))
        } else {
            wrapped = KeyWrap.wrap(photoKey, with: master, aad: Array(row.record.id.utf8))
        }
        // The record follows the key: sealed under the album's row key inside it, the vault's
        // outside. Sealed first, while the row still names the album whose key opens it.
        try reseal(db, row.record.id, toAlbum: .some(album?.id)) { _ in }
        try db.execute(
            sql: "UPDATE photo SET wrappedKey = ?, privateAlbumId = ?, modifiedDate = ? WHERE id = ?",
            arguments: [Data(wrapped), album?.id, Self.now(), row.record.id])
    }
}
