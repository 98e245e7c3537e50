import LocafotoCrypto
import LocafotoFormats
import LocafotoNoise
import LocafotoWire
import Logging
import NIOCore
import NIOPosix

/// How every role reaches a peer and is reached: one `connect` and one `bind` for TCP with the
/// peer pipeline (`PeerChannel`), one initiator path (`withSession`) and one responder path
/// (`acceptSession`), each the Noise XX handshake, pinning and the node's HELLO, then a
/// `PeerSession` for the role's own messages. Direct sends, receiving, relay deposits,
/// collections and deliveries all go through it.
package struct PeerTransport: Sendable {
    package let group: any EventLoopGroup
    /// This node's Noise static key (the X25519 twin of its Ed25519 identity).
    package let key: X25519SecretKey
    /// This node's HELLO (its Ed25519 key, name and capabilities), read at each handshake: the
    /// display name may change while the node runs.
    package let hello: @Sendable () -> Hello
    /// A peer silent this long is gone (`agent --idle-timeout`).
    package let idleTimeout: TimeAmount
    package let limits: ConnectionLimits
    /// Told of every completed handshake: the peer and the handshake hash (pairing codes).
    package let handshakeCompleted: @Sendable (PeerIdentity, [UInt8]) -> Void

    package init(
        group: any EventLoopGroup, key: X25519SecretKey, hello: @escaping @Sendable () -> Hello,
        idleTimeout: TimeAmount,
        limits: ConnectionLimits, handshakeCompleted: @escaping @Sendable (PeerIdentity, [UInt8]) -> Void
    ) {
        self.group = group
        self.key = key
        self.hello = hello
        self.idleTimeout = idleTimeout
        self.limits = limits
        self.handshakeCompleted = handshakeCompleted
    }

    /// A TCP connection to `host:port` with the peer pipeline; no byte sent yet.
    package func connect(host: String, port: Int) async throws -> PeerChannel.Async {
        try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .connect(host: host, port: port) { [idleTimeout, limits] in
                PeerChannel.configure($0, idleTimeout: idleTimeout, limits: limits)
            }
    }

    /// Listens on `host:port`. Each accepted connection passes `gate` (refused ones are closed
    /// before any byte is read and never come out) and is held in `accepted` until the accept
    /// loop takes it.
    package func bind(
        host: String, port: Int, gate: ConnectionGate, accepted: AcceptedConnections<ByteBuffer, ByteBuffer>,
        logger: Logger
    ) async throws -> NIOAsyncChannel<PeerChannel.Async, Never> {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Admission on the accept path, in accept order: the child initializers below run
            // on several event loops at once, so a gate there refused whichever connection of a
            // burst came last to it, not the one over the cap (an admitted one was closed).
            .serverChannelInitializer { server in
                server.eventLoop.makeCompletedFuture {
                    try server.pipeline.syncOperations.addHandler(AdmissionHandler(gate: gate, logger: logger))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.socketOption(.so_keepalive), value: 1)
            .bind(host: host, port: port) { [idleTimeout, limits] channel in
                PeerChannel.configure(channel, idleTimeout: idleTimeout, limits: limits).map { accepted.hold($0) }
            }
    }

    /// Runs the handshake as initiator on `connection` and `body` on the session; the connection
    /// is closed afterwards. With `expected`, a responder that proves another key is refused
    /// (`PinningFailure`) before this node says who it is.
    package func withSession<T: Sendable>(
        on connection: PeerChannel.Async, expected: Fingerprint?, _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake = try await Handshake.run(
                initiator: true, key: key, hello: hello(), expected: expected, next: { try await it.next() },
                write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            return try await body(session(after: handshake, connection: connection, iterator: it, outbound: outbound))
        }
    }

    /// Runs the handshake as responder on an accepted `connection` and `body` on the session;
    /// the connection is closed afterwards.
    package func acceptSession(_ connection: PeerChannel.Async, _ body: (PeerSession) async throws -> Void) async throws
    {
        try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake = try await Handshake.run(
                initiator: false, key: key, hello: hello(), next: { try await it.next() },
                write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            try await body(session(after: handshake, connection: connection, iterator: it, outbound: outbound))
        }
    }

    private func session(
        after handshake: (PeerIdentity, CipherState, CipherState, [UInt8]), connection: PeerChannel.Async,
        iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) -> PeerSession {
        let (peer, sendCipher, receiveCipher, handshakeHash) = handshake
        handshakeCompleted(peer, handshakeHash)
        return PeerSession(
            peer: peer, channel: connection.channel, iterator: iterator, reader: SecureReader(cipher: receiveCipher),
            writer: SecureWriter(outbound: outbound, cipher: sendCipher, allocator: connection.channel.allocator))
    }
}

/// On the listening channel: each accepted connection passes the gate before it is set up.
/// A refused one is closed before any byte is read (no handshake, no session task); an
/// admitted one is counted until it closes.
final class AdmissionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    let gate: ConnectionGate
    let logger: Logger

    init(gate: ConnectionGate, logger: Logger) {
        self.gate = gate
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        let address = child.remoteAddress?.ipAddress ?? "unknown"
        if let (refusal, count) = gate.admit(address) {
            if let count {
                logger.warning("refused \(count) connection(s), latest from \(address): \(refusal.message)")
            }
            child.close(promise: nil)
            return
        }
        child.closeFuture.whenComplete { [gate] _ in gate.release(address) }
        context.fireChannelRead(data)
    }
}
