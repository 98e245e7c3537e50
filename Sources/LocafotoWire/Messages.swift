import Foundation
import LocafotoFormats

/// The handshake payload each side sends inside Noise message 2 (responder) and 3 (initiator).
public struct Hello: Codable, Sendable, Equatable {
    /// Protocol version (1).
    public var v: Int
    /// The sender's Ed25519 identity key, base64. Its X25519 form MUST equal the Noise static key.
    public var ed25519: Bytes
    /// Display name, 1...63 bytes of UTF-8.
    public var name: String
    /// Optional features; unknown ones are ignored.
    public var caps: [String]

    public init(v: Int = WireProtocol.version, ed25519: [UInt8], name: String, caps: [String] = []) {
        self.v = v
        self.ed25519 = Bytes(ed25519)
        self.name = name
        self.caps = caps
    }

    public static let maxNameBytes = 63

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// The payload this node sends in its handshake message: keys sorted, no spaces, raw UTF-8,
    /// `/` unescaped, like every JSON wire message (protocol/vectors/handshake.json pins these
    /// bytes). Receivers parse the JSON, so any other spelling is as valid on the wire.
    public func encoded() throws -> [UInt8] {
        Array(try Self.encoder.encode(self))
    }

    private enum CodingKeys: String, CodingKey { case v, ed25519, name, caps }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        v = try c.decode(Int.self, forKey: .v)
        ed25519 = try c.decode(Bytes.self, forKey: .ed25519)
        name = try c.decode(String.self, forKey: .name)
        caps = try c.decodeIfPresent([String].self, forKey: .caps) ?? []  // optional (handshake.md)
    }
}

/// Display names from the network are shown to users: drop control and format characters
/// (Unicode Cc and Cf, e.g. escape sequences, zero-width and bidi marks) and cap the length.
public enum DisplayName {
    public static func sanitize(_ raw: String, fallback: String = "unnamed") -> String {
        let kept = raw.unicodeScalars.filter { !PeerText.isUnsafe($0) }
        var out = ""
        for ch in String(String.UnicodeScalarView(kept)) {
            guard out.utf8.count + String(ch).utf8.count <= Hello.maxNameBytes else { break }
            out.append(ch)
        }
        out = out.trimmingCharacters(in: .whitespaces)
        return out.isEmpty ? fallback : out
    }
}

/// One item of an offer. `index` is its position in the whole offer (0-based).
public struct OfferItem: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// Content type as sniffed by the sender: "jpeg", "png", "heic", ...
    public var kind: String
    public var size: Int64
    /// BLAKE2b-256 of the plaintext photo, 64 lowercase hex digits. Optional only in a direct
    /// offer to a receiver that announced cap `late-hash` (the receiver computes it as the
    /// photo arrives); a relayed offer always carries it (its signature covers it).
    public var hash: String?
    /// The item's preview, sent in a PREVIEW message after the OFFER (cap `preview`); nil when
    /// the sender has none for it.
    public var preview: PreviewInfo?
    /// True: the item's preview follows the complete offer, while the DECISION is awaited (a
    /// direct offer to a receiver with cap `late-preview`); nil otherwise. Never with `preview`.
    public var latePreview: Bool?

    public init(
        id: String, name: String, kind: String, size: Int64, hash: String?, preview: PreviewInfo? = nil,
        latePreview: Bool? = nil
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.size = size
        self.hash = hash
        self.preview = preview
        self.latePreview = latePreview
    }
}

/// What an OFFER says of an item's preview: the JPEG's length and BLAKE2b-256 (64 lowercase
/// hex), which the bytes in its PREVIEW message must match once opened.
public struct PreviewInfo: Codable, Sendable, Equatable {
    public var size: Int
    public var hash: String

    public init(size: Int, hash: String) {
        self.size = size
        self.hash = hash
    }
}

/// A preview in transit (PREVIEW, binary): item index and the JPEG sealed to the receiver's
/// X25519 key (libsodium sealed box), so a relay carrying it cannot see it.
public struct Preview: Sendable, Equatable {
    public var item: UInt32
    public var sealed: [UInt8]

    public init(item: UInt32, sealed: [UInt8]) {
        self.item = item
        self.sealed = sealed
    }

    public static let headerLength = 1 + 4
}

public struct Offer: Codable, Sendable, Equatable {
    public var offer: String
    public var items: [OfferItem]
    /// True when further OFFER messages with the same id follow (large offers are split).
    public var more: Bool
    public var totalItems: Int
    public var totalBytes: Int64
    /// Relayed offers only (cap "relay"): the recipient's Ed25519 key. Direct offers carry none
    /// of `to`, `from`, `signature`.
    public var to: Bytes?
    /// Relay -> recipient only: the original sender (absent on a deposit: the handshake peer is the sender).
    public var from: OfferSender?
    /// Offer signature (formats.md) by `from`, or by the handshake peer when `from` is absent.
    public var signature: Bytes?
    /// Relayed offers whose items carry `preview`: the preview signature (formats.md), by the
    /// same signer as `signature`.
    public var previewSignature: Bytes?

    public init(
        offer: String, items: [OfferItem], more: Bool, totalItems: Int, totalBytes: Int64, to: [UInt8]? = nil,
        from: OfferSender? = nil, signature: [UInt8]? = nil, previewSignature: [UInt8]? = nil
    ) {
        self.previewSignature = previewSignature.map(Bytes.init)
        self.offer = offer
        self.items = items
        self.more = more
        self.totalItems = totalItems
        self.totalBytes = totalBytes
        self.to = to.map(Bytes.init)
        self.from = from
        self.signature = signature.map(Bytes.init)
    }
}

/// Who made a relayed offer, as the relay delivers it.
public struct OfferSender: Codable, Sendable, Equatable {
    public var ed25519: Bytes
    /// Display name the sender gave the relay; sanitized (DisplayName) by the offer assembler.
    public var name: String

    public init(ed25519: [UInt8], name: String) {
        self.ed25519 = Bytes(ed25519)
        self.name = name
    }
}

public enum DecisionKind: String, Codable, Sendable {
    case accepted, rejected, expired
}

public struct Decision: Codable, Sendable, Equatable {
    public var offer: String
    public var decision: DecisionKind
    public var code: WireErrorCode?
    public var message: String?
    /// Items of which the receiver already holds a ciphertext prefix (cap "resume"; only with
    /// `accepted`). Absent on the wire when nil.
    public var resume: [ResumePoint]?
    /// Items already committed in an earlier session: the sender skips them (cap "resume").
    public var completed: [CompletedItem]?
    /// Decision receipt signature (formats.md), sent when deciding a relayed offer.
    public var receipt: Bytes?

    public init(
        offer: String, decision: DecisionKind, code: WireErrorCode? = nil, message: String? = nil,
        resume: [ResumePoint]? = nil, completed: [CompletedItem]? = nil, receipt: [UInt8]? = nil
    ) {
        self.offer = offer
        self.decision = decision
        self.code = code
        self.message = message
        self.resume = resume
        self.completed = completed
        self.receipt = receipt.map(Bytes.init)
    }
}

/// "Send item `item` from ciphertext byte `offset`": the receiver holds the bytes before it.
public struct ResumePoint: Codable, Sendable, Equatable, Hashable {
    public var item: Int
    public var offset: Int64

    public init(item: Int, offset: Int64) {
        self.item = item
        self.offset = offset
    }
}

/// An item the receiver committed in an earlier session; stands in for its ITEM_RESULT.
public struct CompletedItem: Codable, Sendable, Equatable {
    public var item: Int
    /// `imported` or `queued`.
    public var status: ItemStatus
    public var photo: String?

    public init(item: Int, status: ItemStatus, photo: String? = nil) {
        self.item = item
        self.status = status
        self.photo = photo
    }
}

public struct ItemStart: Codable, Sendable, Equatable {
    public var offer: String
    public var item: Int
    public var photo: String
    public var algorithm: String
    public var iv: Bytes
    public var encryptedKey: Bytes
    /// Where ITEM_DATA will start; 0 for a fresh transfer (resume reuses this field).
    public var offset: Int64
    public var metadata: BundleMetadata

    public init(
        offer: String, item: Int, photo: String, algorithm: String, iv: [UInt8], encryptedKey: [UInt8], offset: Int64,
        metadata: BundleMetadata
    ) {
        self.offer = offer
        self.item = item
        self.photo = photo
        self.algorithm = algorithm
        self.iv = Bytes(iv)
        self.encryptedKey = Bytes(encryptedKey)
        self.offset = offset
        self.metadata = metadata
    }
}

/// Binary on purpose: it carries the photo bytes.
public struct ItemData: Sendable, Equatable {
    public var item: UInt32
    public var offset: UInt64
    public var data: [UInt8]

    public init(item: UInt32, offset: UInt64, data: [UInt8]) {
        self.item = item
        self.offset = offset
        self.data = data
    }

    public static let headerLength = 1 + 4 + 8
}

public struct ItemEnd: Codable, Sendable, Equatable {
    public var offer: String
    public var item: Int
    public var authTag: Bytes
    public var signature: Bytes

    public init(offer: String, item: Int, authTag: [UInt8], signature: [UInt8]) {
        self.offer = offer
        self.item = item
        self.authTag = Bytes(authTag)
        self.signature = Bytes(signature)
    }
}

public enum ItemStatus: String, Codable, Sendable {
    /// Verified and committed to the recipient's vault.
    case imported
    /// Verified and stored sealed; imported when the recipient unlocks the vault.
    case queued
    case failed
    /// Stored by a relay for the recipient, still sealed (relay -> depositor only).
    case held
}

public struct ItemResult: Codable, Sendable, Equatable {
    public var offer: String
    public var item: Int
    public var status: ItemStatus
    public var code: WireErrorCode?
    public var message: String?
    public var photo: String?
    /// With `imported` only: the receiver's vault already held this content (the same content
    /// hash), so nothing was stored again and `photo` names the photo it has (messages.md
    /// ITEM_RESULT). Absent otherwise.
    public var duplicate: Bool?

    public init(
        offer: String, item: Int, status: ItemStatus, code: WireErrorCode? = nil, message: String? = nil,
        photo: String? = nil,
        duplicate: Bool? = nil
    ) {
        self.offer = offer
        self.item = item
        self.status = status
        self.code = code
        self.message = message
        self.photo = photo
        self.duplicate = duplicate
    }
}

public struct ErrorBody: Codable, Sendable, Equatable {
    public var code: WireErrorCode
    public var message: String
    public var offer: String?

    public init(code: WireErrorCode, message: String, offer: String? = nil) {
        self.code = code
        self.message = message
        self.offer = offer
    }
}

public struct Done: Codable, Sendable, Equatable {
    public var offer: String
    public init(offer: String) { self.offer = offer }
}

/// Bytes that travel as standard base64 (with padding) in JSON.
public struct Bytes: Codable, Sendable, Equatable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        guard s.utf8.count <= 8192, let d = Data(base64Encoded: s) else {
            throw WireError(.protocolViolation, "invalid base64 field")
        }
        bytes = [UInt8](d)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Data(bytes).base64EncodedString())
    }
}
