import Foundation
import GRDB
import LocafotoFiles
import LocafotoQuery

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A photo removed from the catalog whose files are still to be unlinked.
struct DeletedPhoto: Sendable {
    var id: String
    var filePath: String
}

/// Deleting photos for real.
///
/// 1. One catalog transaction: the selection is resolved (all or nothing), each row's
///    `wrappedKey` is overwritten with zeros, then the rows are deleted (memberships, tags and
///    covers follow through foreign keys and triggers). The catalog connections run with
///    `PRAGMA secure_delete = ON`, so the freed b-tree space is zeroed too.
/// 2. After the commit: `photos/<2 hex>/<id>.loca` and, if present, the thumbnail
///    `thumbs/<2 hex>/<id>.loca` are unlinked and their directories fsynced.
/// 3. Best effort: a TRUNCATE checkpoint, so older page images in the WAL file (which still
///    hold the wrapped key) are not left in `catalog.sqlite-wal`.
///
/// A crash between 1 and 2 leaves files without rows: the open-time sweep (`Vault.open`)
/// removes them. Without their wrapped key they cannot be decrypted anyway. (The blocks of the
/// file system are not overwritten: on SSDs and copy-on-write file systems that cannot be
/// guaranteed from here; destroying the key is what makes the ciphertext unreadable.)
extension Vault {
    /// Deletes the selected photos: catalog rows, wrapped keys, LOCA files and thumbnails.
    /// Requires the vault unlocked (and private albums of selected photos unlocked). Returns
    /// the IDs deleted.
    @discardableResult
    public func deletePhotos(_ selection: PhotoSelection) throws -> [String] {
        _ = try requireMasterKey()
        let deleted = try writeCatalog("could not delete the photos") { db in
            try deletePhotoRows(db, try resolve(selection, db))
        }
        try removeDeletedFiles(deleted)
        return deleted.map(\.id)
    }

    /// Step 1, inside the caller's write transaction.
    func deletePhotoRows(_ db: Database, _ rows: [PhotoRow]) throws -> [DeletedPhoto] {
        let ids = rows.map(\.record.id)
        try Self.forEachChunk(ids) { chunk, marks in
            try db.execute(
                sql: "UPDATE photo SET wrappedKey = zeroblob(length(wrappedKey)) WHERE id IN (\(marks))",
                arguments: StatementArguments(chunk))
            try db.execute(sql: "DELETE FROM photo WHERE id IN (\(marks))", arguments: StatementArguments(chunk))
        }
        return rows.map { DeletedPhoto(id: $0.record.id, filePath: $0.filePath) }
    }

    /// Steps 2 and 3, after the commit.
    func removeDeletedFiles(_ deleted: [DeletedPhoto]) throws {
        guard !deleted.isEmpty else { return }
        try hooks.afterDeleteCommit?(deleted.map(\.id))
        var directories = Set<String>()
        for photo in deleted {
            for rel in [photo.filePath, Self.thumbnailPath(photo.id)] {
                let path = directory + "/" + rel
                if unlink(path) == 0 { directories.insert(String(path[..<path.lastIndex(of: "/")!])) }
            }
        }
        for dir in directories { try? disk.syncDirectory(dir) }
        _ = try? db.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    }

    /// Where a photo's thumbnail lives (if it has one).
    static func thumbnailPath(_ id: String) -> String { "thumbs/\(id.prefix(2))/\(id).loca" }
}
