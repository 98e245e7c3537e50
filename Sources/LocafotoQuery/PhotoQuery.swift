import Foundation
import LocafotoErrors

/// What to list, in which order: `Vault.photos(matching:)`, `Vault.photoCount(matching:)`, and
/// batch operations (`PhotoSelection.query`). All filters combine with AND. Photos of private
/// albums not unlocked in the `Vault` instance are never included.
///
/// It is also the control API's query, as it is (`{"query": {...}}`, protocol/control-api.md):
/// coded with the API's names (`sender`, `minBytes`), every field optional, an absent one its
/// default here; `GET /v1/photos` reads the same from URL parameters.
public struct PhotoQuery: Sendable, Hashable {
    /// Raw values are the control API's names of the fields they order by.
    public enum Sort: String, NamedChoice {
        /// The capture date, or the import date for photos without one (the "effective date").
        case captureDate = "capturedAt"
        case importDate = "importedAt"
        /// The original (plaintext) size.
        case size = "originalBytes"
        /// The stored name, ignoring ASCII case; photos without a name come first in ascending order.
        case name
    }

    public enum Order: String, NamedChoice {
        case ascending, descending
    }

    public enum HiddenPhotos: String, NamedChoice {
        /// Hidden photos are left out (the default).
        case exclude
        /// Hidden and visible photos.
        case include
        /// Hidden photos only.
        case only
    }

    public var sort: Sort
    /// Photos with equal sort keys are ordered by ID, in the same direction: pages are stable.
    public var order: Order
    /// Only photos in this album (name in any case, or ID).
    public var album: String?
    /// Only photos with this tag (compared like tags are stored: trimmed, lowercase).
    public var tag: String?
    /// Only favourites (true) or only non-favourites (false).
    public var favorite: Bool?
    public var hidden: HiddenPhotos
    /// Effective date (capture date, else import date) at or after this instant.
    public var from: Date?
    /// Effective date strictly before this instant.
    public var before: Date?
    /// Only this format (`ContentType` raw value: "jpeg", "png", ...; any case).
    public var format: String?
    /// Only photos received from this peer (fingerprint, canonicalised when it parses as one).
    public var senderFingerprint: String?
    /// Name or a tag contains this text (ASCII case-insensitive; `%`, `_` and `\` match themselves).
    public var text: String?
    /// Only photos whose original is at least this many bytes.
    public var minSize: Int64?
    /// Only photos whose EXIF has a GPS position (true) or is known to have none (false). Read by
    /// the media indexer after import: a photo not indexed yet (or unreadable) is in neither, so
    /// "without location" never lets through a photo whose position is not known to be absent.
    public var hasLocation: Bool?
    /// At most this many photos (nil: all).
    public var limit: Int?
    /// Skip this many photos first.
    public var offset: Int

    public init(
        sort: Sort = .captureDate, order: Order = .descending, album: String? = nil, tag: String? = nil,
        favorite: Bool? = nil, hidden: HiddenPhotos = .exclude, from: Date? = nil, before: Date? = nil,
        format: String? = nil, senderFingerprint: String? = nil, text: String? = nil, limit: Int? = nil,
        offset: Int = 0, minSize: Int64? = nil, hasLocation: Bool? = nil
    ) {
        self.minSize = minSize
        self.hasLocation = hasLocation
        self.sort = sort
        self.order = order
        self.album = album
        self.tag = tag
        self.favorite = favorite
        self.hidden = hidden
        self.from = from
        self.before = before
        self.format = format
        self.senderFingerprint = senderFingerprint
        self.text = text
        self.limit = limit
        self.offset = offset
    }
}

/// Which photos a batch operation acts on. Every operation resolves its selection and makes its
/// change in one transaction: if any ID is unknown, ambiguous or in a locked private album,
/// nothing changes and the error lists them all.
public enum PhotoSelection: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// Photo IDs or unique prefixes of at least 4 characters (duplicates count once).
    case ids([String])
    /// The photos the query lists (its limit and offset apply).
    case query(PhotoQuery)

    public init(arrayLiteral elements: String...) { self = .ids(elements) }
}

extension PhotoQuery: Codable {
    /// The control API's names; `sender` and `minBytes` are `senderFingerprint` and `minSize`.
    enum CodingKeys: String, CodingKey {
        case sort, order, album, tag, favorite, hidden, from, before, format, text, limit, offset, hasLocation
        case senderFingerprint = "sender"
        case minSize = "minBytes"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            sort: try c.decodeIfPresent(Sort.self, forKey: .sort) ?? .captureDate,
            order: try c.decodeIfPresent(Order.self, forKey: .order) ?? .descending,
            album: try c.decodeIfPresent(String.self, forKey: .album),
            tag: try c.decodeIfPresent(String.self, forKey: .tag),
            favorite: try c.decodeIfPresent(Bool.self, forKey: .favorite),
            hidden: try c.decodeIfPresent(HiddenPhotos.self, forKey: .hidden) ?? .exclude,
            from: try c.decodeIfPresent(Date.self, forKey: .from),
            before: try c.decodeIfPresent(Date.self, forKey: .before),
            format: try c.decodeIfPresent(String.self, forKey: .format),
            senderFingerprint: try c.decodeIfPresent(String.self, forKey: .senderFingerprint),
            text: try c.decodeIfPresent(String.self, forKey: .text),
            limit: try c.decodeIfPresent(Int.self, forKey: .limit),
            offset: try c.decodeIfPresent(Int.self, forKey: .offset) ?? 0,
            minSize: try c.decodeIfPresent(Int64.self, forKey: .minSize),
            hasLocation: try c.decodeIfPresent(Bool.self, forKey: .hasLocation))
    }

    /// Only what differs from the defaults: a query's JSON is what its person asked for.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if sort != .captureDate { try c.encode(sort, forKey: .sort) }
        if order != .descending { try c.encode(order, forKey: .order) }
        if hidden != .exclude { try c.encode(hidden, forKey: .hidden) }
        if offset != 0 { try c.encode(offset, forKey: .offset) }
        try c.encodeIfPresent(album, forKey: .album)
        try c.encodeIfPresent(tag, forKey: .tag)
        try c.encodeIfPresent(favorite, forKey: .favorite)
        try c.encodeIfPresent(from, forKey: .from)
        try c.encodeIfPresent(before, forKey: .before)
        try c.encodeIfPresent(format, forKey: .format)
        try c.encodeIfPresent(senderFingerprint, forKey: .senderFingerprint)
        try c.encodeIfPresent(text, forKey: .text)
        try c.encodeIfPresent(limit, forKey: .limit)
        try c.encodeIfPresent(minSize, forKey: .minSize)
        try c.encodeIfPresent(hasLocation, forKey: .hasLocation)
    }

    /// A date of a query as people and URLs write it: `2025-11-15` (midnight UTC) or RFC 3339.
    public static func date(_ text: String) -> Date? {
        if let d = try? Date(text, strategy: .iso8601) { return d }
        return try? Date(text + "T00:00:00Z", strategy: .iso8601)
    }
}

extension PhotoSelection: Codable {
    /// The control API's selection: `{"ids": [...]}` (unique prefixes allowed), `{"query": {...}}`,
    /// or `{"all": true}` for every visible photo (the query with no filter).
    enum CodingKeys: String, CodingKey { case ids, query, all }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let ids = try c.decodeIfPresent([String].self, forKey: .ids), !ids.isEmpty {
            self = .ids(ids)
        } else if let query = try c.decodeIfPresent(PhotoQuery.self, forKey: .query) {
            self = .query(query)
        } else if try c.decodeIfPresent(Bool.self, forKey: .all) == true {
            self = .query(PhotoQuery())
        } else {
            let refusal = RefusedValue("name photos by id, or give a filter (or select all explicitly)")
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: refusal.description, underlyingError: refusal))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .ids(let ids): try c.encode(ids, forKey: .ids)
        case .query(let query): try c.encode(query, forKey: .query)
        }
    }
}
