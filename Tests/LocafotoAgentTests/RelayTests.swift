import Foundation
import GRDB
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoReceiving
import LocafotoSession
import LocafotoVault
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoPeers
@testable import LocafotoRelay
@testable import LocafotoRelayServer
@testable import LocafotoSending
@testable import LocafotoTransfers

/// Store-and-forward through a relay between real agents over real TCP: Alice deposits at the
/// relay while Carol is away, Carol collects (or the relay finds her online), accepts, and the
/// signed outcome comes back to Alice. Real relay store, real vaults, real SQLite.
@Suite("Relay: deposit, hand-on, receipts")
struct RelayTests {
    struct Trio {
        let alice: TestNode
        let relay: TestNode
        let carol: TestNode
        var relayAddress: String { "127.0.0.1:\(relay.port)" }
        var relayStore: RelayStore { relay.agent.relayStore! }

        /// The relay records an outcome once the last ITEM_RESULT is in, just after the
        /// recipient's side of the session ends: waits for it (a hang guard, not a timing assertion).
        /// The relay's store is observed (GRDB's `ValueObservation`: a new value at each commit
        /// that changes the counter).
        func waitForDeliveries(_ n: Int) async throws {
            let deliveries = ValueObservation.tracking { db in
                try Int.fetchOne(
                    db, sql: "SELECT value FROM counter WHERE name = ?", arguments: [LocafotoRelay.Counter.deliveries])
                    ?? 0
            }
            let db = relayStore.db
            let recorded = try await hangGuard("the relay recording \(n) deliveries") {
                for try await count in deliveries.values(in: db) where count >= n { return true }
                return false
            }
            if !recorded { throw TestFailure("the relay's store closed before \(n) deliveries") }
        }

        func stop() {
            alice.stop()
            relay.stop()
            carol.stop()
        }
    }

    static func relayNode(admitting: [TestNode]?, reopening: TestNode? = nil, port: Int = 0) throws -> TestNode {
        let admission: RelayAdmission =
            admitting.map { .allowList(Set($0.map { $0.agent.identity.fingerprint.description })) } ?? .open
        return try TestNode(name: "relay", vault: false, reopening: reopening) {
            $0.relay = RelayConfiguration(limits: RelayLimits(), admission: admission)
            $0.port = port
        }
    }

    /// Alice knows Carol's key (they met before); Carol is not running (no listener).
    static func trio(
        admitAlice: Bool = true, open: Bool = false, alice configure: (inout AgentConfiguration) -> Void = { _ in }
    ) async throws -> Trio {
        let alice = try TestNode(name: "alice", configure: configure)
        let carol = try TestNode(name: "carol")
        let relay = try relayNode(admitting: open ? nil : admitAlice ? [alice] : [carol])
        try await relay.start()
        try alice.knows(carol, name: "carol")
        return Trio(alice: alice, relay: relay, carol: carol)
    }

    static func photo() -> String { Fixtures.path("sample.jpg") }

    static func depositForCarol(_ trio: Trio, paths: [String] = [photo()]) async throws -> OutgoingTransfer {
        let t = try trio.alice.agent.send(to: "carol", paths: paths, via: trio.relayAddress)
        try await ResumeTests.waitForState(t, .held)
        return t
    }

    /// Carol collects from the relay and accepts what arrives; returns how many offers she took.
    static func collectAndAccept(_ trio: Trio, relayAddress: String? = nil) async throws -> Int {
        let address = try StaticAddress(parsing: relayAddress ?? trio.relayAddress)
        let carol = trio.carol
        let collecting = Task { try await carol.agent.receiver.collect(from: address) }
        let offer = try await carol.waitForPendingOffer()
        _ = try await carol.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .accepted)
        return try await collecting.value
    }

    @Test func aDepositWaitsForCarolWhoCollectsAcceptsAndAliceLearnsIt() async throws {
        let trio = try await Self.trio()
        defer { trio.stop() }
        let t = try await Self.depositForCarol(trio)
        #expect(t.current.items.allSatisfy { $0.status == .held })
        var status = try trio.relayStore.status()
        #expect(status.queues.map(\.recipient.fingerprint) == [trio.carol.agent.identity.fingerprint.description])
        #expect(status.totals.items == 1)

        let address = try StaticAddress(parsing: trio.relayAddress)
        let carol = trio.carol
        let collecting = Task { try await carol.agent.receiver.collect(from: address) }
        let offer = try await carol.waitForPendingOffer()
        // Filed under the original sender, verified by her signature, with the relay as carrier.
        #expect(offer.senderFingerprint == trio.alice.agent.identity.fingerprint.description)
        #expect(offer.viaFingerprint == trio.relay.agent.identity.fingerprint.description)
        _ = try await carol.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .accepted)
        #expect(try await collecting.value == 1)
        try await trio.waitForDeliveries(1)

        let photos = try carol.agent.unlockedVault().photos()
        #expect(photos.count == 1)
        #expect(photos.first?.senderFingerprint == trio.alice.agent.identity.fingerprint.description)
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.photo())))
        #expect(try carol.agent.unlockedVault().exportData(photos[0].id) == original)

        // Carol never met Alice: her key is proven by the offer signature, her name is the relay's word.
        let listed = try carol.agent.controllers.peers.list().first {
            $0.fingerprint == trio.alice.agent.identity.fingerprint.description
        }
        #expect(listed?.trust == .relayed)

        status = try trio.relayStore.status()
        #expect(status.queues.isEmpty && status.deliveries == 1 && status.receiptsWaiting == 1)
        #expect(t.current.state == .held)
        await trio.alice.agent.sender.pollReceipts()
        #expect(t.current.state == .done, "\(t.current.message ?? "")")
        #expect(t.current.items.map(\.status) == [.imported])
        #expect(try trio.relayStore.status().receiptsWaiting == 0)
        // Nothing left to collect.
        #expect(try await carol.agent.receiver.collect(from: address) == 0)
    }

    @Test func aRejectionComesBackSignedAndEndsTheTransfer() async throws {
        let trio = try await Self.trio()
        defer { trio.stop() }
        let t = try await Self.depositForCarol(trio)
        let carol = trio.carol
        let address = try StaticAddress(parsing: trio.relayAddress)
        let collecting = Task { try await carol.agent.receiver.collect(from: address) }
        let offer = try await carol.waitForPendingOffer()
        _ = try await carol.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .rejected)
        _ = try await collecting.value
        try await trio.waitForDeliveries(1)
        #expect(try carol.agent.unlockedVault().photos().isEmpty)
        await trio.alice.agent.sender.pollReceipts()
        #expect(t.current.state == .rejected, "\(t.current.message ?? "")")
        #expect(
            t.current.items.map(\.status) == [.init(endedWith: .rejected)],
            "no item is left held once the relay let go of it")
    }

    @Test func aDepositWithABadOfferSignatureIsRefusedAndCounted() async throws {
        let trio = try await Self.trio()
        defer { trio.stop() }
        // Signed by another key than the depositor's (the handshake peer, Alice).
        let forged = try RelayTrustTests.offer(from: SigningKey.generate(), to: trio.carol.agent.identity.publicKey)
        let part = Offer(
            offer: forged.id, items: forged.items, more: false, totalItems: forged.items.count,
            totalBytes: forged.totalBytes,
            to: forged.to, signature: forged.signature)
        let endpoint = try StaticAddress(parsing: trio.relayAddress).endpoint
        let decision = try await trio.alice.agent.sessions.withSession(endpoint, expected: nil) { s -> Decision in
            try await s.send(.offer(part))
            guard case .decision(let d)? = try await s.nextSkippingPings() else { throw TestFailure("no DECISION") }
            return d
        }
        #expect(decision.decision == .rejected && decision.code == .badSignature, "\(decision)")
        let status = try trio.relayStore.status()
        #expect(status.refusals["bad-signature"] == 1, "\(status.refusals)")
        #expect(status.totals.offers == 0)
    }

    @Test func bytesAlteredAtTheRelayAreCaughtByCarolAndNothingIsImported() async throws {
        let trio = try await Self.trio()
        defer { trio.stop() }
        let t = try await Self.depositForCarol(trio)
        let offerID = try #require(t.current.offer)
        // The relay (or whoever controls its disk) flips one ciphertext byte.
        let data = trio.relayStore.directory + "/deposits/\(offerID)/0.data"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: data)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: data))

        #expect(try await Self.collectAndAccept(trio) == 1)
        try await trio.waitForDeliveries(1)
        #expect(try trio.carol.agent.unlockedVault().photos().isEmpty)
        let item = try #require(try trio.carol.agent.store.items(of: offerID).first)
        #expect(item.status == .failed)
        #expect(item.errorCode == Int(WireErrorCode.decryptFailed.rawValue), "\(item.errorMessage ?? "")")
        await trio.alice.agent.sender.pollReceipts()
        #expect(t.current.state == .failed)
        #expect(t.current.items.first?.status == .failed)
    }

    @Test func aSenderNotOnTheAllowListIsRefusedWithAClearMessage() async throws {
        let trio = try await Self.trio(admitAlice: false)
        defer { trio.stop() }
        let t = try trio.alice.agent.send(to: "carol", paths: [Self.photo()], via: trio.relayAddress)
        let s = try await trio.alice.waitForTransfer(t)
        #expect(s.state == .failed)
        #expect(s.message?.contains("refused the deposit") == true, "\(s.message ?? "")")
        #expect(s.message?.contains("refused_by_policy") == true, "\(s.message ?? "")")
        #expect(try trio.relayStore.status().totals.offers == 0)
        #expect(try trio.relayStore.status().refusals["policy"] == 1)
    }

    @Test func aRestartedRelayStillHoldsWhatItAcknowledged() async throws {
        let trio = try await Self.trio()
        let t = try await Self.depositForCarol(trio, paths: [Self.photo(), Fixtures.path("sample.png")])
        trio.relay.stop(keepingHome: true)
        // Same home, same port (senders fetch receipts at the address they deposited at).
        let reopened = try Self.relayNode(admitting: [trio.alice], reopening: trio.relay, port: trio.relay.port)
        try await trio.relay.stopped()
        try await reopened.start()
        try #require(reopened.port == trio.relay.port)
        defer {
            trio.alice.stop()
            trio.carol.stop()
            reopened.stop()
        }
        #expect(try reopened.agent.relayStore!.status().totals.items == 2)
        let restarted = Trio(alice: trio.alice, relay: reopened, carol: trio.carol)
        #expect(try await Self.collectAndAccept(restarted) == 1)
        try await restarted.waitForDeliveries(1)
        #expect(try trio.carol.agent.unlockedVault().photos().count == 2)
        await trio.alice.agent.sender.pollReceipts()
        #expect(t.current.state == .done, "\(t.current.message ?? "")")
    }

    @Test func theRelayHandsOnToARecipientItSeesOnline() async throws {
        let trio = try await Self.trio()
        defer { trio.stop() }
        let t = try await Self.depositForCarol(trio)
        try await trio.carol.start()
        trio.relay.sees(trio.carol)
        trio.relay.agent.relay!.deliveryRound()
        let offer = try await trio.carol.waitForPendingOffer()
        #expect(offer.viaFingerprint == trio.relay.agent.identity.fingerprint.description)
        _ = try await trio.carol.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .accepted)
        try await trio.waitForDeliveries(1)
        #expect(try trio.carol.agent.unlockedVault().photos().count == 1)
        await trio.alice.agent.sender.pollReceipts()
        #expect(t.current.state == .done, "\(t.current.message ?? "")")
    }

    @Test func aTrustedPeerThatIsOfflineGetsADepositAtTheConfiguredRelayAutomatically() async throws {
        let carolTrusted = try await Self.trio(open: true)
        defer { carolTrusted.stop() }
        let relay = try StaticAddress(parsing: carolTrusted.relayAddress)
        // An agent configured with the relay (as `--relay` does).
        let alice = try TestNode(name: "alice2") { $0.relays = [relay] }
        defer { alice.stop() }
        let carol = carolTrusted.carol
        try alice.knows(carol, name: "carol")
        // Known but not trusted: no automatic deposit, a plain "not online".
        let untrusted = try await alice.waitForTransfer(try alice.agent.send(to: "carol", paths: [Self.photo()]))
        #expect(
            untrusted.state == .failed && untrusted.message?.contains("not online") == true,
            "\(untrusted.message ?? "")")
        #expect(try carolTrusted.relayStore.status().totals.offers == 0)
        try alice.agent.store.setTrust(carol.agent.identity.fingerprint.description, .trusted)
        let t = try alice.agent.send(to: "carol", paths: [Self.photo()])
        try await ResumeTests.waitForState(t, .held)
        #expect(try carolTrusted.relayStore.status().totals.offers == 1)
    }

    @Test func aPeerThatIsNotARelayIsNotUsedAsOne() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try alice.knows(bob, name: "bob")
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "bob", paths: [Self.photo()], via: "127.0.0.1:\(bob.port)"))
        #expect(s.state == .failed && s.message?.contains("is not a relay") == true, "\(s.message ?? "")")
        #expect(try bob.agent.store.offers().isEmpty)
    }
}

/// The checks a recipient makes on an offer handed on by a relay, and on receipts.
@Suite("Relay: what a recipient and a sender believe")
struct RelayTrustTests {
    static func offer(from sender: SigningKey, to recipient: SigningPublicKey, name: String = "a.jpg") throws
        -> AssembledOffer
    {
        let items = [
            OfferItem(
                id: UUID().uuidString.lowercased(), name: name, kind: "jpeg", size: 10,
                hash: String(repeating: "ab", count: 32))
        ]
        let id = UUID().uuidString.lowercased()
        let signature = try Offer.signature(id: id, items: items, sender: sender, recipient: recipient)
        return AssembledOffer(
            id: id, items: items, totalBytes: 10, to: recipient.bytes,
            from: OfferSender(ed25519: sender.publicKey.bytes, name: "alice"),
            signature: signature)
    }

    @Test func aRelayedOfferIsBelievedOnlyWithItsSendersSignatureForThisNode() throws {
        let carol = try TestNode(name: "carol", vault: false)
        defer { carol.stop() }
        let alice = SigningKey.generate()
        let good = try Self.offer(from: alice, to: carol.agent.identity.publicKey)
        #expect(carol.agent.receiver.relayedSender(of: good)?.fingerprint == Fingerprint(publicKey: alice.publicKey))

        var renamed = good
        renamed.items[0].name = "b.jpg"  // altered by the relay after signing
        #expect(carol.agent.receiver.relayedSender(of: renamed) == nil)

        let forSomeoneElse = try Self.offer(from: alice, to: SigningKey.generate().publicKey)
        #expect(carol.agent.receiver.relayedSender(of: forSomeoneElse) == nil)

        var impersonated = good  // the relay claims another sender for Alice's signature
        impersonated.from = OfferSender(ed25519: SigningKey.generate().publicKey.bytes, name: "alice")
        #expect(carol.agent.receiver.relayedSender(of: impersonated) == nil)
    }

    @Test func aReceiptWithoutTheRecipientsSignatureIsNotBelieved() throws {
        let alice = try TestNode(name: "alice", vault: false)
        defer { alice.stop() }
        let carol = SigningKey.generate()
        let t = OutgoingTransfer(peer: "carol", clock: SystemClock())
        let route = RelayRoute(
            address: "127.0.0.1:1", fingerprint: "x", name: "relay", recipientKey: carol.publicKey.bytes)
        let plan = OutgoingPlan(
            offerID: UUID().uuidString.lowercased(), peerFingerprint: "c", peerName: "carol", items: [], relay: route)
        let at = "2026-11-21T10:00:00Z"
        // A relay forging "accepted" with a signature of its own making.
        let forged = Receipt(
            offer: plan.offerID, to: carol.publicKey.bytes, state: .delivered, decision: .accepted,
            receipt: SigningKey.generate().signature(for: [1, 2, 3]), at: at)
        alice.agent.sender.apply(forged, to: t, plan: plan, route: route)
        #expect(t.current.state == .failed)
        #expect(t.current.message?.contains("not believed") == true)

        let t2 = OutgoingTransfer(peer: "carol", clock: SystemClock())
        let signed = DecisionReceipt.sign(
            offerID: plan.offerID, sender: alice.agent.identity.publicKey, recipient: carol, decision: "rejected")
        alice.agent.sender.apply(
            Receipt(
                offer: plan.offerID, to: carol.publicKey.bytes, state: .rejected, decision: .rejected, receipt: signed,
                at: at),
            to: t2, plan: plan, route: route)
        #expect(t2.current.state == .rejected)
    }

    @Test func heldItemsTakeTheEndOfATransferThatAReceiptEndsUndelivered() throws {
        let alice = try TestNode(name: "alice", vault: false)
        defer { alice.stop() }
        let carol = SigningKey.generate()
        let route = RelayRoute(
            address: "127.0.0.1:1", fingerprint: "x", name: "relay", recipientKey: carol.publicKey.bytes)
        let plan = OutgoingPlan(
            offerID: UUID().uuidString.lowercased(), peerFingerprint: "c", peerName: "carol", items: [], relay: route)
        let at = "2026-11-21T10:00:00Z"
        func held() -> OutgoingTransfer {
            let t = OutgoingTransfer(peer: "carol", clock: SystemClock())
            t.update {
                $0.state = .held
                $0.items = [
                    .init(name: "a.jpg", bytes: 10, status: .held), .init(name: "b.jpg", bytes: 20, status: .held),
                ]
            }
            return t
        }
        let forged = Receipt(
            offer: plan.offerID, to: carol.publicKey.bytes, state: .delivered, decision: .accepted,
            receipt: SigningKey.generate().signature(for: [1, 2, 3]), at: at)
        let expiredSigned = DecisionReceipt.sign(
            offerID: plan.offerID, sender: alice.agent.identity.publicKey, recipient: carol, decision: "expired")
        let cases: [(Receipt, OutgoingTransfer.State)] = [
            (forged, .failed),  // a decision without the recipient's signature is not believed
            (
                Receipt(
                    offer: plan.offerID, to: carol.publicKey.bytes, state: .delivered, decision: .expired,
                    receipt: expiredSigned, at: at), .expired
            ),
            (
                Receipt(
                    offer: plan.offerID, to: carol.publicKey.bytes, state: .expired, decision: nil, receipt: nil, at: at
                ), .expired
            ),  // never collected
        ]
        for (receipt, end) in cases {
            let t = held()
            alice.agent.sender.apply(receipt, to: t, plan: plan, route: route)
            #expect(t.current.state == end, "\(t.current.message ?? "")")
            #expect(
                t.current.items.map(\.status) == [.init(endedWith: end), .init(endedWith: end)],
                "no item stays held once the transfer ended")
        }
    }

    @Test func receiptsArePackedIntoOneMessageAndABigOneIsSummarised() throws {
        let key = SigningKey.generate().publicKey.bytes
        let many = (0..<10_000).map { i in
            LocafotoWire.ReceiptItem(
                item: i, status: i % 1000 == 7 ? .failed : .imported, code: i % 1000 == 7 ? .hashMismatch : nil)
        }
        let big = Receipt(
            offer: UUID().uuidString.lowercased(), to: key, state: .delivered, decision: .accepted, items: many,
            at: "2026-11-21T10:00:00Z")
        let small = (0..<100).map { _ in
            Receipt(offer: UUID().uuidString.lowercased(), to: key, state: .expired, at: "2026-11-21T10:00:00Z")
        }

        #expect(try ReceiptPacking.pack(small).count == 100)
        let packed = try ReceiptPacking.pack([big] + small)
        #expect(packed.count == 1)
        #expect(packed[0].items.map(\.item) == many.filter { $0.status == .failed }.map(\.item))
        #expect(ReceiptPacking.fits(packed))
        // Behind a small receipt, the big one waits for the next message.
        #expect(try ReceiptPacking.pack([small[0], big]).map(\.offer) == [small[0].offer])
    }
}
