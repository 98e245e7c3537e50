import Foundation
import GRDB
import LocafotoControl
import LocafotoCrypto
import LocafotoFormats
import LocafotoNode
import LocafotoWire

/// One item of an outgoing offer as it persists across sessions. The photo key is kept sealed
/// to this node's own key: a resumed session must produce the same ciphertext as the
/// interrupted one, so that the receiver's spooled prefix stays valid.
package struct PlannedItem: Codable, Sendable, Equatable {
    package var id: String
    /// The file; nil for bytes that exist only in memory (compressed, or taken from the vault),
    /// which can resume while this agent runs but not after a restart.
    package var path: String?
    package var name: String
    package var kind: String
    package var size: Int64
    /// Content hash; nil until a peer needs it in the offer (`Sender.ensureHashes`).
    package var hash: [UInt8]?
    /// The file as it was prepared (nil for bytes in memory): a resume compares it.
    package var stamp: FileStamp?
    /// The item was re-keyed because its file changed while the transfer was interrupted: the
    /// next session sends it from 0 whatever the receiver holds. Cleared once it is started.
    package var restart: Bool?
    package var originalSize: Int64
    package var photoID: String
    package var iv: [UInt8]
    /// The photo key sealed to this node (opened only to encrypt).
    package var keySealedToSelf: [UInt8]
    /// The photo key sealed to the recipient, made at the first session and then reused.
    package var encryptedKey: [UInt8]?
    /// Transformed bytes; never persisted.
    package var data: [UInt8]?
    /// The preview's length and hash as offered (OFFER `preview`), and the JPEG sealed to this
    /// node (sealed again to each receiver as it is sent); nil: the item has no preview.
    package var preview: PreviewInfo?
    package var previewSealedToSelf: [UInt8]?

    private enum CodingKeys: String, CodingKey {
        case id, path, name, kind, size, hash, stamp, restart, originalSize, photoID, iv, keySealedToSelf, encryptedKey
        case preview, previewSealedToSelf
    }

    package init(_ p: PreparedItem, identity: Identity) throws {
        id = p.id
        path = p.data == nil ? p.path : nil
        name = p.name
        kind = p.kind
        size = p.size
        hash = p.hash
        stamp = p.stamp
        originalSize = p.originalSize
        data = p.data
        photoID = ""
        iv = []
        keySealedToSelf = []
        try rekey(identity: identity)
    }

    /// Keeps `jpeg` as the item's preview, sealed to this node (`PreviewMaker` made it).
    package mutating func setPreview(_ jpeg: [UInt8], identity: Identity) throws {
        preview = PreviewInfo(size: jpeg.count, hash: Hex.encode(ContentHash.of(jpeg)))
        previewSealedToSelf = SealedBox.seal(jpeg, to: identity.agreementPublicKey)
    }

    /// The preview sealed to `recipient` for its PREVIEW message; nil without one.
    package func previewSealed(to recipient: SigningPublicKey, identity: Identity) throws -> [UInt8]? {
        guard let previewSealedToSelf else { return nil }
        let jpeg = try SealedBox.open(
            previewSealedToSelf, with: identity.agreementKey, maxPlaintext: PreviewImage.maxBytes)
        return SealedBox.seal(jpeg, to: try recipient.agreementKey())
    }

    /// A fresh photo id, key and iv: for a new item, or one whose file changed.
    package mutating func rekey(identity: Identity) throws {
        let key = SecretBytes(randomCount: 32)
        photoID = UUID().uuidString.lowercased()
        iv = SecureRandom.bytes(AEADAlgorithm.nonceLength)
        keySealedToSelf = SealedBox.seal(key, to: identity.agreementPublicKey)
        encryptedKey = nil
    }

    package func photoKey(identity: Identity) throws -> SecretBytes {
        try SealedBox.open(keySealedToSelf, with: identity.agreementKey)
    }

    /// The item as offered; with `preview`, its preview announced (to a receiver with cap
    /// `preview`); with `late`, marked as one whose preview follows the offer (cap `late-preview`).
    package func offerItem(preview withPreview: Bool = false, late: Bool = false) -> OfferItem {
        OfferItem(
            id: id, name: name, kind: kind, size: size, hash: hash.map(Hex.encode),
            preview: withPreview && !late ? preview : nil,
            latePreview: late ? true : nil)
    }

    package var offerItem: OfferItem { offerItem() }
}

/// An outgoing offer: the same offer id is offered again after an interruption.
package struct OutgoingPlan: Codable, Sendable, Equatable {
    package var offerID: String
    package var peerFingerprint: String
    package var peerName: String
    package var items: [PlannedItem]
    /// Set for a deposit: the relay that holds the offer for the peer.
    package var relay: RelayRoute? = nil

    package init(
        offerID: String, peerFingerprint: String, peerName: String, items: [PlannedItem], relay: RelayRoute? = nil
    ) {
        self.offerID = offerID
        self.peerFingerprint = peerFingerprint
        self.peerName = peerName
        self.items = items
        self.relay = relay
    }

    /// Seals each item's photo key to `recipient`, once: a resumed session reuses the sealed keys.
    package mutating func sealKeys(to recipient: SigningPublicKey, identity: Identity) throws {
        // The recipient's X25519 key once, not per item: the conversion costs as much as the seal.
        let recipientKey = try recipient.agreementKey()
        for i in items.indices where items[i].encryptedKey == nil {
            items[i].encryptedKey = SealedBox.seal(try items[i].photoKey(identity: identity), to: recipientKey)
        }
    }
}

/// Where a deposit went: the relay's address and key (its receipts are fetched there) and the
/// recipient's key (the receipt's signer).
package struct RelayRoute: Codable, Sendable, Equatable {
    package var address: String
    package var fingerprint: String
    package var name: String
    package var recipientKey: [UInt8]

    package init(address: String, fingerprint: String, name: String, recipientKey: [UInt8]) {
        self.address = address
        self.fingerprint = fingerprint
        self.name = name
        self.recipientKey = recipientKey
    }
}

/// The persisted form (`outgoing` table).
package struct OutgoingRecord: Codable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "outgoing"
    package var id: String
    package var offerId: String
    package var peerFingerprint: String
    package var peerName: String
    package var state: String
    package var message: String?
    package var createdAt: Date
    package var updatedAt: Date
    package var items: Data
    /// JSON of the plan's RelayRoute (deposits only).
    package var relay: Data?
}

extension AgentStore {
    package func saveOutgoing(
        transfer: String, plan: OutgoingPlan, state: OutgoingTransfer.State, message: String?, createdAt: Date
    ) throws {
        let record = OutgoingRecord(
            id: transfer, offerId: plan.offerID, peerFingerprint: plan.peerFingerprint, peerName: plan.peerName,
            state: state.rawValue, message: message, createdAt: createdAt, updatedAt: Date(),
            items: try JSONEncoder().encode(plan.items), relay: try plan.relay.map { try JSONEncoder().encode($0) })
        try db.write { try record.save($0) }
    }

    /// A new state for a transfer whose plan is stored as it is: no re-encoding of its items.
    /// Returns false if the transfer has no row yet.
    package func updateOutgoing(transfer: String, state: OutgoingTransfer.State, message: String?) throws -> Bool {
        try db.write { db in
            try db.execute(
                sql: "UPDATE outgoing SET state = ?, message = ?, updatedAt = ? WHERE id = ?",
                arguments: [state.rawValue, message, Date(), transfer])
            return db.changesCount > 0
        }
    }

    package func deleteOutgoing(_ transfer: String) throws {
        _ = try db.write { try OutgoingRecord.deleteOne($0, key: transfer) }
    }

    package func outgoing() throws -> [OutgoingRecord] {
        try db.read { try OutgoingRecord.order(Column("createdAt")).fetchAll($0) }
    }
}
