import Foundation
import GRDB
import LocafotoErrors
import LocafotoQuery

extension Catalog {
    /// Migration "v3-derived": `photo.derivedFrom`, the photo a filtered or compressed copy was
    /// made from (`locafoto filter`, `locafoto compress`). NULL for every photo before, so a
    /// vault of an earlier version migrates without any change to its rows. Deleting the
    /// original keeps the copy and clears its link (ON DELETE SET NULL).
    static func registerDerived(_ m: inout DatabaseMigrator) {
        m.registerMigration("v3-derived") { db in
            try db.execute(
                sql: """
                    ALTER TABLE photo ADD COLUMN derivedFrom TEXT REFERENCES photo (id) ON DELETE SET NULL;
                    CREATE INDEX photo_on_derivedFrom ON photo (derivedFrom) WHERE derivedFrom IS NOT NULL;
                    """)
        }
    }
}

/// How a photo made from another one enters the vault (`Vault.addDerived`).
public enum DerivedPlacement: Sendable, Equatable {
    /// A filtered copy: linked to the original, in the same albums, with its tags and capture date.
    case beside
    /// A compressed copy in this album only (created when missing), linked to the original, with
    /// its tags and capture date. Refused for a photo of a private album (the copy would leave it).
    case inAlbum(String)
    /// Takes the original's place: its albums (and covers), tags, favourite and hidden marks,
    /// capture and import dates, and the links of copies made from it; then the original is deleted.
    case replacing
}

extension Vault {
    /// Adds `bytes` (an image) as a photo made from `original`, placed as `placement` says.
    /// The new photo is committed first and completed in one catalog transaction; should that
    /// fail, it is deleted again. With `.replacing`, the original is deleted only after the
    /// replacement is complete: a crash in between leaves both, never neither.
    public func addDerived(_ bytes: [UInt8], from original: String, name: String?, placement: DerivedPlacement) throws
        -> PhotoRecord
    {
        let master = try requireMasterKey()
        let source = try row(matching: original)
        if case .inAlbum(let album) = placement, let p = source.privateAlbumId {
            let name = try readCatalog { try Self.albumName($0, p) }
            throw VaultError(
                .conflict,
                "photo \(source.record.id) is in the private album \"\(name)\"; a copy in \"\(album)\" would leave its protection (replace it instead)"
            )
        }
        if case .inAlbum(let album) = placement, (try? self.album(album)) == nil {
            try createAlbum(named: album)
        }
        let importer = try beginImport(name: name)
        let added: PhotoRecord
        do {
            try importer.write(bytes)
            added = try importer.finish()
        } catch {
            importer.abort()
            throw error
        }
        let old = source.record.id
        let new = added.id
        do {
            try writeCatalog("could not link the new photo to \(old)") { db in
                let replacing = placement == .replacing
                try db.execute(
                    sql: """
                        UPDATE photo SET derivedFrom = ?, importDate = CASE WHEN ? THEN ? ELSE importDate END,
                            isFavorite = CASE WHEN ? THEN ? ELSE isFavorite END, isHidden = CASE WHEN ? THEN ? ELSE isHidden END
                        WHERE id = ?
                        """,
                    arguments: [
                        replacing ? nil : old, replacing, source.record.importDate,
                        replacing, source.record.isFavorite, replacing, source.record.isHidden, new,
                    ])
                try reseal(db, new) { f in
                    f.captureDate = source.record.captureDate.map(CatalogSeal.Fields.databaseText)
                    f.tags = Array(Set(f.tags).union(source.record.tags)).sorted(by: Self.tagOrder)
                }
                let albums: [AlbumRow]
                if case .inAlbum(let name) = placement {
                    albums = [try Self.findAlbum(db, name)]
                } else {
                    albums = try AlbumRow.fetchAll(
                        db,
                        sql:
                            "SELECT album.* FROM albumView AS album JOIN albumPhoto ON albumPhoto.albumId = album.id WHERE albumPhoto.photoId = ?",
                        arguments: [old])
                }
                guard let newRow = try PhotoRow.fetchOne(db, id: new) else {
                    throw VaultError(.io, "the new photo vanished")
                }
                for album in albums {
                    // Fetched again: once in a private album, the row's key wrapping has changed.
                    let current = try PhotoRow.fetchOne(db, id: new) ?? newRow
                    _ = try addMembers(db, [current], to: album, master: master, leaving: nil)
                }
                if replacing {
                    try db.execute(
                        sql: "UPDATE album SET coverPhotoId = ? WHERE coverPhotoId = ?", arguments: [new, old])
                    try db.execute(
                        sql: "UPDATE photo SET derivedFrom = ? WHERE derivedFrom = ?", arguments: [new, old])
                }
            }
        } catch {
            _ = try? deletePhotos(.ids([new]))
            throw error
        }
        if placement == .replacing { _ = try deletePhotos(.ids([old])) }
        return try photo(matching: new)
    }

    /// Photos made from `id` (filtered or compressed copies still in the vault), oldest first.
    public func derivedPhotos(of id: String) throws -> [String] {
        let source = try row(matching: id)
        return try readCatalog { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM photo WHERE derivedFrom = ? ORDER BY importDate, id",
                arguments: [source.record.id])
        }
    }
}
