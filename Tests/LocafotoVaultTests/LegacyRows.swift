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
            sql: "INSERT INTO photo (\(columns.joined(separator: ", "))) VALUES (\(marks))", arguments: StatementArguments(values))
    }
}
