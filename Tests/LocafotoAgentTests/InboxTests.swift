import Foundation
import GRDB
import LocafotoClock
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoPeers
import LocafotoSession
import LocafotoTestSupport
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoInbox
@testable import LocafotoNode
@testable import LocafotoReceiving

@Suite("Inbox policy, limits and persistence (real SQLite)")
struct InboxTests {
    static func offer(items: Int = 1) -> AssembledOffer {
        let list = (0..<items).map { i in
            OfferItem(
                id: UUID().uuidString.lowercased(), name: "p\(i).jpg", kind: "jpeg", size: 10,
                hash: String(repeating: "a", count: 64))
        }
        return AssembledOffer(id: UUID().uuidString.lowercased(), items: list, totalBytes: Int64(10 * items))
    }

    static func peer() -> PeerIdentity {
        let k = SigningKey.generate().publicKey
        return PeerIdentity(publicKey: k, fingerprint: Fingerprint(publicKey: k), name: "sender", caps: [])
    }

    static func store() throws -> (AgentStore, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-inbox-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (try AgentStore(path: dir + "/agent.sqlite"), dir)
    }

    @Test func pendingOffersPerPeerAreCapped() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.maxPendingPerPeer = 2
        let inbox = Inbox(store: store, limits: limits, spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let p = Self.peer()
        #expect(try await inbox.register(Self.offer(), from: p) == .pending)
        #expect(try await inbox.register(Self.offer(), from: p) == .pending)
        guard case .refuse(let code, _) = try await inbox.register(Self.offer(), from: p) else {
            Issue.record("third pending offer was not refused")
            return
        }
        #expect(code == .rateLimited)
        // Another peer is not affected.
        #expect(try await inbox.register(Self.offer(), from: Self.peer()) == .pending)
    }

    @Test func offersPerWindowAreCapped() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.maxOffersPerWindow = 3
        limits.maxPendingPerPeer = 100
        let inbox = Inbox(store: store, limits: limits, spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let p = Self.peer()
        for _ in 0..<3 { #expect(try await inbox.register(Self.offer(), from: p) == .pending) }
        #expect(try await inbox.register(Self.offer(), from: p) != .pending)
    }

    @Test func aDepositIsRefusedByANodeThatIsNotARelay() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = Self.offer()
        let deposit = AssembledOffer(
            id: o.id, items: o.items, totalBytes: o.totalBytes, to: Array(repeating: 1, count: 32),
            signature: Array(repeating: 2, count: 64))
        #expect(
            try await inbox.register(deposit, from: Self.peer())
                == .refuse(.refusedByPolicy, "this node is not a relay; it does not hold offers for others"))
        #expect(try store.offers().isEmpty)
    }

    @Test func aRelayedOfferIsFiledUnderItsSenderWithTheRelayAsVia() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = Self.offer()
        let sender = Self.peer()
        let relay = Self.peer()
        let relayed = AssembledOffer(
            id: o.id, items: o.items, totalBytes: o.totalBytes, to: Array(repeating: 1, count: 32),
            from: OfferSender(ed25519: sender.publicKey.bytes, name: sender.name),
            signature: Array(repeating: 2, count: 64))
        // Without the relay named, a `from` offer is not taken as direct.
        #expect(
            try await inbox.register(relayed, from: sender)
                == .refuse(.protocolViolation, "a relayed offer must name its sender in 'from'"))
        #expect(try await inbox.register(relayed, from: sender, via: relay) == .pending)
        let stored = try #require(try store.offer(o.id))
        #expect(stored.senderFingerprint == sender.fingerprint.description)
        #expect(stored.viaFingerprint == relay.fingerprint.description)
    }

    @Test func anOfferIDFromAnotherSenderIsRefused() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = Self.offer()
        #expect(try await inbox.register(o, from: Self.peer()) == .pending)
        guard case .refuse(let code, let message) = try await inbox.register(o, from: Self.peer()) else {
            Issue.record("a second sender reused the offer id")
            return
        }
        #expect(code == .protocolViolation)
        #expect(message.contains("another sender"))
    }

    @Test func theSameOfferAgainKeepsItsDecision() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let alice = Self.peer()
        let o = Self.offer(items: 2)
        #expect(try await inbox.register(o, from: alice) == .pending)
        // Still undecided: the new session waits on the same inbox entry.
        #expect(try await inbox.register(o, from: alice) == .pending)
        #expect(try store.offers().count == 1)
        // Other items under the same id are refused.
        var other = o
        other.items[1].name = "other.jpg"
        #expect(
            try await inbox.register(other, from: alice)
                == .refuse(.protocolViolation, "offer id reused with other items"))
        _ = try await inbox.decide(o.id, .accepted)
        await inbox.sessionEnded(o.id)
        // Accepted before: accepted again at once, nothing held yet.
        guard case .resume(let plan) = try await inbox.register(o, from: alice) else {
            Issue.record("an accepted offer was not resumed")
            return
        }
        #expect(plan.resume.isEmpty && plan.completed.isEmpty)
        // Items committed earlier are listed as completed; an item being received with a spool resumes.
        try store.updateItem(o.id, 0) {
            $0.status = .imported
            $0.photoId = "11111111-2222-3333-4444-555555555555"
        }
        let spoolDir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-spool-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: spoolDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: spoolDir) }
        let big = Self.offer(items: 2)
        let inbox2 = Inbox(store: store, limits: InboxLimits(), spoolDirectory: spoolDir, clock: SystemClock())
        #expect(try await inbox2.register(big, from: alice) == .pending)
        _ = try await inbox2.decide(big.id, .accepted)
        try store.updateItem(big.id, 1) {
            $0.status = .receiving
            $0.startJSON = Data("{}".utf8)
        }
        try Data(repeating: 0, count: 64 + 7).write(to: URL(fileURLWithPath: inbox2.spoolPath(big.id, 1)))
        guard case .resume(let plan2) = try await inbox2.register(big, from: alice) else {
            Issue.record("an accepted offer was not resumed")
            return
        }
        #expect(plan2.resume == [ResumePoint(item: 1, offset: 7)])
        #expect(plan2.completed.isEmpty)
        guard case .resume(let plan3) = try await inbox.register(o, from: alice) else { return }
        #expect(
            plan3.completed == [
                CompletedItem(item: 0, status: .imported, photo: "11111111-2222-3333-4444-555555555555")
            ])
        // Rejected before: rejected again without asking.
        let r = Self.offer()
        _ = try await inbox.register(r, from: alice)
        _ = try await inbox.decide(r.id, .rejected)
        guard case .decided(.rejected, nil, _) = try await inbox.register(r, from: alice) else {
            Issue.record("a rejected offer was not rejected again")
            return
        }
        // Withdrawn by its sender, then offered anyway: rejected with `cancelled`, which the
        // sender does not show as "declined" (messages.md CANCEL, DECISION).
        let w = Self.offer()
        _ = try await inbox.register(w, from: alice)
        #expect(
            try await inbox.withdraw(
                w.id, by: alice.fingerprint.description, current: nil, message: "cancelled by alice") != nil)
        guard case .decided(.rejected, .cancelled, _) = try await inbox.register(w, from: alice) else {
            Issue.record("a withdrawn offer was not refused as cancelled")
            return
        }
    }

    @Test func anItemWhoseContentChangedStartsAgain() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(store: store, limits: InboxLimits(), spoolDirectory: dir, clock: SystemClock())
        let alice = Self.peer()
        let o = Self.offer(items: 1)
        _ = try await inbox.register(o, from: alice)
        _ = try await inbox.decide(o.id, .accepted)
        try store.updateItem(o.id, 0) {
            $0.status = .receiving
            $0.startJSON = Data("{}".utf8)
        }
        try Data(repeating: 0, count: 64 + 5).write(to: URL(fileURLWithPath: inbox.spoolPath(o.id, 0)))
        var changed = o
        changed.items[0].hash = String(repeating: "b", count: 64)
        guard case .resume(let plan) = try await inbox.register(changed, from: alice) else {
            Issue.record("not resumed")
            return
        }
        #expect(plan.resume.isEmpty, "a changed item is not resumed")
        #expect(!FileManager.default.fileExists(atPath: inbox.spoolPath(o.id, 0)), "its partial data is gone")
        #expect(try store.items(of: o.id)[0].hash == changed.items[0].hash)
    }

    @Test func decisionReachesTheWaitingSessionAndPersists() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = Self.offer(items: 3)
        _ = try await inbox.register(o, from: Self.peer())
        let cancelled = Task { try await inbox.waitForDecision(o.id) }
        cancelled.cancel()
        #expect(try await cancelled.value == nil, "a cancelled wait returns without a decision")
        // The decision may come before or after the wait begins: either way the wait gets it.
        async let waited = inbox.waitForDecision(o.id)
        let outcome = try await inbox.decide(String(o.id.prefix(6)), .accepted)
        #expect(outcome.state == .accepted)
        #expect(try await waited == .accepted)
        // A reopened store (agent restart) still has it.
        let reopened = try AgentStore(path: dir + "/agent.sqlite")
        #expect(try reopened.offer(o.id)?.state == .accepted)
        #expect(try reopened.items(of: o.id).count == 3)
    }

    @Test func expiredOfferCannotBeAccepted() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = ManualClock()
        let inbox = Inbox(store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: clock)
        let o = Self.offer()
        _ = try await inbox.register(o, from: Self.peer())
        clock.advance(by: InboxLimits().expiry - .seconds(1))
        #expect(try await inbox.expireIfDue(o.id) == false, "a second before its expiry it still waits")
        clock.advance(by: .seconds(1))
        #expect(try await inbox.waitForDecision(o.id) == .expired)
        await #expect(throws: AgentError.self) { try await inbox.decide(o.id, .accepted) }
    }

    @Test func acceptingAfterTheSenderLeftIsKeptForItsReturn() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let alice = Self.peer()
        let o = Self.offer()
        _ = try await inbox.register(o, from: alice)
        await inbox.sessionEnded(o.id)
        let outcome = try await inbox.decide(o.id, .accepted)
        #expect(outcome.state == .interrupted)
        #expect(outcome.message.contains("not connected now"))
        guard case .resume = try await inbox.register(o, from: alice) else {
            Issue.record("the returning sender was asked again")
            return
        }
        #expect(try store.offer(o.id)?.state == .accepted)
    }

    @Test func identityFileIsPrivateAndStable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lf-id-\(UUID().uuidString.prefix(8))")
            .path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/identity.json"
        let a = try Identity.loadOrCreate(at: path)
        let b = try Identity.loadOrCreate(at: path)
        #expect(a.fingerprint == b.fingerprint)
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        chmod(path, 0o644)
        #expect(throws: AgentError.self) { try Identity.load(at: path) }
        chmod(path, 0o600)
        try Data("{\"version\":1,\"ed25519Seed\":\"AAAA\"}".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        #expect(throws: AgentError.self) { try Identity.load(at: path) }
    }
}

/// A sender known only from offers a relay handed on: its key is proven by the offer signature,
/// its name (`from.name`) is the relay's word (protocol/messages.md "Relay").
@Suite("Senders met through a relay")
struct RelayedPeerRecordTests {
    @Test func aRelayedNameNeverRenamesAPeerMetDirectlyAndSuchAPeerIsListedAsRelayed() throws {
        let (store, dir) = try InboxTests.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let met = InboxTests.peer()
        try store.sawPeer(fingerprint: met.fingerprint, publicKey: met.publicKey.bytes, name: "alice", address: nil)
        try store.sawPeer(
            fingerprint: met.fingerprint, publicKey: met.publicKey.bytes, name: "mallory", address: nil, direct: false)
        let alice = try #require(try store.peer(met.fingerprint.description))
        #expect(alice.name == "alice" && alice.metDirectly && PeersController.trust(alice) == .known)

        let stranger = InboxTests.peer()
        try store.sawPeer(
            fingerprint: stranger.fingerprint, publicKey: stranger.publicKey.bytes, name: "bob?", address: nil,
            direct: false)
        var bob = try #require(try store.peer(stranger.fingerprint.description))
        #expect(!bob.metDirectly && PeersController.trust(bob) == .relayed && bob.name == "bob?")
        // Trusting it is the user's word on the key (compare fingerprints first); it stays marked as never met.
        try store.setTrust(bob.fingerprint, .trusted)
        #expect(try store.peer(bob.fingerprint).map(PeersController.trust) == .trusted)
        // A later direct handshake makes it an ordinary peer under the name it gives itself.
        try store.sawPeer(
            fingerprint: stranger.fingerprint, publicKey: stranger.publicKey.bytes, name: "bob", address: nil)
        bob = try #require(try store.peer(stranger.fingerprint.description))
        #expect(bob.metDirectly && bob.name == "bob")
        try store.setTrust(bob.fingerprint, .known)
        #expect(try store.peer(bob.fingerprint).map(PeersController.trust) == .known)
    }
}

/// What the inbox of an earlier version kept of imported photos, forgotten at the upgrade.
@Suite("Inbox store upgrade (real SQLite)")
struct InboxStoreUpgradeTests {
    @Test("v6-forget-imported blanks imported items' names and hashes, and they leave the file")
    func importedItemsAreForgottenAtTheUpgrade() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-upgrade-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/agent.sqlite"
        let hash = String(repeating: "c3", count: 32)
        do {
            // agent.sqlite as the previous version left it: an offer with an imported photo and
            // one still waiting for a decision.
            let old = try DatabaseQueue(path: path)
            try AgentStore.migrator.migrate(old, upTo: "v5-relayed-peers")
            try old.write { db in
                for (offer, state) in [("o1", "completed"), ("o2", "pending")] {
                    try db.execute(
                        sql: """
                            INSERT INTO offer (id, senderFingerprint, senderName, senderKey, receivedAt, expiresAt, state, itemCount, totalBytes)
                            VALUES (?, 'FP', 'alice', x'00', ?, ?, ?, 1, 10)
                            """, arguments: [offer, Date(), Date(), state])
                }
                try db.execute(
                    sql: """
                        INSERT INTO offerItem (offerId, idx, itemId, name, kind, size, hash, status, photoId)
                        VALUES ('o1', 0, 'i1', 'Imported-Secret-Name.jpg', 'jpeg', 10, ?, 'imported', 'p-1'),
                               ('o2', 0, 'i2', 'Offered-Name.jpg', 'jpeg', 10, ?, 'offered', NULL)
                        """, arguments: [hash, hash])
            }
            try old.close()
        }
        let store = try AgentStore(path: path)
        let imported = try #require(try store.item("o1", 0))
        #expect(
            imported.name.isEmpty && imported.hash.isEmpty && imported.photoId == "p-1" && imported.status == .imported)
        #expect(try store.item("o2", 0)?.name == "Offered-Name.jpg", "what waits for a decision is shown as offered")
        #expect(try store.setting(AgentStore.vacuumPending) == nil, "the VACUUM ran")
        let bytes = ["", "-wal"].map { FileManager.default.contents(atPath: path + $0) ?? Data() }
        #expect(
            !bytes.contains { $0.range(of: Data("Imported-Secret-Name".utf8)) != nil },
            "the name left the file and its WAL")
    }
}
