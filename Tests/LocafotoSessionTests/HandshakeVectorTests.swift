import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoTestSupport
import LocafotoWire
import NIOCore
import Testing

@testable import LocafotoNoise
@testable import LocafotoSession

/// protocol/vectors/handshake.json, made by scripts/gen-vectors-handshake.py with the Python
/// `noiseprotocol` library: this agent's handshake (`Handshake.run` with the vectors' static and
/// ephemeral keys, fed the other side's messages from memory) must write every message byte for
/// byte, reach the same h, learn the same peer, and encrypt the first transport messages alike.
@Suite("Handshake vectors (protocol/vectors/handshake.json)")
struct HandshakeVectorTests {
    static func load() throws -> Vector { try Vector.load("handshake.json") }

    /// A party's keys, checked against the vector: Ed25519 from the seed, the X25519 static key
    /// derived from it as the agent derives its own, and the fixed ephemeral.
    struct Keys {
        let signing: SigningKey
        let statik: X25519SecretKey
        let ephemeral: X25519SecretKey

        init(_ p: Vector) throws {
            let name = try p.name.string
            signing = try SigningKey(seed: SecretBytes(copying: p.ed25519Seed.bytes))
            #expect(signing.publicKey.bytes == (try p.ed25519Public.bytes), "\(name): Ed25519 public key")
            statik = try signing.agreementKey()
            #expect(
                statik.secret.unsafeCopy() == (try p.x25519StaticPrivate.bytes), "\(name): X25519 static private key")
            #expect(statik.publicKey.bytes == (try p.x25519StaticPublic.bytes), "\(name): X25519 static public key")
            #expect(try signing.publicKey.agreementKey() == statik.publicKey, "\(name): pk_to_curve25519")
            let fingerprint = try p.fingerprint.string
            #expect(Fingerprint(publicKey: signing.publicKey).description == fingerprint, "\(name): fingerprint")
            ephemeral = try X25519SecretKey(secret: SecretBytes(copying: p.ephemeralPrivate.bytes))
            #expect(ephemeral.publicKey.bytes == (try p.ephemeralPublic.bytes), "\(name): ephemeral public key")
        }
    }

    /// What `Handshake.run` wrote (frames, length included) and how it ended.
    struct Run {
        var written: [[UInt8]] = []
        var result: (PeerIdentity, CipherState, CipherState, [UInt8])?
        var error: (any Error)?
    }

    /// The agent's own handshake as one side, the other side's messages (without their frame
    /// length, as the frame decoder hands them on) fed from `incoming`.
    static func run(as p: Vector, initiator: Bool, expected: Fingerprint? = nil, incoming: [[UInt8]]) async throws
        -> Run
    {
        let keys = try Keys(p)
        let hello = try JSONDecoder().decode(Hello.self, from: Data(p.hello.bytes))
        var queue = incoming
        var written: [[UInt8]] = []
        do {
            let result = try await Handshake.run(
                initiator: initiator, key: keys.statik, hello: hello, expected: expected, ephemeral: keys.ephemeral,
                next: { queue.isEmpty ? nil : ByteBuffer(bytes: queue.removeFirst()) },
                write: { written.append($0) })
            return Run(written: written, result: result)
        } catch {
            return Run(written: written, error: error)
        }
    }

    @Test("the one suite, the padded protocol name, h after the prologue")
    func constants() throws {
        let file = try Self.load()
        #expect(try file.suites.strings == [NoiseProtocolName.locafoto.name])
        let protocolName = try file.protocolName.string
        #expect(
            protocolName == "Noise_XX_25519_ChaChaPoly_BLAKE2b" && protocolName == NoiseProtocolName.locafoto.name)
        #expect(Array(protocolName.utf8) == (try file.protocolNameHex.bytes))
        #expect(try file.protocolNameLength.int == 33 && file.hashLen.int == 64)
        // InitializeSymmetric: 33 bytes <= HASHLEN, so padded with zeros, not hashed.
        let initial = try file.initialH.bytes
        #expect(initial == Array(protocolName.utf8) + [UInt8](repeating: 0, count: 31))
        #expect(SymmetricState(protocolName: protocolName, cipher: .chaChaPoly, hash: .blake2b).h == initial)
        #expect(WireProtocol.prologue == (try file.prologueHex.bytes))
        #expect(try file.prologue.string == "LOCAFOTO/1")
        for initiator in [true, false] {
            let hs = try HandshakeState(
                protocol: .locafoto, initiator: initiator, prologue: WireProtocol.prologue,
                staticKey: X25519SecretKey.generate())
            #expect(hs.handshakeHash == (try file.hAfterPrologue.bytes))
        }
    }

    @Test("the Noise core with the vectors' payloads: every message, h after each, Split")
    func noiseCore() throws {
        let file = try Self.load()
        // The identity-mismatch cases have no transport: their handshake is aborted after it.
        let all = try file.cases.elements.map { ($0, true) } + file.identityMismatch.elements.map { ($0, false) }
        #expect(all.count == 4)
        for (c, hasTransport) in all {
            let name = try c.name.string
            let messages = try c.messages.elements
            let ik = try Keys(c.initiator)
            let rk = try Keys(c.responder)
            let i = try HandshakeState(
                protocol: .locafoto, initiator: true, prologue: WireProtocol.prologue, staticKey: ik.statik,
                ephemeralKey: ik.ephemeral)
            let r = try HandshakeState(
                protocol: .locafoto, initiator: false, prologue: WireProtocol.prologue, staticKey: rk.statik,
                ephemeralKey: rk.ephemeral)
            for (n, m) in messages.enumerated() {
                let (writer, reader) = n % 2 == 0 ? (i, r) : (r, i)
                let sent = try writer.writeMessage(payload: m.payload.bytes)
                let pattern = try m.pattern.string
                #expect(sent == (try m.message.bytes), "\(name): message \(n + 1) (\(pattern))")
                #expect(sent.count == (try m.length.int))
                #expect(try Framing.frame(sent) == (try m.frame.bytes))
                #expect(try reader.readMessage(m.message.bytes) == (try m.payload.bytes))
                #expect(writer.handshakeHash == (try m.hAfter.bytes), "\(name): h after message \(n + 1)")
                #expect(reader.handshakeHash == writer.handshakeHash)
            }
            guard messages.count == 3 else { continue }
            var (iSend, iReceive) = try i.split()
            var (rSend, rReceive) = try r.split()
            for t in try hasTransport ? c.transport.elements : [] {
                let plain = try t.plaintext.bytes
                let (from, nonce, type) = (try t.from.string, try t.nonce.uint64, try t.type.string)
                let ciphertext: [UInt8]
                let opened: [UInt8]
                if from == "initiator" {
                    #expect(iSend.nonce == nonce)
                    ciphertext = try iSend.encrypt(plaintext: plain)
                    opened = try rReceive.decrypt(ciphertext: ciphertext)
                } else {
                    #expect(rSend.nonce == nonce)
                    ciphertext = try rSend.encrypt(plaintext: plain)
                    opened = try iReceive.decrypt(ciphertext: ciphertext)
                }
                #expect(ciphertext == (try t.ciphertext.bytes), "\(name): \(type) from the \(from)")
                #expect(opened == plain)
            }
        }
    }

    /// The transport half after `Handshake.run`: this side's messages through the real
    /// `SecureWriter` (frame for frame), the peer's through the real `SecureReader`.
    static func checkTransport(_ c: Vector, side: String, send: CipherState, receive: CipherState) async throws {
        let (outbound, sink) = NIOAsyncChannelOutboundWriter<ByteBuffer>.makeTestingWriter()
        var writer = SecureWriter(outbound: outbound, cipher: send, allocator: ByteBufferAllocator())
        var reader = SecureReader(cipher: receive)
        var expectedFrames: [[UInt8]] = []
        for t in try c.transport.elements {
            let plain = try t.plaintext.bytes
            let frame = try t.frame.bytes
            if try t.from.string == side {
                #expect(writer.cipher.nonce == (try t.nonce.uint64))
                try await writer.send(WireMessage.decode(plain))
                expectedFrames.append(frame)
            } else {
                #expect(Int(frame[0]) << 8 | Int(frame[1]) == frame.count - 2)
                #expect(reader.cipher.nonce == (try t.nonce.uint64))
                let message = try reader.open(ByteBuffer(bytes: frame.dropFirst(2)))
                #expect(try message.encoded() == plain, "\(c.testDescription): \(t.path)")
            }
        }
        outbound.finish()
        var written: [[UInt8]] = []
        for await buffer in sink { written.append(Array(buffer.readableBytesView)) }
        #expect(written == expectedFrames, "\(c.testDescription): the \(side)'s transport frames")
    }

    static func checkLearned(_ peer: PeerIdentity, _ learned: Vector, _ label: String) throws {
        #expect(peer.publicKey.bytes == (try learned.ed25519Public.bytes), "\(label): peer key")
        #expect(peer.fingerprint.description == (try learned.fingerprint.string), "\(label): peer fingerprint")
        #expect(peer.name == (try learned.name.string), "\(label): peer name")
        #expect(peer.caps == (try learned.caps.strings), "\(label): peer caps")
    }

    /// `Handshake.run` as one side of each case whose HELLO for that side is the agent's own
    /// spelling: the initiator writes messages 1 and 3 (pinning the responder it expects), the
    /// responder message 2; then h, the peer it learned, and the transport.
    @Test(
        "Handshake.run as the initiator and as the responder: the messages it writes, h, the peer learned, transport",
        arguments: [("initiator", 2), ("responder", 1)])
    func agentAs(side: String, cases expected: Int) async throws {
        let initiator = side == "initiator"
        var ran = 0
        for c in try Self.load().cases.elements where try c[side].canonicalHello.bool {
            let name = try c.name.string
            let messages = try c.messages.elements
            let (mine, theirs) = initiator ? ([0, 2], [1]) : ([1], [0, 2])
            let learned = c[side + "Learns"]
            let pin = initiator ? Fingerprint(publicKey: try SigningPublicKey(bytes: learned.ed25519Public.bytes)) : nil
            let run = try await Self.run(
                as: c[side], initiator: initiator, expected: pin,
                incoming: try theirs.map { try messages[$0].message.bytes })
            #expect(run.error == nil, "\(name): \(String(describing: run.error))")
            #expect(run.written == (try mine.map { try messages[$0].frame.bytes }), "\(name): frames written")
            let (peer, send, receive, h) = try #require(run.result)
            #expect(h == (try c.handshakeHash.bytes), "\(name): h")
            try Self.checkLearned(peer, learned, name)
            try await Self.checkTransport(c, side: side, send: send, receive: receive)
            ran += 1
        }
        #expect(ran == expected)
    }

    @Test("Handshake.verify on every vector HELLO gives the identity the vector names")
    func verifyHellos() throws {
        for c in try Self.load().cases.elements {
            let name = try c.name.string
            let ip = try SigningPublicKey(bytes: c.initiator.ed25519Public.bytes).agreementKey()
            let rp = try SigningPublicKey(bytes: c.responder.ed25519Public.bytes).agreementKey()
            try Self.checkLearned(
                Handshake.verify(remoteHello: c.responder.hello.bytes, remoteStatic: rp), c.initiatorLearns, name)
            try Self.checkLearned(
                Handshake.verify(remoteHello: c.initiator.hello.bytes, remoteStatic: ip), c.responderLearns, name)
        }
    }

    @Test("a HELLO naming another key than the Noise static key: identity_mismatch, and nothing more is written")
    func identityMismatch() async throws {
        let mismatches = try Self.load().identityMismatch.elements
        #expect(try mismatches.map { try $0.failsAt.int }.sorted() == [2, 3])
        for m in mismatches {
            let name = try m.name.string
            let (failsAt, detectedBy) = (try m.failsAt.int, try m.detectedBy.string)
            #expect(try m.error.string == "identity_mismatch" && m.thenSent.elements.isEmpty)
            let messages = try m.messages.elements
            let frames = try messages.map { try $0.frame.bytes }
            let run: Run
            if detectedBy == "responder" {
                #expect(failsAt == 3 && messages.count == 3)
                run = try await Self.run(
                    as: m.responder, initiator: false, incoming: [messages[0].message.bytes, messages[2].message.bytes])
                #expect(run.written == [frames[1]], "\(name): only message 2 was written")
            } else {
                #expect(detectedBy == "initiator" && failsAt == 2 && messages.count == 2)
                run = try await Self.run(as: m.initiator, initiator: true, incoming: [messages[1].message.bytes])
                #expect(run.written == [frames[0]], "\(name): only message 1 was written, no message 3")
            }
            #expect(run.result == nil)
            #expect((run.error as? WireError)?.code == .identityMismatch, "\(name): \(String(describing: run.error))")
            // The lying HELLO names mallory's key; the static key is the liar's own.
            let liar = detectedBy == "responder" ? m.initiator : m.responder
            let liarHello = try liar.hello.bytes
            #expect(
                try JSONDecoder().decode(Hello.self, from: Data(liarHello)).ed25519.bytes
                    == (try m.helloKey.ed25519Public.bytes))
            let liarStatic = try X25519PublicKey(bytes: liar.x25519StaticPublic.bytes)
            #expect(throws: WireError.self) {
                try Handshake.verify(remoteHello: liarHello, remoteStatic: liarStatic)
            }
        }
    }

    @Test("HELLO checks: what a receiver accepts (and learns), and the reason it aborts otherwise")
    func helloChecks() throws {
        let checks = try Self.load().helloChecks.elements
        #expect(checks.count > 25)
        for c in checks {
            let name = try c.name.string
            let rs = try X25519PublicKey(bytes: c.remoteStatic.bytes)
            let hello = try c.hello.bytes
            let error = try c.error.ifPresent?.string
            do {
                let peer = try Handshake.verify(remoteHello: hello, remoteStatic: rs)
                let learned = try #require(c.learns.ifPresent, "\(name): accepted, expected \(error ?? "?")")
                try Self.checkLearned(peer, learned, name)
            } catch let e as WireError {
                #expect(e.code.name == error, "\(name): \(e)")
            }
        }
    }

    @Test("the agent's own HELLO bytes are the canonical ones of the vectors")
    func helloEncoding() throws {
        let file = try Self.load()
        let parties = try (file.cases.elements + file.identityMismatch.elements).flatMap {
            [$0.initiator, $0.responder]
        }
        var canonical = 0
        for p in parties {
            let bytes = try p.hello.bytes
            let (name, isCanonical) = (try p.name.string, try p.canonicalHello.bool)
            let hello = try JSONDecoder().decode(Hello.self, from: Data(bytes))
            #expect(
                (try hello.encoded() == bytes) == isCanonical,
                "\(name): \(isCanonical ? "" : "not ")the agent's spelling")
            if isCanonical { canonical += 1 }
        }
        #expect(canonical == parties.count - 1)
    }
}
