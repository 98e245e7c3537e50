import Foundation
import GRDB
import LocafotoNode

/// A LocalSend device this node has met: named by the SHA-256 of its TLS certificate, a trust
/// class of its own ("LocalSend, not verified" until the user trusts that fingerprint).
public struct LocalSendPeerRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "localSendPeer"
    public enum Trust: String, Codable, Sendable { case known, trusted }

    /// The certificate's SHA-256, uppercase hex (64 digits).
    public var fingerprint: String
    public var alias: String
    public var deviceModel: String?
    public var deviceType: String?
    public var trust: Trust
    public var firstSeen: Date
    public var lastSeen: Date
    public var lastAddress: String?
    /// The port its LocalSend server listens on (nil: not said; 53317 is the usual one).
    public var lastPort: Int?

    /// How the inbox and the events name the sender: never mistaken for one of our fingerprints.
    public var inboxFingerprint: String { LocalSendPeerRecord.inboxFingerprint(fingerprint) }

    public static func inboxFingerprint(_ certificateFingerprint: String) -> String {
        "localsend:" + certificateFingerprint
    }
}

extension AgentStore {
    public func localSendPeers() throws -> [LocalSendPeerRecord] {
        try db.read { try LocalSendPeerRecord.order(Column("alias")).fetchAll($0) }
    }

    public func localSendPeer(_ fingerprint: String) throws -> LocalSendPeerRecord? {
        try db.read { try LocalSendPeerRecord.fetchOne($0, key: fingerprint) }
    }

    /// Devices known under `alias` with another certificate than `fingerprint`.
    public func localSendPeers(alias: String, other fingerprint: String) throws -> [LocalSendPeerRecord] {
        try db.read {
            try LocalSendPeerRecord.filter(Column("alias") == alias && Column("fingerprint") != fingerprint).fetchAll(
                $0)
        }
    }

    /// Records a device seen now (a trust level it has is kept).
    @discardableResult
    public func recordLocalSendPeer(
        fingerprint: String, alias: String, deviceModel: String?, deviceType: String?, address: String?, port: Int?,
        now: Date
    ) throws -> LocalSendPeerRecord {
        try db.write { db in
            if var p = try LocalSendPeerRecord.fetchOne(db, key: fingerprint) {
                p.alias = alias
                p.deviceModel = deviceModel
                p.deviceType = deviceType
                p.lastSeen = now
                if let address { p.lastAddress = address }
                if let port { p.lastPort = port }
                try p.update(db)
                return p
            }
            let p = LocalSendPeerRecord(
                fingerprint: fingerprint, alias: alias, deviceModel: deviceModel, deviceType: deviceType, trust: .known,
                firstSeen: now, lastSeen: now, lastAddress: address, lastPort: port)
            try p.insert(db)
            return p
        }
    }

    public func setLocalSendTrust(_ fingerprint: String, _ trust: LocalSendPeerRecord.Trust) throws -> Bool {
        try db.write { db in
            guard var p = try LocalSendPeerRecord.fetchOne(db, key: fingerprint) else { return false }
            p.trust = trust
            try p.update(db)
            return true
        }
    }

    public func forgetLocalSendPeer(_ fingerprint: String) throws -> Bool {
        try db.write { try LocalSendPeerRecord.deleteOne($0, key: fingerprint) }
    }
}
