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
        guard let frame = try await iterator.next() else { return nil }
        framesRead += 1
        return try reader.open(frame)
    }

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

extension Agent {
    /// Connects to `endpoint`, runs the handshake as initiator (pinned to `expected` if given)
    /// and runs `body` on the session; the connection is closed afterwards.
    func withSession<T: Sendable>(
        _ endpoint: PeerEndpoint, expected: Fingerprint?, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        let connection = try await connect(to: endpoint)
        return try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake: (PeerIdentity, CipherState, CipherState, [UInt8])
            do {
                handshake = try await Handshake.run(
                    initiator: true, identity: identity, hello: hello, expected: expected, next: { try await it.next() },
                    write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            } catch let e as PinningFailure {
                let message = "REFUSED: the peer at \(endpoint.address):\(endpoint.port) proved key \(e.peer.fingerprint), not \(expected?.description ?? "?"); nothing was sent"
                logger.critical("\(message)")
                throw AgentError(.identityMismatch, message)
            }
            let (peer, sendCipher, receiveCipher, handshakeHash) = handshake
            pairing.record(peer, handshakeHash: handshakeHash)
            let session = PeerSession(
                peer: peer, channel: connection.channel, iterator: it, reader: SecureReader(cipher: receiveCipher),
                writer: SecureWriter(outbound: outbound, cipher: sendCipher, allocator: connection.channel.allocator))
            return try await body(session)
        }
    }
}
