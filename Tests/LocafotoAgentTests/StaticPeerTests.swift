import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoReceiving
import LocafotoSession
import LocafotoVault
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoPeers

@Suite("Static peers (no mDNS)")
struct StaticPeerTests {
    @Test("addresses: IPv4, IPv6 with scope, host names; bad ones refused")
    func parsing() throws {
        let ok: [(String, String, UInt16)] = [
            ("192.168.1.20:47820", "192.168.1.20", 47820), ("[fe80::1%eth0]:47820", "fe80::1%eth0", 47820),
            ("[::1]:1", "::1", 1), ("nas.local:8080", "nas.local", 8080), (" 10.0.0.1:5 ", "10.0.0.1", 5),
        ]
        for (text, host, port) in ok {
            let a = try StaticAddress(parsing: text)
            #expect(a.host == host && a.port == port, "\(text)")
        }
        for bad in [
            "", "nas.local", "1.2.3.4:0", "1.2.3.4:70000", "fe80::1:47820", "[fe80::1]47820", ":47820", "a b:1",
            "host:port",
        ] {
            #expect(throws: AgentError.self, "\(bad)") { try StaticAddress(parsing: bad) }
        }
        #expect(StaticAddress.looksLikeAddress("10.0.0.1:47820"))
        #expect(!StaticAddress.looksLikeAddress("bob"))
        #expect(try StaticAddress(parsing: "[::1]:9").description == "[::1]:9")
    }

    @Test("a probed address lists the peer online under its real key, and a send by name goes there")
    func probeThenSend() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        let peer = try await alice.agent.peerProbe.probe(try StaticAddress(parsing: "127.0.0.1:\(bob.port)"))
        #expect(peer.fingerprint == bob.agent.identity.fingerprint)
        #expect(alice.agent.directory.online(peer.fingerprint)?.name == "bob")
        // The probe offered nothing.
        #expect(try bob.agent.store.offers().isEmpty)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.gif")])
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        #expect(try await alice.waitForTransfer(t).state == .done)
        // Sending straight to the address works too.
        let t2 = try alice.agent.send(to: "127.0.0.1:\(bob.port)", paths: [Fixtures.path("sample.png")])
        let offer2 = try await bob.waitForPendingOffer()
        _ = try await bob.agent.inbox.decide(offer2.id, .accepted)
        #expect(try await alice.waitForTransfer(t2).state == .done)
        #expect(try bob.agent.vault().photos().count == 2)
    }

    @Test("a send to HOST:PORT opens one connection: its handshake says who answers, and it carries the offer")
    func sendToAddressUsesOneConnection() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        let front = try OneConnectionFront(forwardingTo: bob.port)  // a peer that serves one connection
        defer { front.stop() }
        let t = try alice.agent.send(to: "127.0.0.1:\(front.port)", paths: [Fixtures.path("sample.gif")])
        // The offer arrives (a send that opened a second connection would fail: the front serves one).
        let pending = try await bob.waitForPendingOffer()
        #expect(pending.senderFingerprint == alice.agent.identity.fingerprint.description)
        _ = try await bob.agent.inbox.decide(pending.id, .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(s.peer.fingerprint == bob.agent.identity.fingerprint.description && s.peer.name == "bob")
        #expect(front.accepted == 1)
        // Recorded as the probe recorded it: online at that address, met there.
        let peer = try #require(alice.agent.directory.online(bob.agent.identity.fingerprint))
        #expect(peer.endpoints.map(\.instanceName) == ["static:127.0.0.1:\(front.port)"])
        #expect(alice.agent.directory.probedEndpoints.map(\.port) == [front.port])
        #expect(
            try alice.agent.store.peer(bob.agent.identity.fingerprint.description)?.lastAddress
                == "127.0.0.1:\(front.port)")
        #expect(try bob.agent.vault().photos().count == 1)
    }

    @Test("a send to an address where nothing listens fails at once and lists no one there")
    func sendToRefusingAddress() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        let nobody = try RefusingPort()
        let s = try await alice.waitForTransfer(
            try alice.agent.send(
                to: "127.0.0.1:\(nobody.port)", paths: [Fixtures.path("sample.gif")], wait: .seconds(3600)))
        #expect(s.state == .failed)
        #expect(
            s.message?.contains("cannot connect to 127.0.0.1:\(nobody.port): connection refused") == true,
            "\(s.message ?? "")")
        #expect(alice.agent.directory.online.isEmpty && alice.agent.directory.waiting == 0)
    }

    @Test("a send to this node's own address offers nothing")
    func sendToOwnAddress() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        try await alice.start()
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "127.0.0.1:\(alice.port)", paths: [Fixtures.path("sample.gif")]))
        #expect(s.state == .failed)
        #expect(s.message?.contains("is this node itself") == true, "\(s.message ?? "")")
        #expect(try alice.agent.store.offers().isEmpty)
        #expect(alice.agent.directory.online.isEmpty)
    }

    @Test("an address where nobody answers is an error, and stops being listed")
    func deadAddress() async throws {
        let bob = try TestNode(name: "bob")
        try await bob.start()
        let address = try StaticAddress(parsing: "127.0.0.1:\(bob.port)")
        let alice = try TestNode(name: "alice") { $0.staticPeers = [address] }
        defer { alice.stop() }
        await alice.agent.staticPeerProbes.probeAll()
        let peer = try #require(alice.agent.directory.online.first)
        #expect(peer.fingerprint == bob.agent.identity.fingerprint)
        bob.stop()
        try await bob.stopped()  // its listening socket is closed: a connection is refused
        await alice.agent.staticPeerProbes.probeAll()  // bob is gone: probing fails
        #expect(alice.agent.directory.online(peer.fingerprint) == nil)
        await #expect(throws: (any Error).self) { try await alice.agent.peerProbe.probe(address) }
    }
}
