import LocafotoCrypto

// Signatures that let an offer travel through a relay (protocol/formats.md "Offer signature" and
// "Decision receipt"). The relay is not trusted: the recipient checks the original sender's
// offer signature, and the sender gets back a receipt signed by the recipient.
// Wire types are not visible here (Formats sits below Wire), so both take plain values.

/// The original sender's Ed25519 signature over an offer and its recipient: a relay can neither
/// change the offer nor redirect it to someone else.
public enum OfferSignature {
    /// One offered item, in offer order. `hash` is the raw 32-byte BLAKE2b-256 (the hex of OFFER, decoded).
    public typealias Item = (id: String, name: String, kind: String, size: Int64, hash: [UInt8])

    static let domain = Array("LOCAFOTO-OFFER-SIG-V1".utf8) + [0]

    /// The exact bytes signed: the domain, then every field as a 32-bit big-endian length
    /// followed by its bytes, items in offer order.
    public static func signingInput(
        offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey, totalItems: Int, totalBytes: Int64,
        items: [Item]
    ) -> [UInt8] {
        var input = LengthPrefixed(domain: domain)
        input.field(offerID)
        input.field(sender.bytes)
        input.field(recipient.bytes)
        input.field(u64: UInt64(truncatingIfNeeded: totalItems))
        input.field(u64: UInt64(truncatingIfNeeded: totalBytes))
        for item in items {
            input.field(item.id)
            input.field(item.name)
            input.field(item.kind)
            input.field(u64: UInt64(truncatingIfNeeded: item.size))
            input.field(item.hash)
        }
        return input.bytes
    }

    /// Signs as `sender` (the key's public half is the signed sender field).
    public static func sign(
        offerID: String, sender: SigningKey, recipient: SigningPublicKey, totalItems: Int, totalBytes: Int64,
        items: [Item]
    ) -> [UInt8] {
        sender.signature(
            for: signingInput(
                offerID: offerID, sender: sender.publicKey, recipient: recipient, totalItems: totalItems,
                totalBytes: totalBytes,
                items: items))
    }

    public static func verify(
        _ signature: [UInt8], offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey, totalItems: Int,
        totalBytes: Int64, items: [Item]
    ) -> Bool {
        sender.isValidSignature(
            signature,
            for: signingInput(
                offerID: offerID, sender: sender, recipient: recipient, totalItems: totalItems, totalBytes: totalBytes,
                items: items))
    }
}

/// The original sender's Ed25519 signature over the previews of a relayed offer (formats.md
/// "Preview signature"): a relay carries previews sealed to the recipient and can neither swap
/// one for another nor move them to another offer. Apart from the offer signature so that a relay
/// may leave previews out for a recipient that takes none, and the offer still verifies.
public enum PreviewSignature {
    /// One preview: the item's index in the offer, the JPEG's length and its raw BLAKE2b-256.
    public typealias Preview = (index: Int, size: Int, hash: [UInt8])

    static let domain = Array("LOCAFOTO-PREVIEW-SIG-V1".utf8) + [0]

    /// The domain, the offer id, sender and recipient keys, then per preview in item order its
    /// index, size (8 bytes big-endian each) and hash, every field length-prefixed.
    public static func signingInput(
        offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey, previews: [Preview]
    ) -> [UInt8] {
        var input = LengthPrefixed(domain: domain)
        input.field(offerID)
        input.field(sender.bytes)
        input.field(recipient.bytes)
        for p in previews {
            input.field(u64: UInt64(truncatingIfNeeded: p.index))
            input.field(u64: UInt64(truncatingIfNeeded: p.size))
            input.field(p.hash)
        }
        return input.bytes
    }

    public static func sign(offerID: String, sender: SigningKey, recipient: SigningPublicKey, previews: [Preview])
        -> [UInt8]
    {
        sender.signature(
            for: signingInput(offerID: offerID, sender: sender.publicKey, recipient: recipient, previews: previews))
    }

    public static func verify(
        _ signature: [UInt8], offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey,
        previews: [Preview]
    ) -> Bool {
        sender.isValidSignature(
            signature, for: signingInput(offerID: offerID, sender: sender, recipient: recipient, previews: previews))
    }
}

/// The recipient's Ed25519 signature over its decision on a relayed offer: the relay hands it
/// back to the sender, who can tell a real answer from one the relay made up.
public enum DecisionReceipt {
    static let domain = Array("LOCAFOTO-DECISION-SIG-V1".utf8) + [0]

    /// `decision` is the DECISION word: "accepted", "rejected" or "expired".
    public static func signingInput(
        offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey, decision: String
    ) -> [UInt8] {
        var input = LengthPrefixed(domain: domain)
        input.field(offerID)
        input.field(sender.bytes)
        input.field(recipient.bytes)
        input.field(decision)
        return input.bytes
    }

    /// Signs as `recipient`; `sender` is the original sender of the offer (not the relay).
    public static func sign(offerID: String, sender: SigningPublicKey, recipient: SigningKey, decision: String)
        -> [UInt8]
    {
        recipient.signature(
            for: signingInput(offerID: offerID, sender: sender, recipient: recipient.publicKey, decision: decision))
    }

    public static func verify(
        _ signature: [UInt8], offerID: String, sender: SigningPublicKey, recipient: SigningPublicKey, decision: String
    ) -> Bool {
        recipient.isValidSignature(
            signature, for: signingInput(offerID: offerID, sender: sender, recipient: recipient, decision: decision))
    }
}

/// A domain string followed by fields, each a u32 big-endian length then the bytes (the same
/// framing as the bundle signature, so no field can bleed into the next).
struct LengthPrefixed {
    private(set) var bytes: [UInt8]

    init(domain: [UInt8]) { bytes = domain }

    mutating func field(_ b: [UInt8]) {
        let n = UInt32(truncatingIfNeeded: b.count)
        bytes += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
        bytes += b
    }

    mutating func field(_ s: String) { field(Array(s.utf8)) }

    mutating func field(u64 v: UInt64) {
        field((0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) })
    }
}
