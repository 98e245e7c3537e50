/// One item a sender must stream after an accepted DECISION, from `offset` (a resume point the
/// receiver named, or 0).
public struct StreamItem: Sendable, Equatable {
    public let item: Int
    public let offset: Int64

    public init(item: Int, offset: Int64) {
        self.item = item
        self.offset = offset
    }
}

/// What the sending side of a session must do after a message (the I/O layer carries it out).
public enum SenderAction: SessionActions {
    case none
    case reply(WireMessage)
    /// The offer was accepted: stream these items in this order, then DONE. Items the DECISION
    /// listed as completed are not among them (`SenderSession.decision` has them).
    case send([StreamItem])
    /// The offer was rejected or expired: the session is over.
    case declined(Decision)
    /// An item's outcome, to record; once every streamed item has one, `state` is `finished`.
    case result(ItemResult)
    /// The peer reported an error and will close.
    case peerFailed(ErrorBody)
}

/// The sender's session state machine, the mirror of `ReceiverSession`: after the OFFER went
/// out, which messages are legal when, what the DECISION asks to be sent (resume offsets,
/// completed items), and which ITEM_RESULTs are due. Pure (no sockets, no clock): tested message
/// by message. Used for direct sends, deposits at a relay and a relay's deliveries.
public struct SenderSession: Sendable {
    public enum State: Sendable, Equatable {
        case awaitingDecision
        /// Accepted: items are being streamed and their results collected.
        case sending
        case finished
    }

    public let offer: String
    private let sizes: [Int64]
    private let statuses: Set<ItemStatus>
    public private(set) var state: State = .awaitingDecision
    /// The peer's DECISION, once it came.
    public private(set) var decision: Decision?
    /// Results so far, by item.
    public private(set) var results: [Int: ItemResult] = [:]
    /// The items this session streams (every offered item but those completed earlier).
    public private(set) var streamed: Set<Int> = []
    /// Items whose content changed since an earlier session (new photo key): sent from 0 even
    /// when the DECISION names a resume offset, since the receiver's prefix is of the old content.
    private let restarting: Set<Int>

    /// - Parameter resultStatuses: the statuses the peer may report: a recipient's (`imported`,
    ///   `queued`, `failed`), or a relay's for a deposit (`held`, `failed`).
    /// - Parameter restarting: items re-keyed since an earlier session of this offer (their file
    ///   changed): streamed from 0 whatever the DECISION's `resume` says.
    public init(
        offer: String, itemSizes: [Int64], resultStatuses: Set<ItemStatus> = [.imported, .queued, .failed],
        restarting: Set<Int> = []
    ) {
        self.offer = offer
        sizes = itemSizes
        statuses = resultStatuses
        self.restarting = restarting
    }

    public mutating func receive(_ message: WireMessage) throws -> SenderAction {
        if let (action, ends) = message.answeredInAnyState(SenderAction.self) {
            if ends { state = .finished }
            return action
        }
        switch (state, message) {
        case (.awaitingDecision, .decision(let d)):
            guard d.offer == offer else { throw WireError(.unknownOffer, "DECISION for another offer than \(offer)") }
            decision = d
            guard d.decision == .accepted else {
                state = .finished
                return .declined(d)
            }
            try d.validate(itemSizes: sizes)
            let completed = Set((d.completed ?? []).map(\.item))
            let offsets = Dictionary((d.resume ?? []).map { ($0.item, $0.offset) }, uniquingKeysWith: { a, _ in a })
            let items = sizes.indices.filter { !completed.contains($0) }
            streamed = Set(items)
            state = items.isEmpty ? .finished : .sending
            return .send(items.map { StreamItem(item: $0, offset: restarting.contains($0) ? 0 : offsets[$0] ?? 0) })
        case (.sending, .itemResult(let r)):
            guard r.offer == offer else {
                throw WireError(.unknownOffer, "ITEM_RESULT for another offer than \(offer)")
            }
            guard streamed.contains(r.item) else {
                throw WireError(.protocolViolation, "ITEM_RESULT for item \(r.item), which is not being sent")
            }
            guard results[r.item] == nil else {
                throw WireError(.protocolViolation, "a second ITEM_RESULT for item \(r.item)")
            }
            guard statuses.contains(r.status) else {
                throw WireError(
                    .protocolViolation, "ITEM_RESULT status '\(r.status.rawValue)' is not one this peer may report")
            }
            results[r.item] = r
            if results.count == streamed.count { state = .finished }
            return .result(r)
        default:
            throw WireError(.protocolViolation, "unexpected \(message.kind) message in state \(state)")
        }
    }

    /// The user cancels the transfer (protocol/messages.md "Cancelling"): the ERROR to send
    /// before closing, or nil when the session is already over. Anything received afterwards is
    /// out of order.
    public mutating func cancel(_ message: String = "the sender cancelled the transfer") -> WireMessage? {
        guard state != .finished else { return nil }
        state = .finished
        return .error(ErrorBody(code: .cancelled, message: message, offer: offer))
    }
}
