import Foundation
import GRDB
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoNode

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
}

/// The peers this node has met, in the agent's store (one database queue, each role's tables
/// read and written by the role that owns them; the schema is `AgentStore.migrator`).
extension AgentStore {
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
}
