import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoReceiving
import LocafotoSession
import LocafotoWire
import Testing

@testable import LocafotoAgent

@Suite("Hostile peers")
struct HostilePeerTests {
    @Test("HELLO payloads: bad JSON, wrong version, key not matching the Noise static key")
    func helloValidation() throws {
        let id = SigningKey.generate()
        let rs = try id.publicKey.agreementKey()
        let good = try JSONEncoder().encode(Hello(ed25519: id.publicKey.bytes, name: "ok"))
        #expect(try Handshake.verify(remoteHello: Array(good), remoteStatic: rs).fingerprint.description.count == 31)
        let cases: [([UInt8], WireErrorCode)] = [
            (Array("not json".utf8), .protocolViolation),
            ([], .protocolViolation),
            ([UInt8](repeating: 0x20, count: 5000), .protocolViolation),
            (Array(try JSONEncoder().encode(Hello(v: 2, ed25519: id.publicKey.bytes, name: "x"))), .unsupportedVersion),
            (
                Array(try JSONEncoder().encode(Hello(ed25519: SigningKey.generate().publicKey.bytes, name: "x"))),
                .identityMismatch
            ),
        ]
        for (payload, code) in cases {
            do {
                _ = try Handshake.verify(remoteHello: payload, remoteStatic: rs)
                Issue.record("accepted a bad HELLO (\(code))")
            } catch let e as WireError {
                #expect(e.code == code)
            }
        }
        #expect(throws: (any Error).self) {
            _ = try Handshake.verify(
                remoteHello: Array(#"{"v":1,"ed25519":"AAAA","name":"x","caps":[]}"#.utf8), remoteStatic: rs)
        }
        // Control characters and over-long names are not shown to the user as given.
        let weird = try JSONEncoder().encode(Hello(ed25519: id.publicKey.bytes, name: "evil\u{1b}[31m\nname"))
        #expect(try Handshake.verify(remoteHello: Array(weird), remoteStatic: rs).name == "evil[31mname")
    }

    @Test("garbage, zero-length frames and abandoned handshakes do not disturb the agent")
    func junkConnections() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        let payloads: [[UInt8]] = [
            [],  // connect and close
            [0x00, 0x00],  // a zero-length frame
            [0xff, 0xff] + [UInt8](repeating: 0x41, count: 1000),  // announces 65535, sends less, closes
            [0x00, 0x20] + [UInt8](repeating: 7, count: 32),  // a wrong-length first handshake message
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            (0..<4096).map { _ in UInt8.random(in: 0...255) },
        ]
        for p in payloads { try rawConnection(port: bob.port, send: p) }
        // The agent still serves a real peer afterwards.
        alice.sees(bob)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.png")])
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        #expect(try await alice.waitForTransfer(t).state == .done)
    }

    /// A plain blocking TCP client: connects, writes, closes.
    func rawConnection(port: Int, send bytes: [UInt8]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw TestFailure("cannot connect to the agent") }
        // The bytes arrive before the close (TCP keeps the order): the agent reads them, then the end.
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    }
}
