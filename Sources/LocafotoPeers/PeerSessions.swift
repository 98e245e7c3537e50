import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoSession
import Logging
import NIOCore
import NIOPosix

/// The session layer (`PeerTransport`) in the agent's words: every role of this node opens its
/// sessions here. A peer that proves another key than the one expected is logged and refused
/// as `identityMismatch`; a peer gone during the handshake is `peerUnavailable`.
package struct PeerSessions: Sendable {
    package let transport: PeerTransport
    package let logger: Logger

    package init(transport: PeerTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// How often a receiver PINGs while the sender only writes or waits (framing.md): 20 s, or a
    /// third of this node's idle timeout when that is shorter, so that a sender configured alike
    /// is not closed for silence in the middle of a long item.
    package var pingInterval: Duration {
        min(.seconds(20), .nanoseconds(transport.idleTimeout.nanoseconds) / 3)
    }

    /// Connects; a failure is worded for a person (what happened at which address), never
    /// NIO's description of its connection attempts.
    package func connect(to endpoint: PeerEndpoint) async throws -> PeerChannel.Async {
        do {
            return try await transport.connect(host: endpoint.address, port: Int(endpoint.port))
        } catch {
            let at =
                endpoint.family == "ipv6"
                ? "[\(endpoint.address)]:\(endpoint.port)" : "\(endpoint.address):\(endpoint.port)"
            throw AgentError(.peerUnavailable, "cannot connect to \(at): \(NetworkFailure.reason(error))")
        }
    }

    /// Connects to `endpoint` and runs `withSession(on:…)`.
    package func withSession<T: Sendable>(
        _ endpoint: PeerEndpoint, expected: Fingerprint?, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        try await withSession(on: try await connect(to: endpoint), endpoint: endpoint, expected: expected, body)
    }

    /// The initiator's session on `connection`; `refusal` words the message for a peer that
    /// proves another key than `expected`.
    package func withSession<T: Sendable>(
        on connection: PeerChannel.Async, endpoint: PeerEndpoint, expected: Fingerprint?,
        refusal: ((PinningFailure) -> String)? = nil, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        do {
            return try await transport.withSession(on: connection, expected: expected, body)
        } catch let e as PinningFailure {
            let message =
                refusal?(e)
                ?? "REFUSED: the peer at \(endpoint.address):\(endpoint.port) proved key \(e.peer.fingerprint), not \(expected?.description ?? "?"); nothing was sent"
            logger.critical("\(message)")
            throw AgentError(.identityMismatch, message)
        } catch let e as SessionError {
            throw AgentError(e)
        }
    }

    /// The responder's session on an accepted `connection`.
    package func acceptSession(_ connection: PeerChannel.Async, _ body: (PeerSession) async throws -> Void) async throws
    {
        do {
            try await transport.acceptSession(connection, body)
        } catch let e as SessionError {
            throw AgentError(e)
        }
    }
}

extension AgentError {
    package init(_ e: SessionError) {
        self.init(e.kind == .closed ? .peerUnavailable : .internalError, e.message, cause: e)
    }
}
