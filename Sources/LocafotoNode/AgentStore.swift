import Foundation
import GRDB
import LocafotoFormats

/// A peer this node has completed a handshake with (or been told to trust).
public struct PeerRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "peer"
    public enum Trust: String, Codable, Sendable { case known, trusted }

    public var fingerprint: String
    public var publicKey: Data
    public var name: String
    public var trust: Trust
    public var firstSeen: Date
    public var lastSeen: Date
    public var lastAddress: String?
    /// False for a sender known only from offers a relay handed on: its key is proven by its
    /// offer signature, but its name is the relay's word (messages.md "Relay") and this node has
    /// never run a handshake with it. `peers` lists it as `relayed`.
    public var metDirectly: Bool = true

    /// What `peers` shows: `trusted`, `known`, or `relayed` for a key met only through a relay.
    public var listedTrust: String {
        trust == .known && !metDirectly ? "relayed" : trust.rawValue
    }
}

/// An offer received from a peer, waiting in (or decided in) the inbox.
public struct OfferRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "offer"
    public enum State: String, Codable, Sendable {
        /// `interrupted`: accepted, but the session broke before every item arrived; the
        /// partial items stay spooled until the sender offers the same offer id again.
        /// `cancelled`: withdrawn by the sender, or its running receive stopped by this node's user.
        case pending, accepted, rejected, expired, completed, failed, interrupted, cancelled
    }

    public var id: String
    public var senderFingerprint: String
    public var senderName: String
    public var senderKey: Data
    public var receivedAt: Date
    public var expiresAt: Date
    public var state: State
    public var itemCount: Int
    public var totalBytes: Int64
    public var decidedAt: Date?
    public var message: String?
    /// The relay that delivered the offer (its handshake key); nil for a direct offer.
    public var viaFingerprint: String? = nil
    public var viaName: String? = nil

    package init(
        id: String, senderFingerprint: String, senderName: String, senderKey: Data, receivedAt: Date, expiresAt: Date,
        state: State, itemCount: Int, totalBytes: Int64, decidedAt: Date? = nil, message: String? = nil,
        viaFingerprint: String? = nil, viaName: String? = nil
    ) {
        self.id = id
        self.senderFingerprint = senderFingerprint
        self.senderName = senderName
        self.senderKey = senderKey
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.state = state
        self.itemCount = itemCount
        self.totalBytes = totalBytes
        self.decidedAt = decidedAt
        self.message = message
        self.viaFingerprint = viaFingerprint
        self.viaName = viaName
    }
}

/// One item of an incoming offer, and once received, what is needed to import it later
/// (the sealed photo key stays sealed to the node key until the vault is unlocked).
public struct OfferItemRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "offerItem"
    /// `queued`: verified, waiting for the vault to be unlocked; `needsKey`: a verified `.lfs`
    /// item waiting for the named key it needs (`errorMessage` names it).
    public enum Status: String, Codable, Sendable { case offered, receiving, queued, needsKey, imported, failed }

    public var offerId: String
    public var idx: Int
    public var itemId: String
    public var name: String
    public var kind: String
    public var size: Int64
    public var hash: String
    public var status: Status
    public var photoId: String?
    public var errorCode: Int?
    public var errorMessage: String?
    /// For queued items: the spool file and the verified bundle header (JSON).
    public var spoolPath: String?
    public var bundleHeader: Data?
    /// The ITEM_START (JSON) of an item being received: a resumed item must match it.
    public var startJSON: Data? = nil

    package init(
        offerId: String, idx: Int, itemId: String, name: String, kind: String, size: Int64, hash: String,
        status: Status, photoId: String? = nil, errorCode: Int? = nil, errorMessage: String? = nil,
        spoolPath: String? = nil, bundleHeader: Data? = nil, startJSON: Data? = nil
    ) {
        self.offerId = offerId
        self.idx = idx
        self.itemId = itemId
        self.name = name
        self.kind = kind
        self.size = size
        self.hash = hash
        self.status = status
        self.photoId = photoId
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.spoolPath = spoolPath
        self.bundleHeader = bundleHeader
        self.startJSON = startJSON
    }
}

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
                arguments: [OfferItemRecord.Status.imported.rawValue])
            if try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM offerItem WHERE status = ?",
                arguments: [OfferItemRecord.Status.imported.rawValue]) ?? 0 > 0
            {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO setting(key, value) VALUES (?, '1')",
                    arguments: [AgentStore.vacuumPending])
            }
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

    // MARK: peers

    public func peers() throws -> [PeerRecord] {
        try db.read { try PeerRecord.order(Column("name")).fetchAll($0) }
    }

    public func peer(_ fingerprint: String) throws -> PeerRecord? {
        try db.read { try PeerRecord.fetchOne($0, key: fingerprint) }
    }

    /// Records a completed handshake; keeps the trust level of a known peer. With `create` false only a peer already known is
    /// updated (nil otherwise): under policy `trusted` or `off` a stranger's handshake leaves no
    /// row behind, so fresh keys cannot grow the store. `direct` false records the original
    /// sender of a relayed offer: its name (`from.name`, not covered by the offer signature)
    /// never replaces the name of a peer met directly.
    @discardableResult
    public func sawPeer(
        fingerprint: Fingerprint, publicKey: [UInt8], name: String, address: String?, create: Bool = true,
        direct: Bool = true
    ) throws -> PeerRecord? {
        try db.write { db in
            let now = Date()
            if var p = try PeerRecord.fetchOne(db, key: fingerprint.description) {
                if direct || !p.metDirectly { p.name = name }
                if direct { p.metDirectly = true }
                p.lastSeen = now
                if let address { p.lastAddress = address }
                try p.update(db)
                return p
            }
            guard create else { return nil }
            let p = PeerRecord(
                fingerprint: fingerprint.description, publicKey: Data(publicKey), name: name, trust: .known,
                firstSeen: now, lastSeen: now, lastAddress: address, metDirectly: direct)
            try p.insert(db)
            return p
        }
    }

    public func setTrust(_ fingerprint: String, _ trust: PeerRecord.Trust) throws {
        try db.write { db in
            guard var p = try PeerRecord.fetchOne(db, key: fingerprint) else {
                throw AgentError(.notFound, "peer \(fingerprint) is not known yet")
            }
            p.trust = trust
            try p.update(db)
        }
    }

    public func forgetPeer(_ fingerprint: String) throws -> Bool {
        try db.write { try PeerRecord.deleteOne($0, key: fingerprint) }
    }

    // MARK: inbox

    /// Inserts an offer with its items and the previews that came with it, in one transaction:
    /// a reader (the inbox list, the web app, a test) never sees the offer without them.
    public func insertOffer(
        _ offer: OfferRecord, items: [OfferItemRecord], previews: [Int: [UInt8]] = [:]
    ) throws {
        try db.write { db in
            try offer.insert(db)
            for i in items { try i.insert(db) }
            try Self.insertPreviews(db, offer.id, previews)
        }
    }

    public func offers(states: [OfferRecord.State]? = nil) throws -> [OfferRecord] {
        try db.read { db in
            var q = OfferRecord.order(Column("receivedAt").desc)
            if let states { q = q.filter(states.map(\.rawValue).contains(Column("state"))) }
            return try q.fetchAll(db)
        }
    }

    public func offer(_ id: String) throws -> OfferRecord? {
        try db.read { try OfferRecord.fetchOne($0, key: id) }
    }

    public func items(of offerId: String) throws -> [OfferItemRecord] {
        try db.read { try OfferItemRecord.filter(Column("offerId") == offerId).order(Column("idx")).fetchAll($0) }
    }

    public func item(_ offerId: String, _ idx: Int) throws -> OfferItemRecord? {
        try db.read { try OfferItemRecord.fetchOne($0, key: ["offerId": offerId, "idx": idx]) }
    }

    /// Received items waiting for an unlock or a key.
    public func queuedItems() throws -> [OfferItemRecord] {
        try db.read {
            try OfferItemRecord.filter(
                [OfferItemRecord.Status.queued.rawValue, OfferItemRecord.Status.needsKey.rawValue].contains(
                    Column("status"))
            )
            .fetchAll($0)
        }
    }

    public func updateOffer(_ id: String, _ change: @Sendable (inout OfferRecord) -> Void) throws {
        try db.write { db in
            guard var o = try OfferRecord.fetchOne(db, key: id) else { return }
            change(&o)
            try o.update(db)
        }
    }

    public func updateItem(_ offerId: String, _ idx: Int, _ change: @Sendable (inout OfferItemRecord) -> Void) throws {
        try db.write { db in
            guard var i = try OfferItemRecord.fetchOne(db, key: ["offerId": offerId, "idx": idx]) else { return }
            change(&i)
            try i.update(db)
        }
    }

    /// A receiver's group commit: items that began arriving (`receiving`, with the ITEM_START a
    /// resumed session must match) and items now in the vault (`imported`), in one transaction
    /// of prepared statements instead of a fetch and an update per item. What described an
    /// imported item goes: its name, content hash and headers now live sealed in the vault's
    /// catalog, and `agent.sqlite` is not encrypted (README "What the catalog shows without the
    /// passphrase"); its photo id stays.
    public func recordItems(
        _ offerId: String, receiving: [(idx: Int, startJSON: Data)], imported: [(idx: Int, photo: String)]
    ) throws {
        guard !receiving.isEmpty || !imported.isEmpty else { return }
        try db.write { db in
            let begin = try db.cachedStatement(
                sql: "UPDATE offerItem SET status = ?, startJSON = ? WHERE offerId = ? AND idx = ?")
            for r in receiving {
                try begin.execute(arguments: [OfferItemRecord.Status.receiving.rawValue, r.startJSON, offerId, r.idx])
            }
            let done = try db.cachedStatement(
                sql: """
                    UPDATE offerItem SET status = ?, photoId = ?, name = '', hash = '', bundleHeader = NULL, startJSON = NULL,
                        spoolPath = NULL, errorMessage = NULL
                    WHERE offerId = ? AND idx = ?
                    """)
            for i in imported {
                try done.execute(arguments: [OfferItemRecord.Status.imported.rawValue, i.photo, offerId, i.idx])
            }
        }
    }

    /// Offers from `fingerprint` received since `since`, for rate limiting.
    /// Undecided offers from senders that are not trusted, and their items: what the inbox's
    /// global bounds count (fresh keys get around the per-peer limits, not these).
    public func pendingFromUntrusted() throws -> (offers: Int, items: Int) {
        try db.read { db in
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*), COALESCE(SUM(itemCount), 0) FROM offer WHERE state = ? AND senderFingerprint NOT IN (SELECT fingerprint FROM peer WHERE trust = ?)",
                arguments: [OfferRecord.State.pending.rawValue, PeerRecord.Trust.trusted.rawValue])
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    public func offerCount(from fingerprint: String, since: Date, states: [OfferRecord.State]? = nil) throws -> Int {
        try db.read { db in
            var q = OfferRecord.filter(Column("senderFingerprint") == fingerprint && Column("receivedAt") >= since)
            if let states { q = q.filter(states.map(\.rawValue).contains(Column("state"))) }
            return try q.fetchCount(db)
        }
    }

    /// At start: offers that were being received when the agent stopped are interrupted
    /// (their partial items stay spooled for the sender to resume).
    public func interruptUnfinished(now: Date) throws {
        try db.write { db in
            try db.execute(
                sql: "UPDATE offer SET state = ?, decidedAt = ?, message = ? WHERE state = ?",
                arguments: [
                    OfferRecord.State.interrupted.rawValue, now,
                    "interrupted: the agent stopped during the transfer; it resumes when the sender reconnects",
                    OfferRecord.State.accepted.rawValue,
                ])
        }
    }

    /// Interrupted offers not resumed since `before` fail; returns their ids (their spool goes).
    public func failInterrupted(before: Date) throws -> [String] {
        try db.write { db in
            let due = try OfferRecord.filter(
                Column("state") == OfferRecord.State.interrupted.rawValue && Column("decidedAt") <= before
            ).fetchAll(db)
            for var o in due {
                o.state = .failed
                o.message = "the sender did not resume the interrupted transfer in time"
                try o.update(db)
            }
            return due.map(\.id)
        }
    }

    /// Marks pending offers past their expiry as expired; returns their ids.
    public func expireOffers(now: Date) throws -> [String] {
        try db.write { db in
            let due = try OfferRecord.filter(
                Column("state") == OfferRecord.State.pending.rawValue && Column("expiresAt") <= now
            ).fetchAll(db)
            for var o in due {
                o.state = .expired
                o.decidedAt = now
                try o.update(db)
            }
            return due.map(\.id)
        }
    }
}
