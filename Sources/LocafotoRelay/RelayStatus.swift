import Foundation
import GRDB

/// What the relay holds and has done, for `locafoto relay status` and the control API.
public struct RelayStatus: Codable, Sendable, Equatable {
    /// The deposits held for one recipient.
    public struct Queue: Codable, Sendable, Equatable {
        public var recipient: Peer
        public var offers: Int
        public var items: Int
        public var bytes: Int64
        /// When the oldest deposit held for the recipient arrived.
        public var oldestAt: Date
    }

    /// A recipient, named like the agent's answers name peers (`{name, fingerprint}`); a relay
    /// knows only the fingerprint.
    public struct Peer: Codable, Sendable, Equatable {
        public var fingerprint: String
    }

    public struct Totals: Codable, Sendable, Equatable {
        public var offers: Int
        public var items: Int
        public var bytes: Int64
    }

    /// A deposit whose files turned out unreadable (kept out of the queue until its expiry).
    public struct Damaged: Codable, Sendable, Equatable {
        public var offer: String
        public var recipient: Peer
        public var problem: String
    }

    /// Every deposit held (damaged ones included: they still use space), by recipient.
    public var queues: [Queue]
    public var totals: Totals
    /// Deposits handed to their recipient (whatever the decision), and of those rejected.
    public var deliveries: Int
    public var rejected: Int
    /// Deposits dropped at their expiry.
    public var expired: Int
    /// Deposits whose files vanished while the relay was stopped.
    public var lost: Int
    /// Refused deposits and items, by `RefusalReason` raw value (every reason present).
    public var refusals: [String: Int]
    public var receiptsWaiting: Int
    public var damaged: [Damaged]
    public var limits: RelayLimits
    /// "open" or "allow-list".
    public var admission: String
    /// Senders on the allow-list (nil when open).
    public var allowed: Int?
}

extension RelayStore {
    public func status() throws -> RelayStatus {
        try db.read { db in
            let queues = try Row.fetchAll(
                db,
                sql: """
                    SELECT recipientFingerprint, COUNT(*) AS offers, SUM(itemCount) AS items, SUM(bytes) AS bytes,
                           MIN(createdAt) AS oldest
                    FROM deposit GROUP BY recipientFingerprint ORDER BY oldest
                    """
            ).map { r in
                RelayStatus.Queue(
                    recipient: RelayStatus.Peer(fingerprint: r["recipientFingerprint"]), offers: r["offers"],
                    items: r["items"], bytes: r["bytes"],
                    oldestAt: r["oldest"])
            }
            var counters: [String: Int] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT name, value FROM counter") { counters[r["name"]] = r["value"] }
            var refusals: [String: Int] = [:]
            for reason in RefusalReason.allCases { refusals[reason.rawValue] = counters[Counter.refusal(reason)] ?? 0 }
            let damaged = try DepositRow.filter(Column("damage") != nil).order(Column("createdAt")).fetchAll(db).map {
                RelayStatus.Damaged(
                    offer: $0.offerId, recipient: RelayStatus.Peer(fingerprint: $0.recipientFingerprint),
                    problem: $0.damage ?? "")
            }
            var allowed: Int?
            if case .allowList(let s) = admission { allowed = s.count }
            return RelayStatus(
                queues: queues,
                totals: RelayStatus.Totals(
                    offers: queues.reduce(0) { $0 + $1.offers }, items: queues.reduce(0) { $0 + $1.items },
                    bytes: queues.reduce(0) { $0 + $1.bytes }),
                deliveries: counters[Counter.deliveries] ?? 0, rejected: counters[Counter.rejected] ?? 0,
                expired: counters[Counter.expired] ?? 0, lost: counters[Counter.lost] ?? 0, refusals: refusals,
                receiptsWaiting: try ReceiptRow.fetchCount(db), damaged: damaged, limits: limits,
                admission: admission.mode, allowed: allowed)
        }
    }
}
