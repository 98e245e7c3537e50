/// What the collecting side of a session must do after a message (the I/O layer carries it out).
public enum CollectAction: SessionActions {
    case none
    case reply(WireMessage)
    /// QUEUE: this many deposits wait. When more than 0, the relay's OFFER for the oldest
    /// follows on this session, received as any offer (`ReceiverSession`).
    case queue(Int)
    /// RECEIPTS: these, and whether more wait (asked for on another session).
    case receipts(Receipts)
    /// The relay reported an error and will close.
    case peerFailed(ErrorBody)
}

/// A node's side of COLLECT at a relay (protocol/messages.md "COLLECT", "QUEUE", "RECEIPTS"):
/// the request it sends, and which answer is due to it. Pure (no sockets, no clock): tested
/// message by message. After QUEUE the session goes on as a receiver's; after RECEIPTS it ends.
public struct CollectSession: Sendable {
    public enum State: Sendable, Equatable {
        case awaitingAnswer
        case answered
    }

    public let want: CollectWant
    public private(set) var state: State = .awaitingAnswer

    public init(want: CollectWant) { self.want = want }

    /// The message that opens the session, once the handshake is done.
    public var request: WireMessage { .collect(Collect(want: want)) }

    private var expected: String { want == .offers ? "QUEUE" : "RECEIPTS" }

    public mutating func receive(_ message: WireMessage) throws -> CollectAction {
        if let (action, ends) = message.answeredInAnyState(CollectAction.self) {
            if ends { state = .answered }
            return action
        }
        switch (state, message) {
        case (.awaitingAnswer, .queue(let q)) where want == .offers:
            state = .answered
            return .queue(q.offers)
        case (.awaitingAnswer, .receipts(let r)) where want == .receipts:
            state = .answered
            return .receipts(r)
        case (.awaitingAnswer, _):
            let asked = "COLLECT \(want.rawValue)"
            throw WireError(
                .protocolViolation, "the relay answered \(asked) with \(message.kind.name), not \(expected)")
        case (.answered, _):
            throw WireError(.protocolViolation, "the relay sent \(message.kind.name) after its \(expected)")
        }
    }
}

/// What a peer comes to a relay for, told by its first message (protocol/messages.md "Relay").
public enum RelayRequest: Sendable, Equatable {
    /// OFFER (with `to`): a deposit for a recipient.
    case deposit
    /// COLLECT offers: the relay answers QUEUE and hands on the oldest deposit for the peer.
    case offers
    /// COLLECT receipts: the relay answers RECEIPTS for the peer's own deposits.
    case receipts
    /// The peer reported an error instead (and will close).
    case peerFailed(ErrorBody)

    /// The request `first` makes. Anything else is a protocol violation, answered with ERROR.
    public init(first: WireMessage) throws {
        switch first {
        case .offer: self = .deposit
        case .collect(let c): self = c.want == .offers ? .offers : .receipts
        case .error(let e): self = .peerFailed(e)
        default:
            throw WireError(
                .protocolViolation,
                "this is a relay: the first message must be OFFER (a deposit) or COLLECT, not \(first.kind.name)")
        }
    }
}
