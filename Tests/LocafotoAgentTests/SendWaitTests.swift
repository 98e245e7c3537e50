import Foundation
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoFormats
import Synchronization
import Testing
@testable import LocafotoAgent

/// `send` to a peer that is known but not online this moment waits for the directory to show it.
/// Every wait here is ended by an event or is a hang guard; no assertion depends on timing.
@Suite("Send waits for a known peer")
struct SendWaitTests {
    static let carol = Fingerprint(publicKey: SigningKey.generate().publicKey)

    static func carolAppears(in dir: PeerDirectory) {
        dir.apply(.appeared(instanceName: "carol", interfaceIndex: 1, family: .ipv4))
        dir.apply(.resolved(DiscoveredService(
            instanceName: "carol", interfaceIndex: 1, family: .ipv4, hostName: "carol.local", address: "10.0.0.3", port: 47820,
            txt: ["v": "1", "fp": carol.description, "name": "carol"], isLocal: false, isOwn: false)))
    }

    @Test("a waiter is woken by the event that brings the peer online")
    func waiterWokenByEvent() async throws {
        let dir = PeerDirectory(own: Fingerprint(publicKey: SigningKey.generate().publicKey))
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
        let dir = PeerDirectory(own: Fingerprint(publicKey: SigningKey.generate().publicKey))
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
            endpoints: [PeerEndpoint(address: "10.0.0.4", port: 1, family: "ipv4", instanceName: "carol", interfaceIndex: 1)], lastSeen: Date())
        #expect(try PeerResolver.resolve("carol", online: [], known: [], recent: [gone]).fingerprint == Self.carol)
        #expect(try PeerResolver.resolve("carol", online: [here], known: [], recent: [gone]).fingerprint == dave)
        let other = OnlinePeer(fingerprint: dave, name: "carol", endpoints: [], lastSeen: Date())
        #expect(throws: AgentError.self, "two peers seen lately under one name are ambiguous") {
            try PeerResolver.resolve("carol", online: [], known: [], recent: [gone, other])
        }
    }

    @Test("send to a known peer that is not online yet waits, and sends once discovery shows it")
    func sendWaitsForKnownPeer() async throws {
        let alice = try TestNode(name: "alice"), bob = try TestNode(name: "bob")
        defer { alice.stop(); bob.stop() }
        try await bob.start()
        try alice.agent.store.sawPeer(fingerprint: bob.agent.identity.fingerprint, publicKey: bob.agent.identity.publicKey.bytes, name: "bob", address: nil)
        try bob.agent.store.sawPeer(
            fingerprint: alice.agent.identity.fingerprint, publicKey: alice.agent.identity.publicKey.bytes, name: "alice", address: nil)
        try bob.agent.store.setTrust(alice.agent.identity.fingerprint.description, .trusted)

        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600))
        // Hang guard only: the transfer reports that it waits (it failed at once before).
        let deadline = Date().addingTimeInterval(120)
        while t.current.message?.contains("waiting up to 3600 s") != true && t.current.finishedAt == nil && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(t.current.state == .connecting, "\(t.current.state): \(t.current.message ?? "")")
        alice.sees(bob)  // bob's advertisement arrives
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(try bob.agent.vault().photos().count == 1)
    }

    @Test("pair with a known peer that is not online this moment waits for it")
    func pairWaitsForKnownPeer() async throws {
        let alice = try TestNode(name: "alice"), bob = try TestNode(name: "bob")
        defer { alice.stop(); bob.stop() }
        try await bob.start()
        try alice.agent.store.sawPeer(fingerprint: bob.agent.identity.fingerprint, publicKey: bob.agent.identity.publicKey.bytes, name: "bob", address: nil)
        let finished = Mutex(false)
        let pairing = Task {
            defer { finished.withLock { $0 = true } }
            return try await alice.agent.pair("bob", wait: .seconds(3600))
        }
        // The synchronisation point: pair waits on the directory (it threw at once before).
        let deadline = Date().addingTimeInterval(120)  // hang guard
        while alice.agent.directory.waiting == 0 && !finished.withLock({ $0 }) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(alice.agent.directory.waiting == 1)
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        alice.sees(bob)
        let entry = try await pairing.value
        #expect(entry.fingerprint == bob.agent.identity.fingerprint.description)
    }

    @Test("a peer never seen fails at once, whatever the bound")
    func unknownPeerFailsAtOnce() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        // Would the agent wait, the hang guard of waitForTransfer (120 s) would end the test first.
        let s = try await alice.waitForTransfer(try alice.agent.send(to: "nobody", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600)))
        #expect(s.state == .failed)
        #expect(s.message?.contains("no peer named 'nobody'") == true, "\(s.message ?? "")")
    }

    @Test("a known peer that does not appear within the bound fails with the clear message")
    func knownPeerThatStaysAway() async throws {
        let alice = try TestNode(name: "alice")
        defer { alice.stop() }
        try alice.agent.store.sawPeer(
            fingerprint: Self.carol, publicKey: SigningKey.generate().publicKey.bytes, name: "carol", address: nil)
        let s = try await alice.waitForTransfer(try alice.agent.send(to: "carol", paths: [Fixtures.path("sample.webp")], wait: .milliseconds(1)))
        #expect(s.state == .failed)
        #expect(s.message?.contains("is not online (not seen over mDNS; waited 1 s)") == true, "\(s.message ?? "")")
    }

    @Test("a peer seen recently (never met) is waited for too: a restart between two announcements")
    func recentlySeenPeerIsWaitedFor() async throws {
        let alice = try TestNode(name: "alice"), bob = try TestNode(name: "bob")
        defer { alice.stop(); bob.stop() }
        try await bob.start()
        try bob.agent.store.sawPeer(
            fingerprint: alice.agent.identity.fingerprint, publicKey: alice.agent.identity.publicKey.bytes, name: "alice", address: nil)
        try bob.agent.store.setTrust(alice.agent.identity.fingerprint.description, .trusted)
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))
        alice.sees(bob)
        alice.agent.directory.apply(.removed(instanceName: "bob", interfaceIndex: 1, family: .ipv4))  // the old instance's goodbye
        #expect(alice.agent.directory.online.isEmpty)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")], wait: .seconds(3600))
        let deadline = Date().addingTimeInterval(120)
        while t.current.message?.contains("waiting up to") != true && t.current.finishedAt == nil && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(t.current.state == .connecting, "\(t.current.state): \(t.current.message ?? "")")
        alice.agent.directory.apply(.appeared(instanceName: "bob", interfaceIndex: 1, family: .ipv4))  // the new instance
        alice.sees(bob)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
    }
}
