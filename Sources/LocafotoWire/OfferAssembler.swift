import Foundation
import LocafotoFormats

/// A complete, validated offer as the receiver holds it.
public struct AssembledOffer: Sendable, Equatable {
    public var id: String
    public var items: [OfferItem]
    public var totalBytes: Int64
    /// Relayed offers: the recipient's Ed25519 key (32 bytes). nil for a direct offer.
    public var to: [UInt8]?
    /// Delivered offers: the original sender, key 32 bytes, name sanitized for display.
    public var from: OfferSender?
    /// Relayed offers: the offer signature (64 bytes), not yet verified (see `hasValidSignature`).
    public var signature: [UInt8]?
    /// Relayed offers with previews: the preview signature (64 bytes), not yet verified
    /// (`previewsAreVouched`).
    public var previewSignature: [UInt8]?

    public init(
        id: String, items: [OfferItem], totalBytes: Int64, to: [UInt8]? = nil, from: OfferSender? = nil,
        signature: [UInt8]? = nil,
        previewSignature: [UInt8]? = nil
    ) {
        self.previewSignature = previewSignature
        self.id = id
        self.items = items
        self.totalBytes = totalBytes
        self.to = to
        self.from = from
        self.signature = signature
    }
}

/// Collects the OFFER messages of one offer (split with `more: true`) and validates every item
/// against the receiver's limits before anything is stored. Pure: no I/O.
public struct OfferAssembler: Sendable {
    public let limits: OfferLimits
    private var id: String?
    private var items: [OfferItem] = []
    private var announcedItems = 0
    private var announcedBytes: Int64 = 0
    private var ids = Set<String>()
    /// The relay fields of the first part; every continuation must repeat them exactly.
    private var relay = RelayFields()
    /// The receiver announced cap `late-hash`: a direct offer's items may come without `hash`.
    public let acceptsLateHash: Bool
    /// The receiver announced cap `preview`: items may announce one.
    public let acceptsPreviews: Bool
    /// The receiver announced cap `late-preview` (with `preview`): a direct offer's items may
    /// mark their preview as following the offer.
    public let acceptsLatePreviews: Bool
    private var previews = 0

    public init(
        limits: OfferLimits = OfferLimits(), acceptsLateHash: Bool = false, acceptsPreviews: Bool = false,
        acceptsLatePreviews: Bool = false
    ) {
        self.limits = limits
        self.acceptsLateHash = acceptsLateHash
        self.acceptsPreviews = acceptsPreviews
        self.acceptsLatePreviews = acceptsPreviews && acceptsLatePreviews
    }

    /// Adds one OFFER message; returns the offer once its last part has arrived.
    public mutating func add(_ part: Offer) throws -> AssembledOffer? {
        if let id {
            guard part.offer == id else {
                throw WireError(.protocolViolation, "OFFER continuation names another offer")
            }
            guard part.totalItems == announcedItems, part.totalBytes == announcedBytes else {
                throw WireError(.protocolViolation, "OFFER continuation changes the announced totals")
            }
            guard RelayFields(part) == relay else {
                throw WireError(
                    .protocolViolation, "OFFER continuation changes to/from/signature; every part must carry the same")
            }
        } else {
            guard BundleHeader.isCanonicalUUID(part.offer) else {
                throw WireError(.protocolViolation, "offer id is not a lowercase UUID")
            }
            guard part.totalItems >= 1 else { throw WireError(.protocolViolation, "an offer needs at least one item") }
            guard part.totalItems <= limits.maxItems else {
                throw WireError(
                    .tooLarge, "offer has \(part.totalItems) items; this peer accepts at most \(limits.maxItems)")
            }
            guard part.totalBytes >= 0, part.totalBytes <= limits.maxTotalBytes else {
                throw WireError(
                    .tooLarge,
                    "offer totals \(part.totalBytes) bytes; this peer accepts at most \(limits.maxTotalBytes)")
            }
            relay = try RelayFields(validating: part)
            id = part.offer
            announcedItems = part.totalItems
            announcedBytes = part.totalBytes
        }
        // A continuation must make progress, or a peer could keep the session open with empty parts.
        guard !(part.more && part.items.isEmpty) else {
            throw WireError(.protocolViolation, "an OFFER message with more: true must carry items")
        }
        guard part.items.count <= WireProtocol.maxItemsPerOfferMessage else {
            throw WireError(
                .protocolViolation, "an OFFER message carries at most \(WireProtocol.maxItemsPerOfferMessage) items")
        }
        guard items.count + part.items.count <= announcedItems else {
            throw WireError(.protocolViolation, "offer carries more items than announced")
        }
        for item in part.items {
            try validate(item)
            items.append(item)
        }
        if part.more { return nil }
        guard items.count == announcedItems else {
            throw WireError(.protocolViolation, "offer ended with \(items.count) items, \(announcedItems) announced")
        }
        let sum = items.reduce(Int64(0)) { $0 + $1.size }
        guard sum == announcedBytes else {
            throw WireError(.protocolViolation, "offer items total \(sum) bytes, \(announcedBytes) announced")
        }
        // The name comes from the original sender via the relay: shown to users, so sanitized.
        let from = relay.from.map { OfferSender(ed25519: $0.ed25519.bytes, name: DisplayName.sanitize($0.name)) }
        if relay.signature != nil, items.contains(where: { $0.preview != nil }), relay.previewSignature == nil {
            throw WireError(
                .protocolViolation, "a relayed offer whose items carry previews must carry 'previewSignature'")
        }
        return AssembledOffer(
            id: id!, items: items, totalBytes: sum, to: relay.to?.bytes, from: from, signature: relay.signature?.bytes,
            previewSignature: relay.previewSignature?.bytes)
    }

    static func isHex64(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
    }

    private mutating func validate(_ item: OfferItem) throws {
        guard BundleHeader.isCanonicalUUID(item.id), ids.insert(item.id).inserted else {
            throw WireError(.protocolViolation, "offer item id is not a unique lowercase UUID")
        }
        guard item.size >= 0, item.size <= limits.maxItemBytes else {
            throw WireError(
                .tooLarge,
                "item \(PeerText.quoted(item.name)) is \(item.size) bytes; this peer accepts at most \(limits.maxItemBytes)"
            )
        }
        guard ItemKind.isValid(item.kind) else {
            throw WireError(
                .unsupportedContent, "item kind \(PeerText.quoted(item.kind)) is not a supported image type or lfs")
        }
        if let hash = item.hash {
            guard Self.isHex64(hash) else {
                throw WireError(.protocolViolation, "item hash must be 64 lowercase hex digits")
            }
        } else if relay.signature != nil {
            throw WireError(
                .protocolViolation, "a relayed offer's items must carry their hash (the offer signature covers it)")
        } else if !acceptsLateHash {
            throw WireError(.protocolViolation, "offer item has no hash (this peer did not announce cap late-hash)")
        }
        if let preview = item.preview {
            guard acceptsPreviews else {
                throw WireError(
                    .protocolViolation, "offer item announces a preview (this peer did not announce cap preview)")
            }
            previews += 1
            guard previews <= PreviewImage.maxPerOffer else {
                throw WireError(
                    .protocolViolation, "at most \(PreviewImage.maxPerOffer) items of an offer carry a preview")
            }
            guard (1...PreviewImage.maxBytes).contains(preview.size) else {
                throw WireError(.protocolViolation, "a preview is 1...\(PreviewImage.maxBytes) bytes")
            }
            guard Self.isHex64(preview.hash) else {
                throw WireError(.protocolViolation, "preview hash must be 64 lowercase hex digits")
            }
        }
        if item.latePreview == true {
            guard acceptsLatePreviews else {
                throw WireError(
                    .protocolViolation,
                    "offer item announces a late preview (this peer did not announce cap late-preview)")
            }
            guard relay.to == nil else {
                throw WireError(.protocolViolation, "only a direct offer's items may carry 'latePreview'")
            }
            guard item.preview == nil else {
                throw WireError(.protocolViolation, "an item carries 'preview' or 'latePreview', not both")
            }
            previews += 1
            guard previews <= PreviewImage.maxPerOffer else {
                throw WireError(
                    .protocolViolation, "at most \(PreviewImage.maxPerOffer) items of an offer carry a preview")
            }
        }
        guard !item.name.isEmpty, item.name.utf8.count <= limits.maxNameBytes,
            !item.name.unicodeScalars.contains(where: { PeerText.isUnsafe($0) || $0 == "/" || $0 == "\\" }),
            item.name != ".", item.name != ".."
        else {
            throw WireError(
                .protocolViolation,
                "item name \(PeerText.quoted(item.name)) must be 1...\(limits.maxNameBytes) bytes without '/', '\\', control, format or line-separator characters"
            )
        }
    }
}

/// `to`, `from` and `signature` of a relayed offer, checked for shape (not the signature itself).
private struct RelayFields: Equatable {
    var to: Bytes?
    var from: OfferSender?
    var signature: Bytes?
    var previewSignature: Bytes?

    init() {}

    init(_ part: Offer) {
        to = part.to
        from = part.from
        signature = part.signature
        previewSignature = part.previewSignature
    }

    /// Deposit: `to` + `signature`; delivery: all three; direct: none.
    init(validating part: Offer) throws {
        self.init(part)
        guard (to == nil) == (signature == nil) else {
            throw WireError(.protocolViolation, "a relayed OFFER must carry both 'to' and 'signature'")
        }
        guard from == nil || to != nil else {
            throw WireError(.protocolViolation, "an OFFER with 'from' must carry 'to' and 'signature'")
        }
        if let to, to.bytes.count != 32 {
            throw WireError(.protocolViolation, "OFFER 'to' must be a 32-byte Ed25519 key")
        }
        if let from, from.ed25519.bytes.count != 32 {
            throw WireError(.protocolViolation, "OFFER 'from.ed25519' must be a 32-byte Ed25519 key")
        }
        if let signature, signature.bytes.count != 64 {
            throw WireError(.protocolViolation, "OFFER 'signature' must be 64 bytes")
        }
        if let previewSignature {
            guard signature != nil else {
                throw WireError(.protocolViolation, "only a relayed OFFER carries 'previewSignature'")
            }
            guard previewSignature.bytes.count == 64 else {
                throw WireError(.protocolViolation, "OFFER 'previewSignature' must be 64 bytes")
            }
        }
    }
}

extension Offer {
    /// Splits an offer into OFFER messages of at most `maxItemsPerOfferMessage` items, fewer
    /// when their JSON would not fit one transport message (long names, previews). The relay
    /// fields, when given, are copied onto every part (as the protocol requires).
    public static func parts(
        id: String, items: [OfferItem], to: [UInt8]? = nil, from: OfferSender? = nil, signature: [UInt8]? = nil,
        previewSignature: [UInt8]? = nil
    ) -> [Offer] {
        let total = items.reduce(Int64(0)) { $0 + $1.size }
        let make = { (chunk: [OfferItem], more: Bool) in
            Offer(
                offer: id, items: chunk, more: more, totalItems: items.count, totalBytes: total, to: to, from: from,
                signature: signature,
                previewSignature: previewSignature)
        }
        // Room for the item array: a message less the part without items (and slack for `more`).
        let frame = (try? WireMessage.offer(make([], true)).encoded().count) ?? 1024
        let room = WireProtocol.maxMessageLength - frame - 16
        var out: [Offer] = []
        var i = 0
        repeat {
            var end = i
            var used = 0
            while end < items.count, end - i < WireProtocol.maxItemsPerOfferMessage {
                let cost = ((try? JSONEncoder().encode(items[end]).count) ?? 1024) + 1
                guard end == i || used + cost <= room else { break }
                used += cost
                end += 1
            }
            out.append(make(Array(items[i..<end]), end < items.count))
            i = end
        } while i < items.count
        return out
    }
}

/// What an offered item is: a photo of a sniffed image type, or a `.lfs` file (seed 001) that the
/// recipient opens with its own named key.
public enum ItemKind {
    public static let lfs = "lfs"

    public static func isValid(_ kind: String) -> Bool {
        kind == lfs || ContentType(rawValue: kind) != nil
    }
}
