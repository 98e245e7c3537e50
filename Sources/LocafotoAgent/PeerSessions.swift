import LocafotoFormats
import LocafotoSession
import Logging
import NIOCore

/// The session layer (`PeerTransport`) in the agent's words: every role of this node opens its
/// sessions here. A peer that proves another key than the one expected is logged and refused
/// as `identityMismatch`; a peer gone during the handshake is `peerUnavailable`.
struct PeerSessions: Sendable {
    let transport: PeerTransport
    let logger: Logger

    func connect(to endpoint: PeerEndpoint) async throws -> PeerChannel.Async {
        try await transport.connect(host: endpoint.address, port: Int(endpoint.port))
    }

    /// Connects to `endpoint` and runs `withSession(on:…)`.
    func withSession<T: Sendable>(
        _ endpoint: PeerEndpoint, expected: Fingerprint?, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        try await withSession(on: try await connect(to: endpoint), endpoint: endpoint, expected: expected, body)
    }

    /// The initiator's session on `connection`; `refusal` words the message for a peer that
    /// proves another key than `expected`.
    func withSession<T: Sendable>(
        on connection: PeerChannel.Async, endpoint: PeerEndpoint, expected: Fingerprint?,
        refusal: ((PinningFailure) -> String)? = nil, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        do {
            return try await transport.withSession(on: connection, expected: expected, body)
        } catch let e as PinningFailure {
            let message = refusal?(e)
                ?? "REFUSED: the peer at \(endpoint.address):\(endpoint.port) proved key \(e.peer.fingerprint), not \(expected?.description ?? "?"); nothing was sent"
            logger.critical("\(message)")
            throw AgentError(.identityMismatch, message)
        } catch let e as SessionError {
            throw AgentError(e)
        }
    }

    /// The responder's session on an accepted `connection`.
    func acceptSession(_ connection: PeerChannel.Async, _ body: (PeerSession) async throws -> Void) async throws {
        do {
            try await transport.acceptSession(connection, body)
        } catch let e as SessionError {
            throw AgentError(e)
        }
    }
}

extension AgentError {
    init(_ e: SessionError) {
        self.init(e.kind == .closed ? .peerUnavailable : .internalError, e.message)
    }
}
