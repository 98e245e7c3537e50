import Foundation
import GRDB

/// A committed deposit. The row is the durability point: a deposit directory without its row
/// is an orphan and is deleted at open.
struct DepositRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "deposit"

    var offerId: String
    var senderFingerprint: String
    var senderKey: Data
    var recipientFingerprint: String
    var recipientKey: Data
    /// Items and ciphertext bytes actually held (quotas count these).
    var itemCount: Int
    var bytes: Int64
    /// JSON array of the stored item indices.
    var storedIndices: String
    var createdAt: Date
    var expiresAt: Date
    /// Set when the deposit's files turned out unreadable: it leaves the queue, shows in
    /// `status()`, and is dropped at its expiry like any other deposit.
    var damage: String?
}

/// What became of a deposit, kept for its sender to collect (RECEIPTS).
struct ReceiptRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "receipt"

    var offerId: String
    var senderFingerprint: String
    var recipientKey: Data
    var state: String
    var decision: String?
    var signature: Data?
    /// JSON array of `ReceiptItem`.
    var items: String
    var at: Date
}

enum RelaySchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "deposit") { t in
                t.primaryKey("offerId", .text)
                t.column("senderFingerprint", .text).notNull().indexed()
                t.column("senderKey", .blob).notNull()
                t.column("recipientFingerprint", .text).notNull().indexed()
                t.column("recipientKey", .blob).notNull()
                t.column("itemCount", .integer).notNull()
                t.column("bytes", .integer).notNull()
                t.column("storedIndices", .text).notNull()
                t.column("createdAt", .datetime).notNull()
                t.column("expiresAt", .datetime).notNull().indexed()
                t.column("damage", .text)
            }
            try db.create(table: "receipt") { t in
                t.primaryKey("offerId", .text)
                t.column("senderFingerprint", .text).notNull().indexed()
                t.column("recipientKey", .blob).notNull()
                t.column("state", .text).notNull()
                t.column("decision", .text)
                t.column("signature", .blob)
                t.column("items", .text).notNull()
                t.column("at", .datetime).notNull().indexed()
            }
            // Deliveries, expiries and refusals by reason, for `status()`; they survive restarts.
            try db.create(table: "counter") { t in
                t.primaryKey("name", .text)
                t.column("value", .integer).notNull()
            }
        }
        return m
    }

    static func open(path: String) throws -> DatabasePool {
        var config = Configuration()
        config.busyMode = .timeout(5)
        // synchronous=FULL: a committed deposit row is the promise behind ITEM_RESULT `held`; it
        // must survive a power cut, not only a crash.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let pool = try DatabasePool(path: path, configuration: config)
        for suffix in ["", "-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
        try migrator.migrate(pool)
        return pool
    }

    static func bump(_ db: Database, _ name: String, by n: Int = 1) throws {
        try db.execute(
            sql:
                "INSERT INTO counter(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            arguments: [name, n])
    }
}
