import LocafotoFormats

/// A complete, validated offer as the receiver holds it.
public struct AssembledOffer: Sendable, Equatable {
    public var id: String
    public var items: [OfferItem]
    public var totalBytes: Int64

    public init(id: String, items: [OfferItem], totalBytes: Int64) {
        self.id = id
        self.items = items
        self.totalBytes = totalBytes
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

    public init(limits: OfferLimits = OfferLimits()) {
        self.limits = limits
    }

    /// Adds one OFFER message; returns the offer once its last part has arrived.
    public mutating func add(_ part: Offer) throws -> AssembledOffer? {
        if let id {
            guard part.offer == id else { throw WireError(.protocolViolation, "OFFER continuation names another offer") }
            guard part.totalItems == announcedItems, part.totalBytes == announcedBytes else {
                throw WireError(.protocolViolation, "OFFER continuation changes the announced totals")
            }
        } else {
            guard BundleHeader.isCanonicalUUID(part.offer) else { throw WireError(.protocolViolation, "offer id is not a lowercase UUID") }
            guard part.totalItems >= 1 else { throw WireError(.protocolViolation, "an offer needs at least one item") }
            guard part.totalItems <= limits.maxItems else {
                throw WireError(.tooLarge, "offer has \(part.totalItems) items; this peer accepts at most \(limits.maxItems)")
            }
            guard part.totalBytes >= 0, part.totalBytes <= limits.maxTotalBytes else {
                throw WireError(.tooLarge, "offer totals \(part.totalBytes) bytes; this peer accepts at most \(limits.maxTotalBytes)")
            }
            id = part.offer
            announcedItems = part.totalItems
            announcedBytes = part.totalBytes
        }
        // A continuation must make progress, or a peer could keep the session open with empty parts.
        guard !(part.more && part.items.isEmpty) else {
            throw WireError(.protocolViolation, "an OFFER message with more: true must carry items")
        }
        guard part.items.count <= WireProtocol.maxItemsPerOfferMessage else {
            throw WireError(.protocolViolation, "an OFFER message carries at most \(WireProtocol.maxItemsPerOfferMessage) items")
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
        return AssembledOffer(id: id!, items: items, totalBytes: sum)
    }

    private mutating func validate(_ item: OfferItem) throws {
        guard BundleHeader.isCanonicalUUID(item.id), ids.insert(item.id).inserted else {
            throw WireError(.protocolViolation, "offer item id is not a unique lowercase UUID")
        }
        guard item.size >= 0, item.size <= limits.maxItemBytes else {
            throw WireError(.tooLarge, "item '\(item.name)' is \(item.size) bytes; this peer accepts at most \(limits.maxItemBytes)")
        }
        guard ItemKind.isValid(item.kind) else {
            throw WireError(.unsupportedContent, "item kind '\(item.kind)' is not a supported image type or lfs")
        }
        guard item.hash.utf8.count == 64, item.hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw WireError(.protocolViolation, "item hash must be 64 lowercase hex digits")
        }
        guard !item.name.isEmpty, item.name.utf8.count <= limits.maxNameBytes,
            !item.name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f || $0 == "/" || $0 == "\\" }),
            item.name != ".", item.name != ".."
        else {
            throw WireError(.protocolViolation, "item name must be 1...\(limits.maxNameBytes) bytes without '/', '\\' or control characters")
        }
    }
}

extension Offer {
    /// Splits an offer into OFFER messages of at most `maxItemsPerOfferMessage` items.
    public static func parts(id: String, items: [OfferItem]) -> [Offer] {
        let total = items.reduce(Int64(0)) { $0 + $1.size }
        var out = [Offer]()
        var i = 0
        repeat {
            let chunk = Array(items[i..<min(i + WireProtocol.maxItemsPerOfferMessage, items.count)])
            i += chunk.count
            out.append(Offer(offer: id, items: chunk, more: i < items.count, totalItems: items.count, totalBytes: total))
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
