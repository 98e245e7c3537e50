import LocafotoFormats
import LocafotoNoise
import LocafotoWire
import NIOCore

/// An authenticated session after the handshake: the peer, the channel and both directions.
/// The relay sessions pass it around whole. One task reads and one task writes at a time
/// (a sender reads results on a second task while it streams); hence @unchecked Sendable.
final class PeerSession: @unchecked Sendable {
    let peer: PeerIdentity
    let channel: any Channel
    var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    var reader: SecureReader
    var writer: SecureWriter
    /// Transport frames taken from the channel so far, and the connection's count of frames
    /// decoded (`FrameBudget.transportFrames`, once `watchBacklog` found it).
    private var framesRead = 0
    private var budget: FrameBudget?
    /// A message read ahead (while a receiver waited for its user's decision), returned first by
    /// `next`; `.some(nil)`: the peer had closed.
    private var readAhead: WireMessage??

    init(
        peer: PeerIdentity, channel: any Channel, iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        reader: SecureReader, writer: SecureWriter
    ) {
        self.peer = peer
        self.channel = channel
        self.iterator = iterator
        self.reader = reader
        self.writer = writer
    }

    func send(_ message: WireMessage) async throws { try await writer.send(message) }

    /// The next message; nil when the peer closed the connection.
    func next() async throws -> WireMessage? {
        if let m = readAhead {
            readAhead = nil
            return m
        }
        guard let frame = try await iterator.next() else { return nil }
        framesRead += 1
        return try reader.open(frame)
    }

    /// Makes `m` the next message `next` returns.
    func unread(_ m: WireMessage?) { readAhead = .some(m) }

    /// Finds the connection's frame count, for `hasBacklog`.
    func watchBacklog() async {
        budget = try? await channel.pipeline.handler(type: HandshakeGuard.self).map(\.budget).get()
    }

    /// Whether frames from the peer have arrived that this session has not read yet: the peer is
    /// ahead, so a receiver can let verified photos wait for one commit with the next ones.
    /// False when unknown (`watchBacklog` not called).
    var hasBacklog: Bool {
        guard let budget else { return false }
        return budget.transportFrames.load(ordering: .relaxed) > framesRead
    }

    /// The next message that is not PING/PONG (a PING is answered).
    func nextSkippingPings() async throws -> WireMessage? {
        while let m = try await next() {
            switch m {
            case .ping: try await send(.pong)
            case .pong: continue
            default: return m
            }
        }
        return nil
    }

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

/// Every role opens its sessions here: one initiator path (`withSession`) and one responder
/// path (`acceptSession`), each the Noise XX handshake, pinning, the pairing record, then a
/// `PeerSession` for the role's own messages.
extension Agent {
    /// Connects to `endpoint` and runs `withSession(on:…)`.
    func withSession<T: Sendable>(
        _ endpoint: PeerEndpoint, expected: Fingerprint?, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        try await withSession(on: try await connect(to: endpoint), endpoint: endpoint, expected: expected, body)
    }

    /// Runs the handshake as initiator on `connection` (pinned to `expected` if given) and `body`
    /// on the session; the connection is closed afterwards. A peer that proves another key than
    /// `expected` is refused before this node says who it is (`refusal` words the message).
    func withSession<T: Sendable>(
        on connection: PeerChannel.Async, endpoint: PeerEndpoint, expected: Fingerprint?,
        refusal: ((PinningFailure) -> String)? = nil, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake: (PeerIdentity, CipherState, CipherState, [UInt8])
            do {
                handshake = try await Handshake.run(
                    initiator: true, identity: identity, hello: hello, expected: expected, next: { try await it.next() },
                    write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            } catch let e as PinningFailure {
                let message = refusal?(e)
                    ?? "REFUSED: the peer at \(endpoint.address):\(endpoint.port) proved key \(e.peer.fingerprint), not \(expected?.description ?? "?"); nothing was sent"
                logger.critical("\(message)")
                throw AgentError(.identityMismatch, message)
            }
            return try await body(session(after: handshake, connection: connection, iterator: it, outbound: outbound))
        }
    }

    /// Runs the handshake as responder on an accepted `connection` and `body` on the session;
    /// the connection is closed afterwards.
    func acceptSession(_ connection: PeerChannel.Async, _ body: (PeerSession) async throws -> Void) async throws {
        try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake = try await Handshake.run(
                initiator: false, identity: identity, hello: hello, next: { try await it.next() },
                write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            try await body(session(after: handshake, connection: connection, iterator: it, outbound: outbound))
        }
    }

    private func session(
        after handshake: (PeerIdentity, CipherState, CipherState, [UInt8]), connection: PeerChannel.Async,
        iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) -> PeerSession {
        let (peer, sendCipher, receiveCipher, handshakeHash) = handshake
        pairing.record(peer, handshakeHash: handshakeHash)
        return PeerSession(
            peer: peer, channel: connection.channel, iterator: iterator, reader: SecureReader(cipher: receiveCipher),
            writer: SecureWriter(outbound: outbound, cipher: sendCipher, allocator: connection.channel.allocator))
    }
}
