import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoSession
import LocafotoWire

extension PeerSession {
    /// Waits for the peer's DECISION on the session's offer, answering PINGs while it decides.
    /// Returns what to stream: the items of an accepted offer, none for a declined one
    /// (`session.decision` says which).
    /// A DECISION that breaks the rules (messages.md "Session state machine (sender)") is told to
    /// the peer with ERROR before the session ends, so that it learns why.
    package func awaitDecision(_ session: inout SenderSession, peerName: String) async throws -> [StreamItem] {
        while let m = try await next() {
            if let items = try await awaitingDecision(m, &session, peerName: peerName) { return items }
        }
        throw AgentError(.peerUnavailable, "\(peerName) closed the connection before deciding")
    }

    /// One message read while the DECISION is awaited: a PING answered, a DECISION taken (the
    /// items to stream; none for a declined offer), anything out of order told to the peer with
    /// ERROR and thrown. nil: go on waiting.
    package func awaitingDecision(_ m: WireMessage, _ session: inout SenderSession, peerName: String) async throws
        -> [StreamItem]?
    {
        let action: SenderAction
        do {
            action = try session.receive(m)
        } catch let e as WireError {
            try? await send(
                .error(ErrorBody(code: e.code, message: PeerFacing.message(e.code, e.message), offer: session.offer)))
            throw e
        }
        switch action {
        case .reply(let r):
            try await send(r)
            return nil
        case .none: return nil
        case .send(let items): return items
        case .declined: return []
        case .peerFailed(let e): throw WireError(e.code, "\(peerName) reported: \(e.message)")
        case .result: throw WireError(.internalError, "the sender session reported a result before the decision")
        }
    }
}
