import LocafotoWire
import LocafotoSession

extension PeerSession {
    /// Waits for the peer's DECISION on the session's offer, answering PINGs while it decides.
    /// Returns what to stream: the items of an accepted offer, none for a declined one
    /// (`session.decision` says which).
    func awaitDecision(_ session: inout SenderSession, peerName: String) async throws -> [StreamItem] {
        while let m = try await next() {
            switch try session.receive(m) {
            case .reply(let r): try await send(r)
            case .none: continue
            case .send(let items): return items
            case .declined: return []
            case .peerFailed(let e): throw WireError(e.code, "\(peerName) reported: \(e.message)")
            case .result: throw WireError(.internalError, "the sender session reported a result before the decision")
            }
        }
        throw AgentError(.peerUnavailable, "\(peerName) closed the connection before deciding")
    }
}
