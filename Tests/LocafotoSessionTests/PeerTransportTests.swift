import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import LocafotoSession

/// The transport every role uses, over real TCP on loopback: bind, connect, the Noise XX
/// handshake with HELLOs, pinning, and transport messages both ways.
@Suite struct PeerTransportTests {
    /// Handshakes seen by one node (the pairing book's view).
    final class Seen: Sendable {
        let list = Mutex<[(fingerprint: Fingerprint, hash: [UInt8])]>([])
    }

    /// The deadlines are hang guards here, not assertions: on a loaded machine the test's tasks
    /// may wait a long time for a thread while the event loop's clock runs on.
    static var patientLimits: ConnectionLimits {
        var l = ConnectionLimits()
        l.handshakeTimeout = .minutes(10)
        l.frameTimeout = .minutes(10)
        return l
    }

    /// The suite's own event loop: other suites' work on the shared one cannot delay it.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    static func node(_ name: String, seen: Seen) throws -> PeerTransport {
        let key = SigningKey.generate()
        return PeerTransport(
            group: group, key: try key.agreementKey(),
            hello: { Hello(ed25519: key.publicKey.bytes, name: name, caps: ["resume"]) },
            idleTimeout: .minutes(10), limits: patientLimits,
            handshakeCompleted: { peer, hash in seen.list.withLock { $0.append((peer.fingerprint, hash)) } })
    }

    static func fingerprint(of t: PeerTransport) -> Fingerprint {
        Fingerprint(publicKey: try! SigningPublicKey(bytes: t.hello().ed25519.bytes))
    }

    /// `transport` listening on a free loopback port with default limits.
    static func listen(
        _ transport: PeerTransport
    ) async throws -> (NIOAsyncChannel<PeerChannel.Async, Never>, AcceptedConnections<ByteBuffer, ByteBuffer>, Int) {
        let accepted = AcceptedConnections<ByteBuffer, ByteBuffer>()
        let server = try await transport.bind(
            host: "127.0.0.1", port: 0, gate: ConnectionGate(limits: patientLimits), accepted: accepted,
            logger: Logger(label: "test"))
        return (server, accepted, try #require(server.channel.localAddress?.port))
    }

    /// Serves one connection on `server` with `body`, returning what it returned.
    static func serveOne(
        _ server: NIOAsyncChannel<PeerChannel.Async, Never>, accepted: AcceptedConnections<ByteBuffer, ByteBuffer>,
        transport: PeerTransport, _ body: @escaping @Sendable (PeerSession) async throws -> Void
    ) async throws {
        try await server.executeThenClose { inbound in
            for try await connection in inbound {
                accepted.take(connection)
                try await transport.acceptSession(connection, body)
                return
            }
        }
    }

    @Test("initiator and responder authenticate each other, agree on the handshake hash and talk both ways")
    func sessionBothWays() async throws {
        let aliceSeen = Seen()
        let bobSeen = Seen()
        let alice = try Self.node("alice", seen: aliceSeen)
        let bob = try Self.node("bob", seen: bobSeen)
        let (server, accepted, port) = try await Self.listen(bob)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                try await Self.serveOne(server, accepted: accepted, transport: bob) { s in
                    #expect(s.peer.name == "alice")
                    #expect(s.peer.fingerprint == Self.fingerprint(of: alice))
                    #expect(s.peer.caps == ["resume"])
                    let m = try await s.next()
                    #expect(m == .ping)
                    try await s.send(.pong)
                    #expect(try await s.next() == nil)  // alice closed
                }
            }
            let connection = try await alice.connect(host: "127.0.0.1", port: port)
            try await alice.withSession(on: connection, expected: Self.fingerprint(of: bob)) { s in
                #expect(s.peer.name == "bob")
                try await s.send(.ping)
                #expect(try await s.next() == .pong)
            }
            try await tasks.waitForAll()
        }
        let a = aliceSeen.list.withLock { $0 }
        let b = bobSeen.list.withLock { $0 }
        #expect(a.count == 1 && b.count == 1)
        #expect(a.first?.fingerprint == Self.fingerprint(of: bob))
        #expect(b.first?.fingerprint == Self.fingerprint(of: alice))
        #expect(a.first?.hash == b.first?.hash && a.first?.hash.count == 64)
    }

    @Test("a responder that proves another key is refused before the initiator says who it is")
    func pinning() async throws {
        let aliceSeen = Seen()
        let bobSeen = Seen()
        let alice = try Self.node("alice", seen: aliceSeen)
        let bob = try Self.node("bob", seen: bobSeen)
        let someoneElse = Fingerprint(publicKey: SigningKey.generate().publicKey)
        let (server, accepted, port) = try await Self.listen(bob)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // Bob never completes a session: alice closes after message 2.
                await #expect(throws: SessionError.self) {
                    try await Self.serveOne(server, accepted: accepted, transport: bob) { _ in
                        Issue.record("no session expected")
                    }
                }
            }
            let connection = try await alice.connect(host: "127.0.0.1", port: port)
            let refusal = await #expect(throws: PinningFailure.self) {
                try await alice.withSession(on: connection, expected: someoneElse) { _ in
                    Issue.record("no session expected")
                }
            }
            #expect(refusal?.peer.fingerprint == Self.fingerprint(of: bob))
            try await tasks.waitForAll()
        }
        #expect(aliceSeen.list.withLock { $0.isEmpty })
        #expect(bobSeen.list.withLock { $0.isEmpty })
    }

    @Test("the gate refuses connections over the per-address cap before any byte is read")
    func gate() async throws {
        let bob = try Self.node("bob", seen: Seen())
        var limits = Self.patientLimits
        limits.maxPerAddress = 1
        let gate = ConnectionGate(limits: limits)
        let accepted = AcceptedConnections<ByteBuffer, ByteBuffer>()
        let server = try await bob.bind(
            host: "127.0.0.1", port: 0, gate: gate, accepted: accepted, logger: Logger(label: "test"))
        let port = try #require(server.channel.localAddress?.port)
        try await server.executeThenClose { inbound in
            var it = inbound.makeAsyncIterator()
            let first = try await bob.connect(host: "127.0.0.1", port: port)
            let admitted = try #require(try await it.next())
            accepted.take(admitted)
            // Over the cap: closed by the listener before any byte is read; its client side sees
            // the end, and the accept loop never gets it.
            let second = try await bob.connect(host: "127.0.0.1", port: port)
            try await second.executeThenClose { inbound, _ in
                var i = inbound.makeAsyncIterator()
                let end = try await i.next()
                #expect(end == nil)
            }
            // A slot freed is a slot usable: once the first closes, the next one is admitted.
            try await first.executeThenClose { _, _ in }
            try await admitted.executeThenClose { _, _ in }
            let third = try await bob.connect(host: "127.0.0.1", port: port)
            let next = try #require(try await it.next())
            accepted.take(next)
            try await third.executeThenClose { _, _ in }
            try await next.executeThenClose { _, _ in }
        }
    }
}
