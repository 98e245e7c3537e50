import Foundation
import GRDB
import LocafotoFormats

/// The agent's own database (`agent.sqlite`): peers, inbox, settings. Separate from the vault
/// catalog because the agent needs it while the vault is locked.
public final class AgentStore: Sendable {
    package let db: DatabaseQueue

    public init(path: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(5)
        // WAL with synchronous=NORMAL: every commit stays atomic and consistent; a power cut may
        // forget the last status updates, never corrupt the inbox. Saves several fsyncs per item.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // What an import removes from a record (`recordItems`) is overwritten, not left in
            // free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        db = try DatabaseQueue(path: path, configuration: config)
        _ = chmod(path, 0o600)
        try Self.migrator.migrate(db)
        // The names v6-forget-imported blanked must leave the file, the WAL included. Outside
        // the migration (VACUUM cannot run in a transaction), so a VACUUM that fails (it needs
        // the database's size again in free space) is tried again at the next start.
        if try setting(Self.vacuumPending) != nil {
            do {
                try db.vacuum()
                checkpoint()
                try db.write {
                    try $0.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [Self.vacuumPending])
                }
            } catch {}
        }
    }

    /// An item's status `imported` as the migrations wrote it (a migration stays as it ran,
    /// whatever the record types become; `OfferItemRecord.Status` in LocafotoReceiving).
    private static let importedStatus = "imported"

    /// Set by a migration that blanked text: `init` VACUUMs until it succeeds.
    package static let vacuumPending = "vacuumPending"

    package static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "peer") { t in
                t.primaryKey("fingerprint", .text)
                t.column("publicKey", .blob).notNull()
                t.column("name", .text).notNull()
                t.column("trust", .text).notNull()
                t.column("firstSeen", .datetime).notNull()
                t.column("lastSeen", .datetime).notNull()
                t.column("lastAddress", .text)
            }
            try db.create(table: "offer") { t in
                t.primaryKey("id", .text)
                t.column("senderFingerprint", .text).notNull().indexed()
                t.column("senderName", .text).notNull()
                t.column("senderKey", .blob).notNull()
                t.column("receivedAt", .datetime).notNull()
                t.column("expiresAt", .datetime).notNull()
                t.column("state", .text).notNull().indexed()
                t.column("itemCount", .integer).notNull()
                t.column("totalBytes", .integer).notNull()
                t.column("decidedAt", .datetime)
                t.column("message", .text)
            }
            try db.create(table: "offerItem") { t in
                t.column("offerId", .text).notNull().references("offer", onDelete: .cascade)
                t.column("idx", .integer).notNull()
                t.column("itemId", .text).notNull()
                t.column("name", .text).notNull()
                t.column("kind", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("hash", .text).notNull()
                t.column("status", .text).notNull().indexed()
                t.column("photoId", .text)
                t.column("errorCode", .integer)
                t.column("errorMessage", .text)
                t.column("spoolPath", .text)
                t.column("bundleHeader", .blob)
                t.primaryKey(["offerId", "idx"])
            }
            try db.create(table: "setting") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        m.registerMigration("v2-resume") { db in
            try db.alter(table: "offerItem") { t in t.add(column: "startJSON", .blob) }
            try db.create(table: "outgoing") { t in
                t.primaryKey("id", .text)
                t.column("offerId", .text).notNull().unique()
                t.column("peerFingerprint", .text).notNull()
                t.column("peerName", .text).notNull()
                t.column("state", .text).notNull().indexed()
                t.column("message", .text)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("items", .blob).notNull()
            }
        }
        m.registerMigration("v3-relay") { db in
            try db.alter(table: "offer") { t in
                t.add(column: "viaFingerprint", .text)
                t.add(column: "viaName", .text)
            }
            try db.alter(table: "outgoing") { t in
                t.add(column: "relay", .blob)
            }
        }
        registerPreviewMigration(&m)
        m.registerMigration("v5-relayed-peers") { db in
            // Rows from before cannot tell; they keep being listed as they were.
            try db.alter(table: "peer") { t in t.add(column: "metDirectly", .boolean).notNull().defaults(to: true) }
        }
        m.registerMigration("v6-forget-imported") { db in
            // As `recordItems` does from now on; `init` then VACUUMs.
            try db.execute(
                sql: """
                    UPDATE offerItem SET name = '', hash = '', bundleHeader = NULL, startJSON = NULL, spoolPath = NULL, errorMessage = NULL
                    WHERE status = ?
                    """,
                arguments: [Self.importedStatus])
            if try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM offerItem WHERE status = ?",
                arguments: [Self.importedStatus]) ?? 0 > 0
            {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO setting(key, value) VALUES (?, '1')",
                    arguments: [AgentStore.vacuumPending])
            }
        }
        m.registerMigration("v7-localsend") { db in
            // LocalSend devices this node has met (LocafotoLocalSendServer): a trust class of
            // their own, named by the SHA-256 of their TLS certificate, apart from our peers.
            try db.create(table: "localSendPeer") { t in
                t.primaryKey("fingerprint", .text)
                t.column("alias", .text).notNull().indexed()
                t.column("deviceModel", .text)
                t.column("deviceType", .text)
                t.column("trust", .text).notNull()
                t.column("firstSeen", .datetime).notNull()
                t.column("lastSeen", .datetime).notNull()
                t.column("lastAddress", .text)
            }
        }
        m.registerMigration("v8-localsend-port") { db in
            // The port a LocalSend device serves on (its `info.port`), to send to it again there.
            try db.alter(table: "localSendPeer") { t in t.add(column: "lastPort", .integer) }
        }
        return m
    }

    /// Copies the WAL into the database and empties it, so that what `recordItems` removed is
    /// gone from both files (secure_delete overwrote it in the database's pages; older page
    /// images stay in the WAL until this). Best effort: a busy database keeps it for next time.
    public func checkpoint() {
        _ = try? db.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    }

    // MARK: settings

    public func setting(_ key: String) throws -> String? {
        try db.read { try String.fetchOne($0, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key]) }
    }

    public func setSetting(_ key: String, _ value: String) throws {
        try db.write {
            try $0.execute(
                sql:
                    "INSERT INTO setting(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }

    package static func registerPreviewMigration(_ m: inout DatabaseMigrator) {
        m.registerMigration("v4-preview") { db in
            try db.create(table: "offerPreview") { t in
                t.column("offerId", .text).notNull().references("offer", onDelete: .cascade)
                t.column("idx", .integer).notNull()
                t.column("sealed", .blob).notNull()
                t.primaryKey(["offerId", "idx"])
            }
            try db.execute(
                sql: """
                    CREATE TRIGGER offerPreviewEnds AFTER UPDATE OF state ON offer
                    WHEN NEW.state IN ('rejected', 'expired', 'cancelled', 'failed', 'completed')
                    BEGIN DELETE FROM offerPreview WHERE offerId = NEW.id; END
                    """)
        }
    }
}
