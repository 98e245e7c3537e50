import Foundation

/// An element of `GET /v1/inbox`: an offer to this node and its items.
public struct InboxOffer: Codable, Sendable, Equatable {
    public struct Peer: Codable, Sendable, Equatable {
        public var name: String
        public var fingerprint: String
        public var trusted: Bool
        public init(name: String, fingerprint: String, trusted: Bool) {
            self.name = name
            self.fingerprint = fingerprint
            self.trusted = trusted
        }
    }

    public struct Item: Codable, Sendable, Equatable {
        public var name: String
        public var kind: String
        public var bytes: Int64
        /// pending, receiving, imported, queued, needsKey, failed, skipped… (control-api.md).
        public var status: String
        public var photo: String?
        public var error: String?
        /// A preview can be fetched (`GET /v1/inbox/{id}/items/{index}/preview`); absent from
        /// agents before previews.
        public var preview: Bool?
        public init(
            name: String, kind: String, bytes: Int64, status: String, photo: String? = nil, error: String? = nil,
            preview: Bool? = nil
        ) {
            self.name = name
            self.kind = kind
            self.bytes = bytes
            self.status = status
            self.photo = photo
            self.error = error
            self.preview = preview
        }
    }

    public var id: String
    public var sender: Peer
    /// The relay that handed the offer on; nil for a direct offer.
    public var via: Peer?
    /// pending, accepted, receiving, interrupted, completed, rejected, failed, expired, cancelled.
    public var state: String
    public var items: [Item]
    /// All items of the offer; `items` lists the first `?items=N` of them when that is given.
    public var itemCount: Int
    /// How many of all the items have a preview.
    public var previewCount: Int?
    /// How many more previews may still come (a sender with cap `late-preview` sends them
    /// after the offer, until the decision); absent when none.
    public var previewsPending: Int?
    public var totalBytes: Int64
    public var receivedAt: Date
    public var expiresAt: Date
    /// The sender's session is still open (it waits for the decision, or sends).
    public var connected: Bool
    public var message: String?

    public init(
        id: String, sender: Peer, via: Peer? = nil, state: String, items: [Item], itemCount: Int,
        previewCount: Int? = nil, previewsPending: Int? = nil,
        totalBytes: Int64, receivedAt: Date, expiresAt: Date, connected: Bool, message: String? = nil
    ) {
        self.previewsPending = previewsPending
        self.id = id
        self.sender = sender
        self.via = via
        self.state = state
        self.items = items
        self.itemCount = itemCount
        self.previewCount = previewCount
        self.totalBytes = totalBytes
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.connected = connected
        self.message = message
    }
}
