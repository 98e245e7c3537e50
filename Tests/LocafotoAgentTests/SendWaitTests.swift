import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoErrors
import LocafotoFormats
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoPeers

/// `send` to a peer that is known but not online this moment waits for the directory to show it.
/// Every wait here is ended by an event or is a hang guard; no assertion depends on timing.
@Suite("Send waits for a known peer")
struct SendWaitTests {
    static let carol = Fingerprint(publicKey: SigningKey.generate().publicKey)

    static func carolAppears(in dir: PeerDirectory) {
        dir.apply(.appeared(instanceName: "carol", interfaceIndex: 1, family: .ipv4))
        dir.apply(
            .resolved(
                DiscoveredService(
                    instanceName: "carol", interfaceIndex: 1, family: .ipv4, hostName: "carol.local",
                    address: "10.0.0.3", port: 47820,
                    txt: ["v": "1", "fp": carol.description, "name": "carol"], isLocal: false, isOwn: false)))
    }

    @Test("a waiter is woken by the event that brings the peer online")
    func waiterWokenByEvent() async throws {
        let dir = PeerDirectory(own: Fingerprint(publicKey: SigningKey.generate().publicKey), clock: SystemClock())
        // The bound is a hang guard: were the waiter not woken, it would return nil.
        let waiter = Task { await dir.waitUntilOnline(Self.carol, timeout: .seconds(120)) }
        dir.apply(.appeared(instanceName: "dave", interfaceIndex: 1, family: .ipv4))  // unrelated change
        Self.carolAppears(in: dir)
        let peer = await waiter.value
        #expect(peer?.fingerprint == Self.carol)
        #expect(peer?.endpoints.map(\.address) == ["10.0.0.3"])
    }

    @Test("a cancelled waiter returns nil; a zero bound answers from the directory as it is")
    func cancelledAndZeroBound() async throws {
        let dir = PeerDirectory(own: Fingerprint(publicKey: SigningKey.generate().publicKey), clock: SystemClock())
        let waiter = Task { await dir.waitUntilOnline(Self.carol, timeout: .seconds(3600)) }
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(await dir.waitUntilOnline(Self.carol, timeout: .zero) == nil)
        Self.carolAppears(in: dir)
        #expect(await dir.waitUntilOnline(Self.carol, timeout: .zero)?.fingerprint == Self.carol)
    }

    @Test("a recently seen peer is named only when no online or known peer answers to the name")
    func recentIsAFallback() throws {
        let dave = Fingerprint(publicKey: SigningKey.generate().publicKey)
        let gone = OnlinePeer(fingerprint: Self.carol, name: "carol", endpoints: [], lastSeen: Date())
        let here = OnlinePeer(
            fingerprint: dave, name: "carol",
            endpoints: [
                PeerEndpoint(address: "10.0.0.4", port: 1, family: "ipv4", instanceName: "carol", interfaceIndex: 1)
            ], lastSeen: Date())
        #expect(try PeerResolver.resolve("carol", online: [], known: [], recent: [gone]).fingerprint == Self.carol)
        #expect(try PeerResolver.resolve("carol", online: [here], known: [], recent: [gone]).fingerprint == dave)
        let other = OnlinePeer(fingerprint: dave, name: "carol", endpoints: [], lastSeen: Date())
        #expect(throws: AgentError.self, "two peers seen lately under one name are ambiguous") {
            try PeerResolver.resolve("carol", online: [], known: [], recent: [gone, other])
        }
    }

    @Test("send to a known peer that is not online yet waits, and sends once discovery shows it")
    func sendWaitsForKnownPeer() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try alice.knows(bob, name: "bob")
        try bob.trusts(alice, name: "alice")

        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600))
        // The transfer reports that it waits (it failed at once before).
        _ = await alice.waitForTransfer(t, until: { $0.message?.contains("waiting up to 3600 s") == true })
        #expect(t.current.state == .connecting, "\(t.current.state): \(t.current.message ?? "")")
        alice.sees(bob)  // bob's advertisement arrives
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(try bob.agent.vault().photos().count == 1)
    }

    /// Makes bob visible to alice at 127.0.0.1:`port` on interface 2, as mDNS shows a restarting
    /// agent at an address it does not listen on (its IPv6 link-local address, for an agent that
    /// listens on IPv4 only) before the one it does.
    static func announce(_ bob: TestNode, to alice: TestNode, port: UInt16) {
        alice.agent.directory.apply(
            .resolved(
                DiscoveredService(
                    instanceName: bob.agent.displayName, interfaceIndex: 2, family: .ipv4, hostName: "localhost",
                    address: "127.0.0.1", port: port,
                    txt: ["v": "1", "fp": bob.agent.identity.fingerprint.description, "name": bob.agent.displayName],
                    isLocal: true, isOwn: false)))
    }

    @Test("every address of the peer refuses: the send waits for another one and sends there")
    func refusedAddressWaitsForAnother() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try bob.trusts(alice, name: "alice")
        let nobody = try RefusingPort()
        Self.announce(bob, to: alice, port: nobody.port)  // bob is online, at an address that refuses
        #expect(alice.agent.directory.online(bob.agent.identity.fingerprint)?.endpoints.map(\.port) == [nobody.port])

        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600))
        // The synchronisation point: the connection was refused and the send waits on the
        // directory for another address (it failed at once before).
        try await alice.untilDirectoryWaits()
        #expect(alice.agent.directory.waiting == 1)
        #expect(t.current.state == .connecting, "\(t.current.state): \(t.current.message ?? "")")
        #expect(t.current.message?.contains("waiting up to") == true, "\(t.current.message ?? "")")
        alice.sees(bob)  // the address bob listens on is announced
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(try bob.agent.vault().photos().count == 1)
        #expect(alice.agent.directory.waiting == 0)
    }

    @Test("every address of the peer refuses and no other comes within the bound: the clear message")
    func refusedAddressUntilTheBound() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        let nobody = try RefusingPort()
        Self.announce(bob, to: alice, port: nobody.port)
        // The bound ends the wait (or has ended before the refusal): either way the send fails
        // with what the refusal said, and leaves no waiter behind.
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .milliseconds(200)))
        #expect(s.state == .failed)
        #expect(
            s.message?.contains("cannot connect to bob: cannot connect to 127.0.0.1:\(nobody.port): connection refused")
                == true, "\(s.message ?? "")")
        #expect(alice.agent.directory.waiting == 0)
    }

    @Test("pair with a known peer that is not online this moment waits for it")
    func pairWaitsForKnownPeer() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try alice.knows(bob, name: "bob")
        let pairing = Task {
            try await alice.agent.controllers.peers.pair("bob", wait: .seconds(3600))
        }
        // The synchronisation point: pair waits on the directory (it threw at once before).
        try await alice.untilDirectoryWaits()
        #expect(alice.agent.directory.waiting == 1)
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        alice.sees(bob)
        let entry = try await pairing.value
        #expect(entry.fingerprint == bob.agent.identity.fingerprint.description)
    }

    @Test("pair with a peer whose every address refuses waits for another address and pairs there")
    func pairWaitsForAnotherAddress() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        let nobody = try RefusingPort()
        Self.announce(bob, to: alice, port: nobody.port)  // bob is online, at an address that refuses
        let pairing = Task {
            try await alice.agent.controllers.peers.pair("bob", wait: .seconds(3600))
        }
        // The synchronisation point: the address refused and pair waits on the directory for
        // another (it failed at once before: CI saw a restarted peer's link-local address first).
        try await alice.untilDirectoryWaits()
        #expect(alice.agent.directory.waiting == 1)
        alice.sees(bob)  // the address bob listens on is announced
        let entry = try await pairing.value
        #expect(entry.fingerprint == bob.agent.identity.fingerprint.description)
        #expect(alice.agent.directory.waiting == 0)
    }

    @Test("pair with a peer whose every address fails: what happened at each")
    func pairSaysWhatEachAddressDid() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        let first = try RefusingPort()
        let second = try RefusingPort()
        Self.announce(bob, to: alice, port: first.port)
        alice.agent.directory.apply(
            .resolved(
                DiscoveredService(
                    instanceName: bob.agent.displayName, interfaceIndex: 3, family: .ipv4, hostName: "localhost",
                    address: "127.0.0.1", port: second.port,
                    txt: ["v": "1", "fp": bob.agent.identity.fingerprint.description, "name": bob.agent.displayName],
                    isLocal: true, isOwn: false)))
        let error = await #expect(throws: AgentError.self) {
            try await alice.agent.controllers.peers.pair("bob", wait: .zero)
        }
        #expect(error?.code == .peerUnavailable)
        for port in [first.port, second.port] {
            #expect(error?.message.contains("127.0.0.1:\(port): connection refused") == true, "\(error?.message ?? "")")
        }
        #expect(error?.message.contains("none of the peer's 2 addresses answered") == true)
    }

    @Test("a peer never seen fails at once, whatever the bound")
    func unknownPeerFailsAtOnce() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        // Would the agent wait, the hang guard of waitForTransfer (120 s) would end the test first.
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "nobody", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600)))
        #expect(s.state == .failed)
        #expect(s.message?.contains("no peer named 'nobody'") == true, "\(s.message ?? "")")
    }

    @Test("a known peer that does not appear within the bound fails with the clear message")
    func knownPeerThatStaysAway() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        try alice.agent.store.sawPeer(
            fingerprint: Self.carol, publicKey: SigningKey.generate().publicKey.bytes, name: "carol", address: nil)
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "carol", paths: [Fixtures.path("sample.webp")], wait: .milliseconds(1)))
        #expect(s.state == .failed)
        #expect(s.message?.contains("is not online (not seen over mDNS; waited 1 s)") == true, "\(s.message ?? "")")
    }

    @Test("a peer seen recently (never met) is waited for too: a restart between two announcements")
    func recentlySeenPeerIsWaitedFor() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try bob.trusts(alice, name: "alice")
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        alice.sees(bob)
        // the old instance's goodbye
        alice.agent.directory.apply(.removed(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        #expect(alice.agent.directory.online.isEmpty)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600))
        _ = await alice.waitForTransfer(t, until: { $0.message?.contains("waiting up to") == true })
        #expect(t.current.state == .connecting, "\(t.current.state): \(t.current.message ?? "")")
        // the new instance
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        alice.sees(bob)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
    }
}
