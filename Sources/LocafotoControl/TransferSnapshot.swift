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

    public struct Item: Codable, Sendable, Equatable {
        public var name: String
        public var size: Int64
        public var sent: Int64
        /// preparing, waiting, sending, sent, imported, queued, failed, skipped… (control-api.md).
        public var status: String
        public var photo: String?
        public var code: String?
        public var message: String?
        /// Where the last session started this item when it resumed an interrupted one.
        public var resumedAt: Int64?

        public init(
            name: String, size: Int64, sent: Int64 = 0, status: String, photo: String? = nil, code: String? = nil,
            message: String? = nil, resumedAt: Int64? = nil
        ) {
            self.name = name
            self.size = size
            self.sent = sent
            self.status = status
            self.photo = photo
            self.code = code
            self.message = message
            self.resumedAt = resumedAt
        }
    }

    public var id: String
    public var peer: String
    public var peerFingerprint: String?
    public var state: State
    public var message: String?
    public var offer: String?
    public var items: [Item]
    public var bytesSent: Int64
    public var totalBytes: Int64
    /// Size of the files before compression (equals totalBytes without --compress).
    public var originalBytes: Int64 = 0
    public var startedAt: Date
    public var finishedAt: Date?
    /// Counts changes of state, message or end (not of bytes): a client that saw phase N
    /// waits for N + 1 (`GET /v1/transfers/{id}?after=N&wait=S`) instead of polling.
    public var phase = 0

    public init(
        id: String, peer: String, peerFingerprint: String? = nil, state: State, message: String? = nil, offer: String? = nil,
        items: [Item], bytesSent: Int64, totalBytes: Int64, originalBytes: Int64 = 0, startedAt: Date, finishedAt: Date? = nil,
        phase: Int = 0
    ) {
        self.id = id
        self.peer = peer
        self.peerFingerprint = peerFingerprint
        self.state = state
        self.message = message
        self.offer = offer
        self.items = items
        self.bytesSent = bytesSent
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
