import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoSession
import LocafotoWire

extension PeerSession {
    /// Sends COLLECT to the relay at the other end and reads its answer (`CollectSession`):
    /// QUEUE or RECEIPTS (protocol/messages.md "Relay"); an ERROR instead is thrown with the
    /// relay's code, a closed connection as unavailable. Receiving collects offers with it,
    /// sending collects receipts.
    package func collect(_ want: CollectWant) async throws -> CollectAction {
        var collect = CollectSession(want: want)
        try await send(collect.request)
        while let m = try await next() {
            switch try collect.receive(m) {
            case .none: continue
            case .reply(let r): try await send(r)
            case .peerFailed(let e): throw WireError(e.code, "the relay \(peer.name) reported: \(e.message)")
            case let answer: return answer
            }
        }
        throw AgentError(.peerUnavailable, "the relay \(peer.name) closed the connection before answering COLLECT")
    }
}
