import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoInbox
import LocafotoReceiving
import LocafotoVault
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoSending
@testable import LocafotoTransfers

/// Cancelling a transfer in each of its states, between two real agents over real TCP: the
/// sender's `cancel` and the receiver's `reject` of a running receive both end the transfer on
/// both sides, and the receiver keeps nothing partial.
@Suite("Cancelling a transfer in any state")
struct CancelTests {
    static func spool(_ node: TestNode) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: node.agent.configuration.home.spoolDirectory)
    }

    @Test("cancelled while the offer waits for a decision: the receiver's inbox drops it at once")
    func whileOffered() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.png")])
        let offer = try await bob.waitForPendingOffer()
        #expect(offer.id == t.id, "one offer id on both sides")
        try await ResumeTests.waitForState(t, .offered)

        let s = try await alice.agent.cancelTransfer(String(t.id.prefix(6))).current
        #expect(s.state == .cancelled)
        #expect(s.message == "cancelled by the user")
        #expect(try alice.agent.store.outgoing().isEmpty, "a cancelled transfer is not resumed")
        let o = try await bob.waitForOffer(offer.id, .cancelled)
        #expect(o.message == "cancelled by alice")
        #expect(try await bob.agent.controllers.inbox.list(all: false).isEmpty, "it left the inbox")
        await #expect(throws: AgentError.self) { try await bob.agent.controllers.inbox.decide(offer.id, .accepted) }
    }

    @Test("cancelled while sending: the receiver deletes the partial photo and ends the offer")
    func whileSending() async throws {
        let (alice, bob, t, path) = try await Self.sending()
        defer {
            alice.stop()
            bob.stop()
        }
        let s = try await alice.agent.cancelTransfer(t.id).current
        #expect(s.state == .cancelled, "\(s.message ?? "")")
        #expect(s.sentBytes < Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))
        let o = try await bob.waitForOffer(t.id, .cancelled)
        #expect(o.message == "cancelled by alice")
        #expect(try Self.spool(bob).isEmpty, "nothing partial remains")
        #expect(try bob.agent.vault().photos().isEmpty)
        #expect(try bob.agent.store.items(of: t.id).allSatisfy { $0.status == .failed })
    }

    @Test("the receiver stops a running receive: the sender's transfer ends cancelled, not interrupted")
    func receiverStops() async throws {
        let (alice, bob, t, _) = try await Self.sending()
        defer {
            alice.stop()
            bob.stop()
        }
        let outcome = try await bob.agent.controllers.inbox.decide(String(t.id.prefix(8)), .rejected)
        #expect(outcome.state == .cancelled)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .cancelled, "\(s.message ?? "")")
        #expect(s.message == "bob cancelled the transfer")
        #expect(try alice.agent.store.outgoing().isEmpty, "it is not resumed")
        let o = try await bob.waitForOffer(t.id, .cancelled)
        #expect(o.message?.hasPrefix("stopped by you") == true)
        #expect(try Self.spool(bob).isEmpty)
    }

    @Test("cancelled while interrupted: a peer that is online again is told, and drops the partial photo")
    func whileInterrupted() async throws {
        let (alice, bob, t, _) = try await ResumeTests.cutMidItem(after: 256 << 10, resuming: false)
        defer { alice.stop() }
        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        try await bob2.start()
        alice.sees(bob2)
        #expect(try !Self.spool(bob2).isEmpty, "the partial item waits for a resume")

        let s = try await alice.agent.cancelTransfer(t.id).current
        #expect(s.state == .cancelled)
        let o = try await bob2.waitForOffer(t.id, .cancelled)
        #expect(o.message == "cancelled by alice")
        #expect(try Self.spool(bob2).isEmpty, "the partial item is deleted")
        // The sender's note says the peer was told (it is written once the session ended).
        var snapshot = t.current
        while snapshot.message == "cancelled by the user" {
            snapshot = await t.snapshot(after: snapshot.phase, timeout: .seconds(30))
        }
        #expect(snapshot.message == "cancelled by the user; bob was told")
    }

    @Test("cancelled while waiting for a known peer to come online: abandoned at once")
    func whileWaitingForThePeer() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try alice.knows(bob, name: "bob")
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.png")], wait: .seconds(300))
        while t.current.message?.contains("waiting up to") != true {
            _ = await t.snapshot(after: t.current.phase, timeout: .seconds(30))
        }
        let s = try await alice.agent.cancelTransfer(t.id).current
        #expect(s.state == .cancelled)
        await #expect(throws: AgentError.self) { try await alice.agent.cancelTransfer(t.id) }
    }

    /// Alice (rate-limited) sends a big photo to Bob, who trusts her; returns once Bob has
    /// spooled part of it.
    static func sending() async throws -> (alice: TestNode, bob: TestNode, transfer: OutgoingTransfer, path: String) {
        let alice = try TestNode(name: "alice", configure: ResumeTests.slowSender)
        let bob = try TestNode(name: "bob")
        try await bob.start()
        try ResumeTests.trust(alice, on: bob)
        alice.sees(bob)
        let path = try ResumeTests.bigPhoto(in: alice.dir)
        let t = try alice.agent.send(to: "bob", paths: [path])
        try await ResumeTests.waitForSpool(bob, moreThan: 128 << 10)
        return (alice, bob, t, path)
    }
}
