import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoQuery
import Synchronization

/// An album as listed (seed 000 `Album`: id, name, createdDate, coverPhotoID).
public struct AlbumInfo: Codable, Sendable, Equatable, Identifiable {
    /// Lowercase UUID string.
    public var id: String
    public var name: String
    public var createdDate: Date
    /// The cover photo (always a member). Nil when unset, and for a locked private album.
    public var coverPhotoID: String?
    /// Photos in the album. Nil for a locked private album.
    public var photoCount: Int?
    /// Has its own passphrase (see `Vault.unlockAlbum`).
    public var isPrivate: Bool
    /// Private and not unlocked in this `Vault` instance: its photos are invisible.
    public var isLocked: Bool

    // The control API's names (control-api.md, "Names"); the Swift names stay seed 000's.
    private enum CodingKeys: String, CodingKey {
        case id, name, photoCount
        case createdDate = "createdAt"
        case coverPhotoID = "coverPhoto"
        case isPrivate = "private"
        case isLocked = "locked"
    }
}

/// A row of `album` (migration v2-organisation).
struct AlbumRow: Codable, FetchableRecord, Sendable {
    var id: String
    var name: String
    var nameKey: String
    var createdDate: Date
    var coverPhotoId: String?
    var isPrivate: Bool
    var wrappedAlbumKey: Data?
    var kdfAlgorithm: String?
    var kdfSalt: Data?
    var kdfOpsLimit: Int64?
    var kdfMemLimit: Int64?
}

/// Albums: named sets of photos. Membership is the `albumPhoto` join table, so a photo can be in
/// several albums ("copy"), except a photo of a private album, which is in that album only.
/// Names are unique compared case-insensitively (after Unicode NFC normalisation); albums are
/// found by name (any case) or ID. Every operation is one transaction: all or nothing.
/// Everything requires the vault unlocked; changing a private album requires it unlocked too.
extension Vault {
    public static let maxAlbumNameLength = 100

    // MARK: - Listing

    /// All albums, by name (case-insensitive).
    public func albums() throws -> [AlbumInfo] {
        _ = try requireMasterKey()
        return try readCatalog { db in
            try AlbumRow.fetchAll(db, sql: "SELECT * FROM albumView ORDER BY nameKey").map { try albumInfo(db, $0) }
        }
    }

    /// One album, by name (any case) or ID.
    public func album(_ album: String) throws -> AlbumInfo {
        _ = try requireMasterKey()
        return try readCatalog { db in try albumInfo(db, Self.findAlbum(db, album)) }
    }

    /// The albums a photo is in (ID or unique prefix), by name.
    public func albums(containing photo: String) throws -> [AlbumInfo] {
        let row = try self.row(matching: photo)
        return try readCatalog { db in
            try AlbumRow.fetchAll(
                db,
                sql:
                    "SELECT album.* FROM albumView AS album JOIN albumPhoto ON albumPhoto.albumId = album.id WHERE albumPhoto.photoId = ? ORDER BY album.nameKey",
                arguments: [row.record.id]
            ).map { try albumInfo(db, $0) }
        }
    }

    func albumInfo(_ db: Database, _ row: AlbumRow) throws -> AlbumInfo {
        let locked = row.isPrivate && unlockedAlbums.withLock { $0[row.id] == nil }
        let count =
            locked
            ? nil : try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM albumPhoto WHERE albumId = ?", arguments: [row.id])
        return AlbumInfo(
            id: row.id, name: row.name, createdDate: row.createdDate, coverPhotoID: locked ? nil : row.coverPhotoId,
            photoCount: count, isPrivate: row.isPrivate, isLocked: locked)
    }

    // MARK: - Creating, renaming, deleting

    /// Creates an album. With a `passphrase` the album is private (see PrivateAlbums.swift): it
    /// gets its own key, protected by Argon2id of that passphrase with `kdf`, and is unlocked in
    /// this instance on return. Throws `albumExists` (same name in any case) or `invalidArgument`
    /// (name empty, over 100 characters, control characters; empty passphrase).
    @discardableResult
    public func createAlbum(
        named name: String, passphrase: SecretBytes? = nil, kdf: PasswordKDF.Parameters = .moderate
    ) throws -> AlbumInfo {
        let master = try requireMasterKey()
        let name = try Self.validatedName(name, what: "album name", maxLength: Self.maxAlbumNameLength)
        let key = Self.nameKey(name)
        let id = UUID().uuidString.lowercased()
        try readCatalog { db in try Self.refuseExistingName(db, key, except: nil) }
        var secret: (key: SecretBytes, wrapped: [UInt8], salt: [UInt8])?
        if let passphrase {
            guard passphrase.count > 0 else {
                throw VaultError(.invalidArgument, "a private album needs a non-empty passphrase")
            }
            guard kdf.isWithinBounds else {
                throw VaultError(
                    .invalidArgument,
                    "Argon2id parameters are out of bounds (ops \(kdf.opsLimit), memory \(kdf.memLimit))")
            }
            secret = try makeAlbumKey(albumID: id, passphrase: passphrase, kdf: kdf, master: master)
        }
        try writeCatalog("could not create the album \"\(name)\"") { db in
            try Self.refuseExistingName(db, key, except: nil)
            try db.execute(
                sql: """
                    INSERT INTO album (id, name, nameKey, sealedName, createdDate, isPrivate, wrappedAlbumKey, kdfAlgorithm,
                        kdfSalt, kdfOpsLimit, kdfMemLimit)
                    VALUES (?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, try keyRing.blindNameKey(key), try keyRing.sealAlbumName(name, albumID: id), Self.now(),
                    secret != nil, secret.map { Data($0.wrapped) },
                    secret != nil ? VaultKeyRow.kdfAlgorithmName : nil, secret.map { Data($0.salt) },
                    secret != nil ? Int64(kdf.opsLimit) : nil, secret != nil ? Int64(kdf.memLimit) : nil,
                ])
        }
        if let secret {
            unlockedAlbums.withLock { $0[id] = secret.key }
            keyRing.unlockAlbum(id, albumKey: secret.key)
        }
        return try readCatalog { db in try albumInfo(db, Self.findAlbum(db, id)) }
    }

    /// Renames an album (a change of case only is allowed). Same rules as `createAlbum`.
    @discardableResult
    public func renameAlbum(_ album: String, to newName: String) throws -> AlbumInfo {
        _ = try requireMasterKey()
        let name = try Self.validatedName(newName, what: "album name", maxLength: Self.maxAlbumNameLength)
        let key = Self.nameKey(name)
        return try writeCatalog("could not rename the album \"\(album)\"") { db in
            let row = try Self.findAlbum(db, album)
            if row.isPrivate { _ = try requireAlbumKey(row) }
            try Self.refuseExistingName(db, key, except: row.id)
            try db.execute(
                sql: "UPDATE album SET sealedName = ?, nameKey = ? WHERE id = ?",
                arguments: [try keyRing.sealAlbumName(name, albumID: row.id), try keyRing.blindNameKey(key), row.id])
            return try albumInfo(db, Self.findAlbum(db, row.id))
        }
    }

    /// Deletes an album. Its photos stay in the vault (a private album's photos get their keys
    /// wrapped under the master key again, so this needs the album unlocked) — unless
    /// `deletePhotos` is true: then they are deleted for real (from every album; rows, keys and
    /// files, as `deletePhotos(_:)` does). Deleting a private album *with* its photos works while
    /// it is locked: it destroys what the passphrase protects without reading it.
    /// Returns the IDs of the deleted photos.
    @discardableResult
    public func deleteAlbum(_ album: String, deletePhotos: Bool = false) throws -> [String] {
        let master = try requireMasterKey()
        var albumID = ""
        let deleted = try writeCatalog("could not delete the album \"\(album)\"") { db -> [DeletedPhoto] in
            let row = try Self.findAlbum(db, album)
            albumID = row.id
            let members = try PhotoRow.fetchAll(
                db,
                sql:
                    "\(PhotoRow.select) JOIN albumPhoto ON albumPhoto.photoId = photo.id WHERE albumPhoto.albumId = ? ORDER BY photo.id",
                arguments: [row.id])
            var deleted: [DeletedPhoto] = []
            if deletePhotos {
                deleted = try deletePhotoRows(db, members)
            } else if row.isPrivate {
                _ = try requireAlbumKey(row)
                try db.execute(sql: "DELETE FROM albumPhoto WHERE albumId = ?", arguments: [row.id])
                for member in members { try rewrapPhotoKey(db, member, master: master, to: nil) }
            }
            try db.execute(sql: "UPDATE album SET coverPhotoId = NULL WHERE id = ?", arguments: [row.id])
            if row.wrappedAlbumKey != nil {
                try db.execute(
                    sql: "UPDATE album SET wrappedAlbumKey = zeroblob(length(wrappedAlbumKey)) WHERE id = ?",
                    arguments: [row.id])
            }
            try db.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [row.id])
            return deleted
        }
        unlockedAlbums.withLock { $0[albumID] = nil }
        try removeDeletedFiles(deleted)
        return deleted.map(\.id)
    }

    // MARK: - Membership

    /// Adds photos to an album; they stay in the albums they are in (a copy, not a move). Photos
    /// already in it are skipped. Returns how many were added. A photo of a private album cannot
    /// be added to another album, and a photo in any album cannot be added to a private one
    /// (`conflict`; move it instead).
    @discardableResult
    public func addPhotos(_ selection: PhotoSelection, toAlbum album: String) throws -> Int {
        let master = try requireMasterKey()
        return try writeCatalog("could not add photos to the album \"\(album)\"") { db in
            let target = try Self.findAlbum(db, album)
            let rows = try resolve(selection, db)
            return try addMembers(db, rows, to: target, master: master, leaving: nil)
        }
    }

    /// Copies photos of album `from` into album `to`: they must all be in `from` (`conflict`
    /// otherwise) and stay there. Returns how many were added to `to`.
    @discardableResult
    public func copyPhotos(_ selection: PhotoSelection, fromAlbum source: String, toAlbum target: String) throws -> Int
    {
        let master = try requireMasterKey()
        return try writeCatalog("could not copy photos to the album \"\(target)\"") { db in
            let from = try Self.findAlbum(db, source)
            let to = try Self.findAlbum(db, target)
            let rows = try resolve(selection, db)
            try requireMembers(db, rows, of: from)
            return try addMembers(db, rows, to: to, master: master, leaving: nil)
        }
    }

    /// Moves photos from album `from` to album `to`: they must all be in `from` (`conflict`
    /// otherwise); they leave it and join `to` (if not already there). Moving is how a photo
    /// enters or leaves a private album while in another. Returns how many were moved.
    @discardableResult
    public func movePhotos(_ selection: PhotoSelection, fromAlbum source: String, toAlbum target: String) throws -> Int
    {
        let master = try requireMasterKey()
        return try writeCatalog("could not move photos to the album \"\(target)\"") { db in
            let from = try Self.findAlbum(db, source)
            let to = try Self.findAlbum(db, target)
            guard from.id != to.id else {
                throw VaultError(.invalidArgument, "cannot move photos from the album \"\(from.name)\" to itself")
            }
            let rows = try resolve(selection, db)
            try requireMembers(db, rows, of: from)
            _ = try addMembers(db, rows, to: to, master: master, leaving: from)
            return rows.count
        }
    }

    /// Takes photos out of an album (they stay in the vault). They must all be in it
    /// (`conflict` otherwise). Photos leaving a private album get their keys wrapped under the
    /// master key again. Returns how many were removed.
    @discardableResult
    public func removePhotos(_ selection: PhotoSelection, fromAlbum album: String) throws -> Int {
        let master = try requireMasterKey()
        return try writeCatalog("could not remove photos from the album \"\(album)\"") { db in
            let from = try Self.findAlbum(db, album)
            if from.isPrivate { _ = try requireAlbumKey(from) }
            let rows = try resolve(selection, db)
            try requireMembers(db, rows, of: from)
            for row in rows {
                try db.execute(
                    sql: "DELETE FROM albumPhoto WHERE albumId = ? AND photoId = ?",
                    arguments: [from.id, row.record.id])
                if from.isPrivate { try rewrapPhotoKey(db, row, master: master, to: nil) }
            }
            return rows.count
        }
    }

    /// Sets the album's cover to a photo in it (`conflict` if it is not a member), or clears it
    /// with nil. Removing the photo from the album (or deleting it) clears the cover.
    @discardableResult
    public func setCover(_ photo: String?, ofAlbum album: String) throws -> AlbumInfo {
        _ = try requireMasterKey()
        return try writeCatalog("could not set the cover of the album \"\(album)\"") { db in
            let row = try Self.findAlbum(db, album)
            if row.isPrivate { _ = try requireAlbumKey(row) }
            var cover: String?
            if let photo {
                let member = try resolve(.ids([photo]), db)[0]
                try requireMembers(db, [member], of: row)
                cover = member.record.id
            }
            try db.execute(sql: "UPDATE album SET coverPhotoId = ? WHERE id = ?", arguments: [cover, row.id])
            return try albumInfo(db, Self.findAlbum(db, row.id))
        }
    }

    // MARK: - Helpers

    /// Adds `rows` to `target`; with `leaving`, they leave that album first (a move). Checks every
    /// photo before changing anything and reports all conflicts at once.
    func addMembers(
        _ db: Database, _ rows: [PhotoRow], to target: AlbumRow, master: SecretBytes, leaving source: AlbumRow?
    ) throws -> Int {
        let targetKey = target.isPrivate ? try requireAlbumKey(target) : nil
        if let source, source.isPrivate { _ = try requireAlbumKey(source) }
        var problems: [String] = []
        for row in rows {
            let id = row.record.id
            if let inPrivate = row.privateAlbumId, inPrivate != source?.id, inPrivate != target.id {
                let name = try Self.albumName(db, inPrivate)
                problems.append("photo \(id) is in the private album \"\(name)\" (move it out of that album instead)")
            } else if target.isPrivate, row.privateAlbumId != target.id {
                let others = try String.fetchAll(
                    db,
                    sql:
                        "SELECT album.name FROM albumPhoto JOIN albumView AS album ON album.id = albumPhoto.albumId WHERE albumPhoto.photoId = ? AND albumPhoto.albumId IS NOT ? ORDER BY album.nameKey",
                    arguments: [id, source?.id])
                if !others.isEmpty {
                    problems.append(
                        "photo \(id) is also in \(others.map { "\"\($0)\"" }.joined(separator: ", ")) and a photo of a private album can be in no other album (remove it from those first)"
                    )
                }
            }
        }
        guard problems.isEmpty else {
            throw VaultError(.conflict, "nothing was changed: " + problems.joined(separator: "; "))
        }
        var added = 0
        for row in rows {
            let id = row.record.id
            if let source {
                try db.execute(
                    sql: "DELETE FROM albumPhoto WHERE albumId = ? AND photoId = ?", arguments: [source.id, id])
            }
            // Key wrapping follows the private album the photo ends up in (or the master key).
            let endsIn: String? = target.isPrivate ? target.id : nil
            if row.privateAlbumId != endsIn {
                try rewrapPhotoKey(db, row, master: master, to: targetKey.map { (target.id, $0) })
            }
            try db.execute(
                sql: "INSERT OR IGNORE INTO albumPhoto (albumId, photoId, addedDate) VALUES (?, ?, ?)",
                arguments: [target.id, id, Self.now()])
            added += db.changesCount
        }
        return added
    }

    /// `conflict` unless every row is in `album`.
    private func requireMembers(_ db: Database, _ rows: [PhotoRow], of album: AlbumRow) throws {
        var missing: [String] = []
        for row in rows {
            let member =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM albumPhoto WHERE albumId = ? AND photoId = ?)",
                    arguments: [album.id, row.record.id]) ?? false
            if !member { missing.append(row.record.id) }
        }
        guard missing.isEmpty else {
            throw VaultError(
                .conflict,
                "nothing was changed: \(missing.count == 1 ? "photo" : "photos") \(Self.list(missing)) \(missing.count == 1 ? "is" : "are") not in the album \"\(album.name)\""
            )
        }
    }

    static func albumName(_ db: Database, _ id: String) throws -> String {
        try String.fetchOne(db, sql: "SELECT name FROM albumView WHERE id = ?", arguments: [id]) ?? id
    }

    /// The album whose name matches `ref` in any case, else whose ID is `ref`; `albumNotFound`.
    static func findAlbum(_ db: Database, _ ref: String) throws -> AlbumRow {
        let trimmed = ref.trimmingCharacters(in: .whitespaces)
        if let row = try AlbumRow.fetchOne(
            db, sql: "SELECT * FROM albumView WHERE nameKey = ?", arguments: [nameKey(trimmed)])
        {
            return row
        }
        if let row = try AlbumRow.fetchOne(
            db, sql: "SELECT * FROM albumView WHERE id = ?", arguments: [trimmed.lowercased()])
        {
            return row
        }
        let names = try String.fetchAll(db, sql: "SELECT name FROM albumView ORDER BY nameKey LIMIT 11")
        let known =
            names.isEmpty
            ? "there are no albums yet; create one first"
            : "albums: " + names.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")
                + (names.count > 10 ? ", ..." : "")
        throw VaultError(.albumNotFound, "no album named \"\(ref)\" (\(known))")
    }

    private static func refuseExistingName(_ db: Database, _ key: String, except id: String?) throws {
        if let other = try AlbumRow.fetchOne(db, sql: "SELECT * FROM albumView WHERE nameKey = ?", arguments: [key]),
            other.id != id
        {
            throw VaultError(
                .albumExists,
                "an album named \"\(other.name)\" already exists (names are compared ignoring case); choose another name"
            )
        }
    }

    /// Case-insensitive identity of a name: NFC, lowercased.
    static func nameKey(_ name: String) -> String { name.precomposedStringWithCanonicalMapping.lowercased() }

    /// `name` without surrounding spaces; `invalidArgument` when empty, longer than `maxLength`
    /// characters, or with control, line/paragraph separator or bidirectional-override characters.
    static func validatedName(_ raw: String, what: String, maxLength: Int) throws -> String {
        let name = raw.trimmingCharacters(in: CharacterSet.whitespaces.subtracting(CharacterSet(charactersIn: "\t")))
        guard !name.isEmpty else {
            throw VaultError(.invalidArgument, "the \(what) is empty; give 1 to \(maxLength) characters")
        }
        if let bad = name.unicodeScalars.first(where: isForbiddenInName) {
            throw VaultError(
                .invalidArgument,
                "the \(what) \"\(Self.printable(name))\" contains the control character U+\(String(format: "%04X", bad.value)); remove it"
            )
        }
        guard name.count <= maxLength else {
            throw VaultError(
                .invalidArgument, "the \(what) is \(name.count) characters long; at most \(maxLength) are allowed")
        }
        return name.precomposedStringWithCanonicalMapping
    }

    private static func isForbiddenInName(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate: return true
        default: return (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value)
        }
    }

    /// For messages: control characters shown as `?`.
    static func printable(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { isForbiddenInName($0) ? "?" : $0 }))
    }

    static func list(_ ids: [String], max: Int = 10) -> String {
        ids.prefix(max).joined(separator: ", ") + (ids.count > max ? " and \(ids.count - max) more" : "")
    }

    /// A catalog write transaction; SQLite errors become `io` (or `conflict` for a constraint).
    func writeCatalog<T>(_ what: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try db.write(body)
        } catch let e as VaultError {
            throw e
        } catch let e as DatabaseError where e.resultCode == .SQLITE_CONSTRAINT {
            throw VaultError(.conflict, what + ": the change breaks a catalog rule", cause: e)
        } catch {
            throw VaultError.wrap(error, what)
        }
    }
}
