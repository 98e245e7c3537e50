import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import NIOCore
import Testing

@testable import LocafotoNoise
@testable import LocafotoSession
import LocafotoTestSupport

/// protocol/vectors/handshake.json, made by scripts/gen-vectors-handshake.py with the Python
/// `noiseprotocol` library: this agent's handshake (`Handshake.run` with the vectors' static and
/// ephemeral keys, fed the other side's messages from memory) must write every message byte for
/// byte, reach the same h, learn the same peer, and encrypt the first transport messages alike.
@Suite("Handshake vectors (protocol/vectors/handshake.json)")
struct HandshakeVectorTests {
    struct Party: Decodable {
        var name: String
        var ed25519Seed: String
        var ed25519Public: String
        var x25519StaticPrivate: String
        var x25519StaticPublic: String
        var fingerprint: String
        var ephemeralPrivate: String
        var ephemeralPublic: String
        var hello: String
        var canonicalHello: Bool
    }

    struct Message: Decodable {
        var pattern: String
        var payload: String
        var message: String
        var length: Int
        var frame: String
        var hAfter: String
    }

    struct Learned: Decodable {
        var ed25519Public: String
        var fingerprint: String
        var name: String
        var caps: [String]
    }

    struct Transport: Decodable {
        var from: String
        var nonce: UInt64
        var type: String
        var plaintext: String
        var ciphertext: String
        var frame: String
    }

    struct Case: Decodable {
        var name: String
        var initiator: Party
        var responder: Party
        var messages: [Message]
        var handshakeHash: String
        var pairingCode: String
        var initiatorLearns: Learned
        var responderLearns: Learned
        var transport: [Transport]
    }

    struct Mismatch: Decodable {
        struct Key: Decodable { var ed25519Public: String; var fingerprint: String }
        var name: String
        var initiator: Party
        var responder: Party
        var helloKey: Key
        var messages: [Message]
        var failsAt: Int
        var detectedBy: String
        var error: String
        var thenSent: [String]
    }

    struct HelloCheck: Decodable {
        var name: String
        var hello: String
        var remoteStatic: String
        var learns: Learned?
        var error: String?
    }

    struct File: Decodable {
        var suites: [String]
        var protocolName: String
        var protocolNameHex: String
        var protocolNameLength: Int
        var hashLen: Int
        var initialH: String
        var prologue: String
        var prologueHex: String
        var hAfterPrologue: String
        var cases: [Case]
        var identityMismatch: [Mismatch]
        var helloChecks: [HelloCheck]
    }

    static func load() throws -> File {
        try Checkout.vectors(File.self, "handshake.json")
    }

    static func hex(_ s: String) throws -> [UInt8] {
        try #require(Hex.decode(s), "not hex: \(s.prefix(40))")
    }

    /// A party's keys, checked against the vector: Ed25519 from the seed, the X25519 static key
    /// derived from it as the agent derives its own, and the fixed ephemeral.
    struct Keys {
        let signing: SigningKey
        let statik: X25519SecretKey
        let ephemeral: X25519SecretKey

        init(_ p: Party) throws {
            signing = try SigningKey(seed: SecretBytes(copying: hex(p.ed25519Seed)))
            #expect(signing.publicKey.bytes == (try hex(p.ed25519Public)), "\(p.name): Ed25519 public key")
            statik = try signing.agreementKey()
            #expect(
                statik.secret.unsafeCopy() == (try hex(p.x25519StaticPrivate)), "\(p.name): X25519 static private key")
            #expect(statik.publicKey.bytes == (try hex(p.x25519StaticPublic)), "\(p.name): X25519 static public key")
            #expect(try signing.publicKey.agreementKey() == statik.publicKey, "\(p.name): pk_to_curve25519")
            #expect(Fingerprint(publicKey: signing.publicKey).description == p.fingerprint, "\(p.name): fingerprint")
            ephemeral = try X25519SecretKey(secret: SecretBytes(copying: hex(p.ephemeralPrivate)))
            #expect(ephemeral.publicKey.bytes == (try hex(p.ephemeralPublic)), "\(p.name): ephemeral public key")
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
    static func run(as p: Party, initiator: Bool, expected: Fingerprint? = nil, incoming: [[UInt8]]) async throws -> Run
    {
        let keys = try Keys(p)
        let hello = try JSONDecoder().decode(Hello.self, from: Data(hex(p.hello)))
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
        #expect(file.suites == [NoiseProtocolName.locafoto.name])
        #expect(
            file.protocolName == "Noise_XX_25519_ChaChaPoly_BLAKE2b"
                && file.protocolName == NoiseProtocolName.locafoto.name)
        #expect(Array(file.protocolName.utf8) == (try Self.hex(file.protocolNameHex)))
        #expect(file.protocolNameLength == 33 && file.hashLen == 64)
        // InitializeSymmetric: 33 bytes <= HASHLEN, so padded with zeros, not hashed.
        let initial = try Self.hex(file.initialH)
        #expect(initial == Array(file.protocolName.utf8) + [UInt8](repeating: 0, count: 31))
        #expect(SymmetricState(protocolName: file.protocolName, cipher: .chaChaPoly, hash: .blake2b).h == initial)
        #expect(WireProtocol.prologue == (try Self.hex(file.prologueHex)) && file.prologue == "LOCAFOTO/1")
        for initiator in [true, false] {
            let hs = try HandshakeState(
                protocol: .locafoto, initiator: initiator, prologue: WireProtocol.prologue,
                staticKey: X25519SecretKey.generate())
            #expect(hs.handshakeHash == (try Self.hex(file.hAfterPrologue)))
        }
    }

    @Test("the Noise core with the vectors' payloads: every message, h after each, Split")
    func noiseCore() throws {
        let file = try Self.load()
        let all: [(String, Party, Party, [Message], [Transport])] =
            file.cases.map { ($0.name, $0.initiator, $0.responder, $0.messages, $0.transport) }
            + file.identityMismatch.map { ($0.name, $0.initiator, $0.responder, $0.messages, []) }
        #expect(all.count == 4)
        for (name, ip, rp, messages, transport) in all {
            let ik = try Keys(ip), rk = try Keys(rp)
            let i = try HandshakeState(
                protocol: .locafoto, initiator: true, prologue: WireProtocol.prologue, staticKey: ik.statik,
                ephemeralKey: ik.ephemeral)
            let r = try HandshakeState(
                protocol: .locafoto, initiator: false, prologue: WireProtocol.prologue, staticKey: rk.statik,
                ephemeralKey: rk.ephemeral)
            for (n, m) in messages.enumerated() {
                let (writer, reader) = n % 2 == 0 ? (i, r) : (r, i)
                let sent = try writer.writeMessage(payload: Self.hex(m.payload))
                #expect(sent == (try Self.hex(m.message)), "\(name): message \(n + 1) (\(m.pattern))")
                #expect(sent.count == m.length)
                #expect(try Framing.frame(sent) == (try Self.hex(m.frame)))
                #expect(try reader.readMessage(Self.hex(m.message)) == (try Self.hex(m.payload)))
                #expect(writer.handshakeHash == (try Self.hex(m.hAfter)), "\(name): h after message \(n + 1)")
                #expect(reader.handshakeHash == writer.handshakeHash)
            }
            guard messages.count == 3 else { continue }
            var (iSend, iReceive) = try i.split()
            var (rSend, rReceive) = try r.split()
            for t in transport {
                let plain = try Self.hex(t.plaintext)
                let ciphertext: [UInt8], opened: [UInt8]
                if t.from == "initiator" {
                    #expect(iSend.nonce == t.nonce)
                    ciphertext = try iSend.encrypt(plaintext: plain)
                    opened = try rReceive.decrypt(ciphertext: ciphertext)
                } else {
                    #expect(rSend.nonce == t.nonce)
                    ciphertext = try rSend.encrypt(plaintext: plain)
                    opened = try iReceive.decrypt(ciphertext: ciphertext)
                }
                #expect(ciphertext == (try Self.hex(t.ciphertext)), "\(name): \(t.type) from the \(t.from)")
                #expect(opened == plain)
            }
        }
    }

    /// The transport half after `Handshake.run`: this side's messages through the real
    /// `SecureWriter` (frame for frame), the peer's through the real `SecureReader`.
    static func checkTransport(_ c: Case, side: String, send: CipherState, receive: CipherState) async throws {
        let (outbound, sink) = NIOAsyncChannelOutboundWriter<ByteBuffer>.makeTestingWriter()
        var writer = SecureWriter(outbound: outbound, cipher: send, allocator: ByteBufferAllocator())
        var reader = SecureReader(cipher: receive)
        var expectedFrames: [[UInt8]] = []
        for t in c.transport {
            let plain = try hex(t.plaintext)
            if t.from == side {
                #expect(writer.cipher.nonce == t.nonce)
                try await writer.send(WireMessage.decode(plain))
                expectedFrames.append(try hex(t.frame))
            } else {
                let frame = try hex(t.frame)
                #expect(Int(frame[0]) << 8 | Int(frame[1]) == frame.count - 2)
                #expect(reader.cipher.nonce == t.nonce)
                let message = try reader.open(ByteBuffer(bytes: frame.dropFirst(2)))
                #expect(try message.encoded() == plain, "\(c.name): \(t.type) from the \(t.from)")
            }
        }
        outbound.finish()
        var written: [[UInt8]] = []
        for await buffer in sink { written.append(Array(buffer.readableBytesView)) }
        #expect(written == expectedFrames, "\(c.name): the \(side)'s transport frames")
    }

    static func checkLearned(_ peer: PeerIdentity, _ learned: Learned, _ label: String) throws {
        #expect(peer.publicKey.bytes == (try hex(learned.ed25519Public)), "\(label): peer key")
        #expect(peer.fingerprint.description == learned.fingerprint, "\(label): peer fingerprint")
        #expect(peer.name == learned.name, "\(label): peer name")
        #expect(peer.caps == learned.caps, "\(label): peer caps")
    }

    @Test("Handshake.run as the initiator: messages 1 and 3, h, the responder learned, transport")
    func agentAsInitiator() async throws {
        let file = try Self.load()
        var ran = 0
        for c in file.cases where c.initiator.canonicalHello {
            let pin = Fingerprint(publicKey: try SigningPublicKey(bytes: Self.hex(c.initiatorLearns.ed25519Public)))
            let run = try await Self.run(
                as: c.initiator, initiator: true, expected: pin, incoming: [Self.hex(c.messages[1].message)])
            #expect(run.error == nil, "\(c.name): \(String(describing: run.error))")
            #expect(
                run.written == [try Self.hex(c.messages[0].frame), try Self.hex(c.messages[2].frame)],
                "\(c.name): frames written")
            let (peer, send, receive, h) = try #require(run.result)
            #expect(h == (try Self.hex(c.handshakeHash)), "\(c.name): h")
            try Self.checkLearned(peer, c.initiatorLearns, c.name)
            try await Self.checkTransport(c, side: "initiator", send: send, receive: receive)
            ran += 1
        }
        #expect(ran == 2)
    }

    @Test("Handshake.run as the responder: message 2, h, the initiator learned, transport")
    func agentAsResponder() async throws {
        let file = try Self.load()
        var ran = 0
        for c in file.cases where c.responder.canonicalHello {
            let run = try await Self.run(
                as: c.responder, initiator: false,
                incoming: [Self.hex(c.messages[0].message), Self.hex(c.messages[2].message)])
            #expect(run.error == nil, "\(c.name): \(String(describing: run.error))")
            #expect(run.written == [try Self.hex(c.messages[1].frame)], "\(c.name): frames written")
            let (peer, send, receive, h) = try #require(run.result)
            #expect(h == (try Self.hex(c.handshakeHash)), "\(c.name): h")
            try Self.checkLearned(peer, c.responderLearns, c.name)
            try await Self.checkTransport(c, side: "responder", send: send, receive: receive)
            ran += 1
        }
        #expect(ran == 1)
    }

    @Test("Handshake.verify on every vector HELLO gives the identity the vector names")
    func verifyHellos() throws {
        for c in try Self.load().cases {
            let ip = try SigningPublicKey(bytes: Self.hex(c.initiator.ed25519Public)).agreementKey()
            let rp = try SigningPublicKey(bytes: Self.hex(c.responder.ed25519Public)).agreementKey()
            try Self.checkLearned(
                Handshake.verify(remoteHello: Self.hex(c.responder.hello), remoteStatic: rp), c.initiatorLearns, c.name)
            try Self.checkLearned(
                Handshake.verify(remoteHello: Self.hex(c.initiator.hello), remoteStatic: ip), c.responderLearns, c.name)
        }
    }

    @Test("a HELLO naming another key than the Noise static key: identity_mismatch, and nothing more is written")
    func identityMismatch() async throws {
        let file = try Self.load()
        #expect(file.identityMismatch.map(\.failsAt).sorted() == [2, 3])
        for m in file.identityMismatch {
            #expect(m.error == "identity_mismatch" && m.thenSent.isEmpty)
            let frames = try m.messages.map { try Self.hex($0.frame) }
            let run: Run
            if m.detectedBy == "responder" {
                #expect(m.failsAt == 3 && m.messages.count == 3)
                run = try await Self.run(
                    as: m.responder, initiator: false,
                    incoming: [Self.hex(m.messages[0].message), Self.hex(m.messages[2].message)])
                #expect(run.written == [frames[1]], "\(m.name): only message 2 was written")
            } else {
                #expect(m.detectedBy == "initiator" && m.failsAt == 2 && m.messages.count == 2)
                run = try await Self.run(as: m.initiator, initiator: true, incoming: [Self.hex(m.messages[1].message)])
                #expect(run.written == [frames[0]], "\(m.name): only message 1 was written, no message 3")
            }
            #expect(run.result == nil)
            #expect((run.error as? WireError)?.code == .identityMismatch, "\(m.name): \(String(describing: run.error))")
            // The lying HELLO names mallory's key; the static key is the liar's own.
            let liar = m.detectedBy == "responder" ? m.initiator : m.responder
            #expect(
                try JSONDecoder().decode(Hello.self, from: Data(Self.hex(liar.hello))).ed25519.bytes
                    == (try Self.hex(m.helloKey.ed25519Public)))
            #expect(throws: WireError.self) {
                try Handshake.verify(
                    remoteHello: Self.hex(liar.hello),
                    remoteStatic: X25519PublicKey(bytes: Self.hex(liar.x25519StaticPublic)))
            }
        }
    }

    @Test("HELLO checks: what a receiver accepts (and learns), and the reason it aborts otherwise")
    func helloChecks() throws {
        let checks = try Self.load().helloChecks
        #expect(checks.count > 25)
        for c in checks {
            let rs = try X25519PublicKey(bytes: Self.hex(c.remoteStatic))
            do {
                let peer = try Handshake.verify(remoteHello: Self.hex(c.hello), remoteStatic: rs)
                let learned = try #require(c.learns, "\(c.name): accepted, expected \(c.error ?? "?")")
                try Self.checkLearned(peer, learned, c.name)
            } catch let e as WireError {
                #expect(e.code.name == c.error, "\(c.name): \(e)")
            }
        }
    }

    @Test("the agent's own HELLO bytes are the canonical ones of the vectors")
    func helloEncoding() throws {
        let file = try Self.load()
        let parties =
            file.cases.flatMap { [$0.initiator, $0.responder] }
            + file.identityMismatch.flatMap { [$0.initiator, $0.responder] }
        var canonical = 0
        for p in parties {
            let bytes = try Self.hex(p.hello)
            let hello = try JSONDecoder().decode(Hello.self, from: Data(bytes))
            #expect(
                (try hello.encoded() == bytes) == p.canonicalHello,
                "\(p.name): \(p.canonicalHello ? "" : "not ")the agent's spelling")
            if p.canonicalHello { canonical += 1 }
        }
        #expect(canonical == parties.count - 1)
    }
}
