import Foundation

/// An outgoing transfer as the control API shows it: `GET /v1/transfers`, `GET /v1/transfers/{id}`,
/// the answer of `POST /v1/send` (one per peer) and of `POST /v1/transfers/{id}/cancel`.
public struct TransferSnapshot: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        /// `interrupted`: the session broke after the offer; it is offered again (same offer id)
        /// when the peer is reachable, and resumes where the receiver stopped.
        /// `held`: a relay holds the photos for the peer; the relay's receipt ends the transfer.
        /// `cancelled`: stopped by this node's user (`locafoto cancel`) or by the receiver's.
        case preparing, connecting, offered, sending, interrupted, held, done, rejected, expired, failed, cancelled

        /// The transfer has ended for good (`held` has not: the relay's receipt ends it).
        public var isFinal: Bool {
            switch self {
            case .done, .rejected, .expired, .failed, .cancelled: true
            case .preparing, .connecting, .offered, .sending, .interrupted, .held: false
            }
        }
    }

    /// Where one item is (control-api.md "transfers"). A string in the control API's JSON; a
    /// status this build does not know (a newer agent's) reads as itself.
    public struct ItemStatus: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Before the offer: read, hashed, transformed.
        public static let preparing = ItemStatus(rawValue: "preparing")
        /// In the offer, not sent yet.
        public static let offered = ItemStatus(rawValue: "offered")
        public static let sending = ItemStatus(rawValue: "sending")
        /// The receiver's ITEM_RESULT: in its vault, stored sealed until it unlocks, or refused.
        public static let imported = ItemStatus(rawValue: "imported")
        public static let queued = ItemStatus(rawValue: "queued")
        public static let failed = ItemStatus(rawValue: "failed")
        /// Imported: the receiver's vault already held the content, and kept the photo it had.
        public static let duplicate = ItemStatus(rawValue: "duplicate")
        /// A relay holds it for the recipient; then the recipient's status, or `delivered` for an
        /// item a summarised receipt left out.
        public static let held = ItemStatus(rawValue: "held")
        public static let delivered = ItemStatus(rawValue: "delivered")

        /// An item still held when the relay's receipt ends the transfer undelivered takes the
        /// transfer's end state (`rejected`, `expired`, `failed`).
        public init(endedWith state: State) { self.init(rawValue: state.rawValue) }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }

        public var description: String { rawValue }
    }

    public struct Item: Codable, Sendable, Equatable {
        public var name: String
        public var bytes: Int64
        public var sentBytes: Int64
        public var status: ItemStatus
        public var photo: String?
        public var code: String?
        public var message: String?
        /// The bytes the receiver already had when the last session resumed this item (its offset).
        public var resumedBytes: Int64?

        public init(
            name: String, bytes: Int64, sentBytes: Int64 = 0, status: ItemStatus, photo: String? = nil,
            code: String? = nil,
            message: String? = nil, resumedBytes: Int64? = nil
        ) {
            self.name = name
            self.bytes = bytes
            self.sentBytes = sentBytes
            self.status = status
            self.photo = photo
            self.code = code
            self.message = message
            self.resumedBytes = resumedBytes
        }
    }

    public var id: String
    public var peer: PeerRef
    public var state: State
    public var message: String?
    /// Why a `failed` transfer failed, as a control-API error code (`notFound`: the peer or a
    /// file does not exist; `unsupported`: a file is not a photo; `peerUnavailable`: the peer
    /// cannot be reached): `send` exits with its status (`ErrorCode.exitStatus`). Absent otherwise.
    public var code: ErrorCode?
    public var offer: String?
    public var items: [Item]
    public var sentBytes: Int64
    public var totalBytes: Int64
    /// Size of the files before compression (equals totalBytes without --compress).
    public var originalBytes: Int64 = 0
    public var startedAt: Date
    public var finishedAt: Date?
    /// Counts changes of state, message or end (not of bytes): a client that saw phase N
    /// waits for N + 1 (`GET /v1/transfers/{id}?after=N&wait=S`) instead of polling.
    public var phase = 0

    public init(
        id: String, peer: PeerRef, state: State, message: String? = nil, offer: String? = nil,
        items: [Item], sentBytes: Int64, totalBytes: Int64, originalBytes: Int64 = 0, startedAt: Date,
        finishedAt: Date? = nil,
        phase: Int = 0
    ) {
        self.id = id
        self.peer = peer
        self.state = state
        self.message = message
        self.offer = offer
        self.items = items
        self.sentBytes = sentBytes
        self.totalBytes = totalBytes
        self.originalBytes = originalBytes
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.phase = phase
    }

    /// Nothing more will happen that `send` waits for: the transfer ended, or a relay holds it.
    public var isOver: Bool { finishedAt != nil || state == .held }
}

/// `POST /v1/send` with several peers: one transfer each.
public struct TransferList: Codable, Sendable, Equatable {
    public var transfers: [TransferSnapshot]
    public init(transfers: [TransferSnapshot]) { self.transfers = transfers }
}
