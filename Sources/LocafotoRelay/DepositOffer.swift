import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoWire

/// A sender's offer as deposited at the relay: everything needed to rebuild the relayed OFFER
/// for the recipient (design-issue4.md "OFFER additions"). The offer signature is stored as
/// received; the session checks it before calling `beginDeposit`.
public struct DepositOffer: Sendable, Equatable {
    public var offerID: String
    /// The depositor's Ed25519 key (the handshake peer), 32 bytes.
    public var senderKey: [UInt8]
    /// The depositor's display name from its HELLO, at most 63 bytes.
    public var senderName: String
    /// The Ed25519 key the items are sealed to (the OFFER's `to`), 32 bytes.
    public var recipientKey: [UInt8]
    public var items: [OfferItem]
    public var totalBytes: Int64
    /// The OFFER's `signature` (64 bytes), by the sender over the offer signing input.
    public var offerSignature: [UInt8]
    /// The OFFER's `previewSignature` (64 bytes) when items carry previews.
    public var previewSignature: [UInt8]?

    public init(
        offerID: String, senderKey: [UInt8], senderName: String, recipientKey: [UInt8], items: [OfferItem],
        totalBytes: Int64, offerSignature: [UInt8], previewSignature: [UInt8]? = nil
    ) {
        self.previewSignature = previewSignature
        self.offerID = offerID
        self.senderKey = senderKey
        self.senderName = senderName
        self.recipientKey = recipientKey
        self.items = items
        self.totalBytes = totalBytes
        self.offerSignature = offerSignature
    }

    /// Bytes of the sealed previews the items announce, as the relay stores them: each JPEG's
    /// announced length plus the sealed box's overhead (the session checks each box's length).
    public var previewBytes: Int64 {
        items.reduce(0) { $0 + Int64($1.preview.map { $0.size + SealedBox.overhead } ?? 0) }
    }

    /// What the deposit counts against the relay's byte quotas: its items and its previews
    /// (protocol/messages.md "Deposit"); without the previews, up to 100 × 16 KiB per offer
    /// would be stored outside every quota.
    public var quotaBytes: Int64 { totalBytes + previewBytes }

    /// The same rules a receiver applies to an OFFER (ids, sizes, names, kinds, hashes, totals),
    /// plus key and signature lengths. Run on anything from the network or from disk.
    public func validate() throws {
        _ = try fingerprint(of: senderKey, role: "sender")
        _ = try fingerprint(of: recipientKey, role: "recipient")
        guard offerSignature.count == 64 else {
            throw RelayError(
                .invalidDeposit, .badSignature, "the offer signature must be 64 bytes (got \(offerSignature.count))")
        }
        guard senderName.utf8.count <= Hello.maxNameBytes else {
            throw RelayError(
                .invalidDeposit, .protocolViolation, "the sender name must be at most \(Hello.maxNameBytes) bytes")
        }
        if let previewSignature, previewSignature.count != 64 {
            throw RelayError(
                .invalidDeposit, .badSignature, "the preview signature must be 64 bytes (got \(previewSignature.count))"
            )
        }
        guard previewSignature != nil || !items.contains(where: { $0.preview != nil }) else {
            throw RelayError(.invalidDeposit, .protocolViolation, "items announce previews without a preview signature")
        }
        var assembler = OfferAssembler(acceptsPreviews: true)
        do {
            let offer = Offer(
                offer: offerID, items: items, more: false, totalItems: items.count, totalBytes: totalBytes)
            _ = try assembler.add(offer)
        } catch let e as WireError {
            throw RelayError(.invalidDeposit, e.code, e.message)
        }
    }
}

/// `offer.json` in a deposit directory. Versioned so a later relay can tell old files apart.
struct DepositOfferFile: Codable {
    static let currentVersion = 1
    /// offer.json of 10,000 items with 255-byte names stays well below this.
    static let maxBytes = 8 << 20

    var v: Int
    var offer: String
    var from: Bytes
    var name: String
    var to: Bytes
    var items: [OfferItem]
    var totalBytes: Int64
    var signature: Bytes
    /// Absent in files written before previews (and for offers without them).
    var previewSignature: Bytes?

    init(_ d: DepositOffer) {
        previewSignature = d.previewSignature.map(Bytes.init)
        v = Self.currentVersion
        offer = d.offerID
        from = Bytes(d.senderKey)
        name = d.senderName
        to = Bytes(d.recipientKey)
        items = d.items
        totalBytes = d.totalBytes
        signature = Bytes(d.offerSignature)
    }

    var deposit: DepositOffer {
        DepositOffer(
            offerID: offer, senderKey: from.bytes, senderName: name, recipientKey: to.bytes, items: items,
            totalBytes: totalBytes, offerSignature: signature.bytes, previewSignature: previewSignature?.bytes)
    }
}

/// A committed deposit waiting in a recipient's queue: the offer as deposited (all its items, in
/// offer order, as the signature covers them all; read through as `record.offerID`, …) and what
/// the relay keeps of it.
@dynamicMemberLookup
public struct DepositRecord: Sendable, Equatable {
    public var offer: DepositOffer
    public var createdAt: Date
    public var expiresAt: Date
    /// Indices of the items the relay holds (those that failed at deposit are missing).
    public var storedIndices: [Int]
    /// Bytes held for this deposit: the items' ciphertext and the sealed previews.
    public var storedBytes: Int64

    public subscript<T>(dynamicMember field: KeyPath<DepositOffer, T>) -> T { offer[keyPath: field] }

    /// The sender's canonical fingerprint (empty only for a key that is not 32 bytes, which a
    /// committed deposit cannot have).
    public var senderFingerprint: String { (try? fingerprint(of: offer.senderKey, role: "sender")) ?? "" }
}
