import Foundation
import GRDB

@testable import LocafotoVault

extension PhotoRow {
    /// The row as versions before v4-sealed stored it, every field in clear: the migration tests
    /// build older catalogs with it.
    func insertClear(_ db: Database) throws {
        var columns: [String] = [
            "id", "name", "format", "originalSize", "encryptedSize", "contentHash", "captureDate", "importDate",
            "modifiedDate", "width", "height", "tags", "isFavorite", "isHidden", "albumId", "senderFingerprint",
            "senderName", "wrappedKey", "algorithm", "filePath",
        ]
        var values: [(any DatabaseValueConvertible)?] = [
            record.id, record.name, record.format, record.originalSize, record.encryptedSize, Data(record.contentHash),
            record.captureDate, record.importDate, modifiedDate, record.width, record.height,
            String(decoding: try JSONEncoder().encode(record.tags), as: UTF8.self), record.isFavorite, record.isHidden,
            albumId, record.senderFingerprint, record.senderName, Data(wrappedKey), Int(algorithm), filePath,
        ]
        if let d = record.derivedFrom {
            columns.append("derivedFrom")
            values.append(d)
        }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try db.execute(
            sql: "INSERT INTO photo (\(columns.joined(separator: ", "))) VALUES (\(marks))",
            arguments: StatementArguments(values))
    }
}

/// A vault at `<sandbox>/old` as an older version left it: a catalog migrated only up to
/// `migration`, holding `source`'s key record and `row` in clear (its photo file copied over).
/// `extra` runs in the same write transaction. Returns the vault's directory.
func makeOlderVault(
    _ sandbox: Sandbox, from source: Vault, row: PhotoRow, upTo migration: String,
    _ extra: (Database) throws -> Void = { _ in }
) throws -> String {
    let keyRow = try source.db.read { db in try VaultKeyRow.fetchOne(db)! }
    let old = sandbox.path + "/old"
    try FileManager.default.createDirectory(
        atPath: old + "/photos/" + row.record.id.prefix(2), withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: sandbox.vault + "/" + row.filePath, toPath: old + "/" + row.filePath)
    let queue = try DatabaseQueue(path: old + "/catalog.sqlite", configuration: Catalog.configuration())
    try Catalog.migrator.migrate(queue, upTo: migration)
    try queue.write { db in
        try keyRow.insert(db)
        try row.insertClear(db)
        try extra(db)
    }
    try queue.close()
    return old
}
