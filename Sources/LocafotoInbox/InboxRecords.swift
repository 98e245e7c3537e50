import Foundation
import GRDB
import LocafotoFormats
import LocafotoNode
import LocafotoPeers

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

/// The inbox in the agent's store: offers to this node and their items (one database queue,
/// each role's tables read and written by the role that owns them; the schema is
/// `AgentStore.migrator`).
extension AgentStore {
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

    /// An item's status alone (a LocalSend upload begun): one prepared statement, no fetch.
    public func setItemStatus(_ offerId: String, _ idx: Int, _ status: OfferItemRecord.Status) throws {
        try db.write { db in
            try db.cachedStatement(sql: "UPDATE offerItem SET status = ? WHERE offerId = ? AND idx = ?")
                .execute(arguments: [status.rawValue, offerId, idx])
        }
    }

    /// A receiver's group commit: items that began arriving (`receiving`, with the ITEM_START a
    /// resumed session must match) and items now in the vault (`imported`), in one transaction
    /// of prepared statements instead of a fetch and an update per item. What described an
    /// imported item goes: its name, content hash and headers now live sealed in the vault's
    /// catalog, and `agent.sqlite` is not encrypted (docs/usage.md "What the catalog shows without
    /// the passphrase"); its photo id stays.
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
        try end(.interrupted, dueAt: "decidedAt", before) { o in
            o.state = .failed
            o.message = "the sender did not resume the interrupted transfer in time"
        }
    }

    /// Marks pending offers past their expiry as expired; returns their ids.
    public func expireOffers(now: Date) throws -> [String] {
        try end(.pending, dueAt: "expiresAt", now) { o in
            o.state = .expired
            o.decidedAt = now
        }
    }

    /// The offers in `state` whose `dueAt` column is at or before `time`, changed by `change` in
    /// one transaction; returns their ids.
    private func end(
        _ state: OfferRecord.State, dueAt column: String, _ time: Date, _ change: (inout OfferRecord) -> Void
    ) throws -> [String] {
        try db.write { db in
            let due = try OfferRecord.filter(Column("state") == state.rawValue && Column(column) <= time).fetchAll(db)
            for var o in due {
                change(&o)
                try o.update(db)
            }
            return due.map(\.id)
        }
    }
}
