import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoReceiving
import LocafotoVault
import LocafotoWire
import Synchronization
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoSending
@testable import LocafotoTransfers

/// Interrupted transfers between two real agents over real TCP: the receiver (or the sender) is
/// stopped in the middle of an item and started again on the same home, and the transfer
/// resumes from what the receiver holds. The sender is rate-limited so the cut lands mid-item.
@Suite("Resuming interrupted transfers")
struct ResumeTests {
    /// A photo large enough to be cut: a real JPEG followed by random bytes (the content type is
    /// sniffed from the start; the content hash covers every byte).
    static func bigPhoto(in dir: String, name: String = "big.jpg", extra: Int = 3 << 20) throws -> String {
        let path = dir + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("sample.jpg"))))
        bytes += SecureRandom.bytes(extra)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func slowSender(_ c: inout AgentConfiguration) {
        c.sendRateLimit = 768 << 10
        c.resumeInterval = .milliseconds(200)
    }

    /// Waits until `node` has spooled more than `bytes` of some item: checked at each of its
    /// events, where a receiver's progress goes out a few times a second while bytes arrive.
    static func waitForSpool(_ node: TestNode, moreThan bytes: Int64) async throws {
        let dir = node.agent.configuration.home.spoolDirectory
        try await node.waitUntil("more than \(bytes) bytes spooled") {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).contains { f in
                guard f.hasSuffix(".part") else { return false }
                let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + f)[.size] as? Int64) ?? 0
                return size > bytes
            }
        }
    }

    /// Waits for each phase of the transfer in turn (a change of state is one) until it is in
    /// `state` (within the hang guard).
    static func waitForState(_ t: OutgoingTransfer, _ state: OutgoingTransfer.State) async throws {
        let deadline = ContinuousClock.now + .seconds(hangGuardSeconds)
        var phase = t.current.phase
        while t.current.state != state, ContinuousClock.now < deadline {
            phase = await t.snapshot(after: phase, timeout: deadline - ContinuousClock.now).phase
        }
        guard t.current.state != state else { return }
        throw TestFailure("transfer never became \(state); it is \(t.current.state): \(t.current.message ?? "")")
    }

    static func trust(_ sender: TestNode, on receiver: TestNode) throws {
        try receiver.trusts(sender, name: "alice")
    }

    /// Alice (rate-limited) sends a big photo to Bob, who trusts her; Bob's agent stops once it
    /// holds more than `bytes` of it, keeping its home. Returns when Alice sees the transfer
    /// interrupted. `resuming`: Alice runs her resume loop.
    static func cutMidItem(extra: Int = 3 << 20, after bytes: Int64 = 512 << 10, resuming: Bool = true) async throws
        -> (alice: TestNode, bob: TestNode, transfer: OutgoingTransfer, path: String)
    {
        let alice = try TestNode(name: "alice", configure: Self.slowSender)
        let bob = try TestNode(name: "bob")
        if resuming { alice.startResuming() }
        try await bob.start()
        try Self.trust(alice, on: bob)
        alice.sees(bob)
        let path = try Self.bigPhoto(in: alice.dir, extra: extra)
        let t = try alice.agent.send(to: "bob", paths: [path])
        try await Self.waitForSpool(bob, moreThan: bytes)
        bob.stop(keepingHome: true)
        try await Self.waitForState(t, .interrupted)
        return (alice, bob, t, path)
    }

    /// Alice offers a photo to Bob (untrusted), whose agent stops while the offer waits for his
    /// decision. Returns when Alice sees the transfer interrupted.
    static func goneWhilePending() async throws -> (
        alice: TestNode, bob: TestNode, transfer: OutgoingTransfer, offer: OfferRecord
    ) {
        let alice = try TestNode(name: "alice") { $0.resumeInterval = .milliseconds(200) }
        let bob = try TestNode(name: "bob")
        alice.startResuming()
        try await bob.start()
        alice.sees(bob)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.png")])
        let offer = try await bob.waitForPendingOffer()
        bob.stop(keepingHome: true)
        try await Self.waitForState(t, .interrupted)
        return (alice, bob, t, offer)
    }

    @Test("receiver restarted mid-item: the item resumes at the receiver's offset and arrives intact")
    func receiverRestart() async throws {
        let (alice, bob, t, path) = try await Self.cutMidItem()
        defer { alice.stop() }

        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        let offer = try #require(try bob2.agent.store.offers().first)
        #expect(offer.state == .interrupted)
        #expect(try bob2.agent.vault().photos().isEmpty, "nothing partial is imported")
        try await bob2.start()
        alice.sees(bob2)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        _ = try await bob2.waitForOffer(offer.id, .completed)
        #expect((s.items[0].resumedBytes ?? 0) > 0, "the second session started where the first stopped")
        #expect(
            s.sentBytes == s.totalBytes && s.items[0].sentBytes == s.items[0].bytes,
            "sent \(s.sentBytes) of \(s.totalBytes)")
        let photos = try bob2.agent.vault().photos()
        #expect(photos.count == 1)
        #expect(
            Data(try bob2.agent.vault().exportData(photos[0].id)) == (try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bob2.agent.configuration.home.spoolDirectory).isEmpty)
        #expect(try bob2.agent.store.offers().count == 1, "the same offer, not a second one")
    }

    @Test("sender restarted while interrupted: the transfer is read back from its store and completes")
    func senderRestart() async throws {
        let (alice, bob, t, path) = try await Self.cutMidItem(resuming: false)
        alice.stop(keepingHome: true)

        let alice2 = try TestNode(name: "alice", reopening: alice, configure: Self.slowSender)
        defer { alice2.stop() }
        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        try await bob2.start()
        alice2.sees(bob2)
        alice2.startResuming()
        // Registered in the outbox, then announced (`transfer.state`).
        try await alice2.waitUntil("the interrupted transfer loaded") { alice2.agent.transfer(t.id) != nil }
        let t2 = try #require(alice2.agent.transfer(t.id), "the interrupted transfer is loaded at start")
        let s = try await alice2.waitForTransfer(t2)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect((s.items[0].resumedBytes ?? 0) > 0)
        let photos = try bob2.agent.vault().photos()
        #expect(photos.count == 1)
        #expect(
            Data(try bob2.agent.vault().exportData(photos[0].id)) == (try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(try alice2.agent.store.outgoing().isEmpty, "a finished transfer is no longer kept")
    }

    @Test(
        "sender stopped in the middle of a send: the send ends with its agent, stored as interrupted, and a restart completes it"
    )
    func senderStoppedMidSend() async throws {
        let alice = try TestNode(name: "alice", configure: Self.slowSender)
        let bob = try TestNode(name: "bob")
        defer { bob.stop() }
        try await bob.start()
        try Self.trust(alice, on: bob)
        alice.sees(bob)
        let path = try Self.bigPhoto(in: alice.dir)
        let t = try alice.agent.send(to: "bob", paths: [path])
        try await Self.waitForSpool(bob, moreThan: 256 << 10)
        // Stopping the agent cancels its outbox: the send must not go on as a stray task.
        alice.stop(keepingHome: true)
        try await Self.waitForState(t, .interrupted)
        let stored = try #require(
            try alice.agent.store.outgoing().first { $0.id == t.id }, "the interrupted send is stored")
        #expect(stored.state == OutgoingTransfer.State.interrupted.rawValue)
        let sentAtStop = t.current.sentBytes
        #expect(sentAtStop < t.current.totalBytes)

        let alice2 = try TestNode(name: "alice", reopening: alice, configure: Self.slowSender)
        defer { alice2.stop() }
        alice2.sees(bob)
        alice2.startResuming()
        try await alice2.waitUntil("the interrupted transfer loaded") { alice2.agent.transfer(t.id) != nil }
        let t2 = try #require(alice2.agent.transfer(t.id), "the interrupted transfer is loaded at start")
        let s = try await alice2.waitForTransfer(t2)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(t.current.sentBytes == sentAtStop, "the stopped agent's send sent nothing more")
        let photos = try bob.agent.vault().photos()
        #expect(photos.count == 1)
        #expect(
            Data(try bob.agent.vault().exportData(photos[0].id)) == (try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// Another size: the receiver sees it in the re-offer too. The same size: only the sender can
    /// tell (there is no hash in the offer, cap late-hash), and it restarts the item itself.
    @Test(
        "a file changed while interrupted is sent again from the start, and its new content arrives",
        arguments: [1 << 20, 2 << 20])
    func changedFile(newExtra: Int) async throws {
        let (alice, bob, t, path) = try await Self.cutMidItem(extra: 2 << 20, after: 256 << 10)
        defer { alice.stop() }
        _ = try Self.bigPhoto(in: alice.dir, extra: newExtra)  // same name, other content

        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        try await bob2.start()
        alice.sees(bob2)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(s.items[0].resumedBytes == nil, "a changed item restarts")
        #expect(t.plan.withLock { $0!.items[0].restart } == nil, "the restart is over once its ITEM_START went out")
        let photos = try bob2.agent.vault().photos()
        #expect(photos.count == 1)
        #expect(
            Data(try bob2.agent.vault().exportData(photos[0].id)) == (try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    @Test("accepted while the sender was away: the offer sent again is not asked twice")
    func acceptedWhileAway() async throws {
        let (alice, bob, t, offer) = try await Self.goneWhilePending()
        defer { alice.stop() }

        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        let outcome = try await bob2.agent.inbox.decide(String(offer.id.prefix(8)), .accepted)
        #expect(outcome.message.contains("arrive when"))
        try await bob2.start()
        alice.sees(bob2)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(try bob2.agent.vault().photos().count == 1)
        #expect(try bob2.agent.store.offers().count == 1)
        #expect(try bob2.agent.store.offers(states: [.pending]).isEmpty, "no second prompt")
    }

    @Test("rejected while the sender was away: the offer sent again is rejected without a prompt")
    func rejectedWhileAway() async throws {
        let (alice, bob, t, offer) = try await Self.goneWhilePending()
        defer { alice.stop() }
        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        _ = try await bob2.agent.inbox.decide(offer.id, .rejected)
        try await bob2.start()
        alice.sees(bob2)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .rejected)
        #expect(try bob2.agent.vault().photos().isEmpty)
    }

    @Test("an interrupted transfer can be dropped on either side: cancel on the sender, reject on the receiver")
    func droppingAnInterruptedTransfer() async throws {
        let (alice, bob, t, _) = try await Self.cutMidItem(after: 256 << 10, resuming: false)
        defer { alice.stop() }
        await #expect(throws: AgentError.self) { try await alice.agent.cancelTransfer("zz") }
        let cancelled = try await alice.agent.cancelTransfer(String(t.id.prefix(8)))
        #expect(
            cancelled.current.state == .cancelled
                && cancelled.current.message?.hasPrefix("cancelled by the user") == true)
        #expect(try alice.agent.store.outgoing().isEmpty)
        await #expect(throws: AgentError.self) { try await alice.agent.cancelTransfer(t.id) }

        let bob2 = try TestNode(name: "bob", reopening: bob)
        defer { bob2.stop() }
        let offer = try #require(try bob2.agent.store.offers().first)
        #expect(offer.state == .interrupted)
        let spool = bob2.agent.configuration.home.spoolDirectory
        #expect(
            try !FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "the partial item is kept for a resume"
        )
        let outcome = try await bob2.agent.controllers.inbox.decide(offer.id, .rejected)
        #expect(outcome.state == .rejected)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "rejecting deletes the partial item")
        #expect(
            try bob2.agent.store.items(of: offer.id).map(\.status) == [.failed],
            "no item of a rejected offer is still arriving")
        await #expect(throws: AgentError.self) { try await bob2.agent.controllers.inbox.decide(offer.id, .accepted) }
    }

    @Test("an interrupted transfer not resumed within the window fails, and no item of it is left arriving or spooled")
    func notResumedInTime() async throws {
        let (alice, bob, _, _) = try await Self.cutMidItem(after: 256 << 10, resuming: false)
        defer { alice.stop() }
        // The window is 24 h; a window of zero makes "later" now without waiting a day.
        let bob2 = try TestNode(name: "bob", reopening: bob) { $0.inboxLimits.resumeWindow = .zero }
        defer { bob2.stop() }
        let offer = try #require(try bob2.agent.store.offers().first)
        #expect(offer.state == .interrupted)
        #expect(try bob2.agent.store.items(of: offer.id).map(\.status) == [.receiving])
        let spool = bob2.agent.configuration.home.spoolDirectory
        #expect(try !FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
        bob2.agent.receiver.expireInterrupted()
        #expect(try bob2.agent.store.offer(offer.id)?.state == .failed)
        #expect(try bob2.agent.store.items(of: offer.id).map(\.status) == [.failed])
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
    }

    @Test("a resumed item whose header differs from the interrupted one fails, and nothing of it stays spooled")
    func resumedWithAnotherHeader() async throws {
        let (alice, bob, t, _) = try await Self.cutMidItem(after: 256 << 10)
        defer { alice.stop() }
        // Bob's record of the interrupted ITEM_START now names another iv than Alice's, as if
        // the sender resumed under another photo key.
        let bob2 = try TestNode(name: "bob", reopening: bob)
        let offer = try #require(try bob2.agent.store.offers().first)
        let item = try #require(try bob2.agent.store.item(offer.id, 0))
        var start = try JSONDecoder().decode(ItemStart.self, from: try #require(item.startJSON))
        start.iv = Bytes(SecureRandom.bytes(12))
        let altered = try JSONEncoder().encode(start)
        try bob2.agent.store.updateItem(offer.id, 0) { $0.startJSON = altered }
        try await bob2.start()
        alice.sees(bob2)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .failed, "\(s.message ?? "")")
        #expect(s.items[0].code == "protocol_violation", "\(s.items[0])")
        let spool = bob2.agent.configuration.home.spoolDirectory
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "the refused item's part is deleted")
        #expect(try bob2.agent.store.items(of: offer.id).map(\.status) == [.failed])
        #expect(try bob2.agent.vault().photos().isEmpty)
        bob2.stop(keepingHome: true)
        let bob3 = try TestNode(name: "bob", reopening: bob2)
        defer { bob3.stop() }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "and stays deleted across a restart")
    }
}
