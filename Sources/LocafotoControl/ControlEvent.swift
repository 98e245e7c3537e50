import Foundation

/// One line of `GET /v1/events`: something that happened in the agent, as it happened.
/// Interfaces (the CLI's `inbox --watch`, `send` and `accept` progress, notifications, the web
/// app) follow this stream instead of polling.
public struct ControlEvent: Codable, Sendable, Equatable {
    /// Increases by one per event for the agent's lifetime; a gap tells a slow reader it
    /// missed events (the hub drops the oldest for a reader that falls too far behind).
    public var seq: Int
    /// When it happened.
    public var at: Date
    public var kind: Kind
    /// The offer or transfer id, for events about one.
    public var offer: String?
    public var transfer: String?
    /// The local import's id, for `import.*` events.
    public var job: String?
    public var peer: PeerRef?
    /// Item index within the offer, for `item.*` events.
    public var item: Int?
    public var name: String?
    /// Bytes done so far, for `*.progress`, and the item's or transfer's size.
    public var bytes: Int64?
    public var totalBytes: Int64?
    /// Over the last interval, for `*.progress`.
    public var bytesPerSecond: Double?
    public var items: Int?
    public var state: String?
    public var photo: String?
    public var message: String?

    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// An offer reached the inbox and waits for a decision (or was auto-accepted).
        case offerReceived = "offer.received"
        /// A preview of a pending offer's item came after the offer (`item`; cap `late-preview`).
        case offerPreview = "offer.preview"
        /// The user (or the policy) accepted or rejected an offer; `state` says which.
        case offerDecided = "offer.decided"
        /// An incoming offer ended: `state` is done, failed, rejected or expired.
        case offerFinished = "offer.finished"
        /// Bytes of an incoming item arrived (at most a few per second per offer).
        case itemProgress = "item.progress"
        /// An item was imported into the vault (`photo` is its id), or waits sealed (locked vault).
        case itemImported = "item.imported"
        /// An outgoing transfer changed state (`state`: connecting, offered, sending, done, …).
        case transferState = "transfer.state"
        /// Bytes of an outgoing transfer went out (at most a few per second per transfer).
        case transferProgress = "transfer.progress"
        /// A local import (`POST /v1/imports`) went on: `item` files of `items` handled, `bytes`
        /// imported (at most a few per second per import).
        case importProgress = "import.progress"
        /// A local import ended: `state`, `message` ("N imported, M skipped"); the import's
        /// snapshot has the details.
        case importFinished = "import.finished"
        /// The background indexer read a photo's facts (`photo`); its thumbnail is made when
        /// first asked for.
        case photoIndexed = "photo.indexed"
        /// Photos' favourite, hidden or tag state changed (`POST /v1/photos/batch`): `state` is
        /// the action (tag, untag, favorite, …), `items` how many photos, `photo` the one when
        /// the call named a single photo. Also photos added by `POST /v1/photos/filter` and
        /// `POST /v1/compress` (`state` filter or compress). Lets a page showing the vault
        /// redraw what it shows.
        case photoChanged = "photo.changed"
        /// Photos left the vault (batch delete, or an album deleted with its photos): `items`
        /// how many, `photo` the one when a single photo went.
        case photoDeleted = "photo.deleted"
        /// An album was created, renamed, deleted, locked or unlocked, had its cover set, or
        /// gained or lost photos: `state` is the action, `name` the album (the new name after a
        /// rename, the target of a move or copy), `items` the photos concerned.
        case albumChanged = "album.changed"
        case peerAppeared = "peer.appeared"
        case peerLeft = "peer.left"
        case vaultLocked = "vault.locked"
        case vaultUnlocked = "vault.unlocked"
        /// The first event of every stream: from here on the reader misses nothing. `seq` is
        /// the last event published before it.
        case ready
        /// The reader fell behind: `message` says how many events it missed, `seq` is the last
        /// of them.
        case missed
    }

    public init(seq: Int = 0, at: Date = Date(), kind: Kind) {
        self.seq = seq
        self.at = at
        self.kind = kind
    }
}
