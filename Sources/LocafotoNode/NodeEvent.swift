import Foundation

/// Something that happened in the node, said by the role it happened in: one case per kind,
/// each with what that kind carries. Roles publish these on the `EventHub`; the control server
/// turns each into a line of `GET /v1/events` (the one place the API's shape is known), and the
/// agent's services (desktop notifications) read them as they are.
public enum NodeEvent: Sendable, Equatable {
    /// An offer reached the inbox and waits for a decision (`pending`), or was accepted at once.
    case offerReceived(OfferNews)
    /// A preview of a pending offer's item came after the offer (`item` nil: none was kept).
    case offerPreview(offer: String, item: Int?)
    /// The user, the policy or the clock decided an offer: `state` accepted, rejected, expired.
    case offerDecided(offer: String, state: String, message: String?)
    /// An incoming offer ended: `state` completed, failed, interrupted, rejected, cancelled, expired.
    case offerFinished(OfferNews)
    /// Bytes of an incoming item arrived (thinned by the hub).
    case itemProgress(offer: String, item: Int, items: Int, totalBytes: Int64, progress: Progress)
    /// An item was imported (`photo`), found already in the vault (`state` duplicate), waits
    /// sealed for an unlock, or failed.
    case itemImported(offer: String, item: Int, name: String?, state: String, photo: String?, message: String?)
    /// An outgoing transfer changed state.
    case transferState(TransferNews, state: String, sentBytes: Int64, message: String?)
    /// Bytes of an outgoing transfer went out (thinned by the hub).
    case transferProgress(TransferNews, progress: Progress)
    /// A local import went on: `processed` of `found` files, `name` the last one.
    case importProgress(job: String, found: Int, processed: Int, name: String, progress: Progress)
    /// A local import ended.
    case importFinished(job: String, state: String, found: Int, processed: Int, bytes: Int64, message: String?)
    /// The indexer read a photo's facts.
    case photoIndexed(photo: String)
    /// Photos were tagged, untagged, (un)favourited, (un)hidden (`change` the action), or added
    /// by a filter or a compression (`filter`, `compress`); `photo` when exactly one.
    case photosChanged(change: String, count: Int, photo: String?)
    /// Photos left the vault; `photo` when exactly one.
    case photosDeleted(count: Int, photo: String?)
    /// An album action succeeded: `album` the album (the new name after a rename, the target of
    /// a move or copy), `count` the photos concerned.
    case albumChanged(action: String, album: String, count: Int?)
    case peerAppeared(EventPeer)
    case peerLeft(EventPeer)
    /// `reason`: why auto-lock locked it; nil when a person asked.
    case vaultLocked(reason: String?)
    case vaultUnlocked

    /// Bytes done so far, and the rate since the last progress event of the same offer,
    /// transfer or import (nil for the first).
    public struct Progress: Sendable, Equatable {
        public var bytes: Int64
        public var bytesPerSecond: Double?
        public init(bytes: Int64, bytesPerSecond: Double? = nil) {
            self.bytes = bytes
            self.bytesPerSecond = bytesPerSecond
        }
    }

    /// An offer to this node, as its events tell it.
    public struct OfferNews: Sendable, Equatable {
        public var offer: String
        public var peer: EventPeer
        public var items: Int
        public var totalBytes: Int64
        public var state: String
        /// The first item's name (`offerReceived`).
        public var firstItem: String?
        public var message: String?
        public init(
            offer: String, peer: EventPeer, items: Int, totalBytes: Int64, state: String, firstItem: String? = nil,
            message: String? = nil
        ) {
            self.offer = offer
            self.peer = peer
            self.items = items
            self.totalBytes = totalBytes
            self.state = state
            self.firstItem = firstItem
            self.message = message
        }
    }

    /// An outgoing transfer, as its events tell it: the item being sent, if one is.
    public struct TransferNews: Sendable, Equatable {
        public var transfer: String
        public var offer: String?
        public var peer: EventPeer
        public var items: Int
        public var totalBytes: Int64
        public var item: Int?
        public var itemName: String?
        public init(
            transfer: String, offer: String?, peer: EventPeer, items: Int, totalBytes: Int64, item: Int? = nil,
            itemName: String? = nil
        ) {
            self.transfer = transfer
            self.offer = offer
            self.peer = peer
            self.items = items
            self.totalBytes = totalBytes
            self.item = item
            self.itemName = itemName
        }
    }
}

/// A peer named in an event: its name and fingerprint (`localsend:…` for a LocalSend device).
public struct EventPeer: Sendable, Equatable {
    public var name: String
    public var fingerprint: String?
    public init(name: String, fingerprint: String?) {
        self.name = name
        self.fingerprint = fingerprint
    }
}

/// One event as a reader of the hub gets it: numbered, stamped, or the stream's first, `ready`.
public struct PublishedEvent: Sendable, Equatable {
    /// Increases by one per event for the agent's lifetime; `ready` carries the last number
    /// published before the subscription. A gap tells a slow reader it missed events.
    public var seq: Int
    public var at: Date
    /// nil: `ready`, the first of every stream (from here on the reader misses nothing).
    public var event: NodeEvent?
    public init(seq: Int, at: Date, event: NodeEvent?) {
        self.seq = seq
        self.at = at
        self.event = event
    }
}
