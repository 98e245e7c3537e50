import Foundation
import GRDB
import LocafotoNode
import LocafotoPeers

/// Previews of offered items (protocol/messages.md "PREVIEW"), kept exactly as they arrived:
/// sealed to this node's X25519 key (libsodium sealed box), never as plaintext. Only an offer
/// still open keeps them: they go when it is rejected, expires, is cancelled or ends (a trigger,
/// whatever path changes the state), and with the offer's row.
extension AgentStore {
    /// Stores previews (item index → sealed box) of an offer already inserted.
    package func insertPreviews(_ offerId: String, _ previews: [Int: [UInt8]]) throws {
        guard !previews.isEmpty else { return }
        try db.write { try Self.insertPreviews($0, offerId, previews) }
    }

    static func insertPreviews(_ db: Database, _ offerId: String, _ previews: [Int: [UInt8]]) throws {
        guard !previews.isEmpty else { return }
        let insert = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO offerPreview(offerId, idx, sealed) VALUES (?, ?, ?)")
        for (idx, sealed) in previews { try insert.execute(arguments: [offerId, idx, Data(sealed)]) }
    }

    /// The sealed preview of one item, if the offer keeps one.
    package func preview(_ offerId: String, _ idx: Int) throws -> [UInt8]? {
        try db.read {
            try Data.fetchOne(
                $0, sql: "SELECT sealed FROM offerPreview WHERE offerId = ? AND idx = ?", arguments: [offerId, idx])
        }.map { [UInt8]($0) }
    }

    /// Indices of the items of `offerId` that have a preview.
    package func previewIndices(_ offerId: String) throws -> Set<Int> {
        Set(
            try db.read {
                try Int.fetchAll($0, sql: "SELECT idx FROM offerPreview WHERE offerId = ?", arguments: [offerId])
            })
    }

    /// Bytes of previews kept for undecided offers of senders that are not trusted (an inbox bound).
    package func pendingUntrustedPreviewBytes() throws -> Int {
        try db.read {
            try Int.fetchOne(
                $0,
                sql: """
                    SELECT COALESCE(SUM(LENGTH(p.sealed)), 0) FROM offerPreview p JOIN offer o ON o.id = p.offerId
                    WHERE o.state = ? AND o.senderFingerprint NOT IN (SELECT fingerprint FROM peer WHERE trust = ?)
                    """,
                arguments: [OfferRecord.State.pending.rawValue, PeerRecord.Trust.trusted.rawValue]) ?? 0
        }
    }
}
