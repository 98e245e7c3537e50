import Foundation
import LocafotoCrypto
import LocafotoFiles
import LocafotoFormats
import LocafotoWire
import Testing

@testable import LocafotoRelay

@Suite("Relay deliveries, receipts, expiry, status")
struct OutcomeTests {
    let alice = SigningKey.generate(), bob = SigningKey.generate(), carol = SigningKey.generate()

    @Test("a delivery removes the deposit and leaves a receipt for the sender until acknowledged")
    func delivery() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (first, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100, 200])
        let (second, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [300])
        #expect(try store.deposits(for: bob.publicKey.bytes).map(\.offerID) == [first.offerID, second.offerID])

        let signature = bob.signature(for: Array("receipt".utf8))
        let results = [
            ReceiptItem(item: 0, status: "imported"),
            ReceiptItem(
                item: 1, status: "failed", code: WireErrorCode.hashMismatch.rawValue, message: "bad\u{1b}[31m hash"),
        ]
        try store.recordDelivery(offerID: first.offerID, decision: .accepted, receipt: signature, results: results)
        #expect(!disk.exists(dir.relay + "/deposits/" + first.offerID))
        #expect(try store.deposits(for: bob.publicKey.bytes).map(\.offerID) == [second.offerID])
        #expect(Relay.expectError { _ = try store.storedItems(first.offerID) }?.kind == .notFound)
        #expect(
            Relay.expectError {
                try store.recordDelivery(offerID: first.offerID, decision: .accepted, receipt: nil, results: [])
            }?.code
                == .unknownOffer)
        // Results must name stored items, once each.
        #expect(
            Relay.expectError {
                try store.recordDelivery(
                    offerID: second.offerID, decision: .accepted, receipt: nil,
                    results: [ReceiptItem(item: 1, status: "imported")])
            }?.code == .protocolViolation)
        try store.recordDelivery(offerID: second.offerID, decision: .rejected, receipt: nil, results: [])

        let (receipts, more) = try store.receipts(forSender: alice.publicKey.bytes)
        #expect(!more)
        #expect(receipts.map(\.offerID) == [first.offerID, second.offerID])
        #expect(
            receipts[0].state == .delivered && receipts[0].decision == "accepted" && receipts[0].receipt == signature)
        #expect(receipts[0].recipientKey == bob.publicKey.bytes)
        #expect(receipts[0].items.map(\.status) == ["imported", "failed"])
        #expect(receipts[0].items[1].message == "bad[31m hash")
        #expect(receipts[1].state == .rejected && receipts[1].receipt == nil)
        #expect(try store.receipts(forSender: bob.publicKey.bytes).receipts.isEmpty)

        let page = try store.receipts(forSender: alice.publicKey.bytes, limit: 1)
        #expect(page.receipts.map(\.offerID) == [first.offerID] && page.more)
        #expect(try store.acknowledgeReceipts(forSender: alice.publicKey.bytes, offerIDs: [first.offerID]) == 1)
        #expect(try store.receipts(forSender: alice.publicKey.bytes).receipts.map(\.offerID) == [second.offerID])

        let status = try store.status()
        #expect(
            status.deliveries == 2 && status.rejected == 1 && status.totals.offers == 0 && status.receiptsWaiting == 1)
        // A delivered offer id cannot be deposited again while its receipt is kept.
        #expect(Relay.expectError { _ = try store.beginDeposit(second) }?.message.contains("new offer id") == true)
    }

    @Test("expiry drops deposits with `expired` receipts, then drops old receipts")
    func expiry() throws {
        let dir = try TempDirectory()
        let limits = RelayLimits(expiry: 2 * RelayLimits.day, receiptRetention: 10 * RelayLimits.day)
        let store = try RelayStore(directory: dir.relay, limits: limits, admission: .open)
        let (old, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100, 50])
        let now = Date()
        #expect(try store.expire(now: now) == 0)
        #expect(try store.deposits(for: bob.publicKey.bytes, now: now.addingTimeInterval(3 * RelayLimits.day)).isEmpty)
        #expect(try store.recipientsWithQueue(now: now.addingTimeInterval(3 * RelayLimits.day)).isEmpty)

        #expect(try store.expire(now: now.addingTimeInterval(3 * RelayLimits.day)) == 1)
        #expect(!disk.exists(dir.relay + "/deposits/" + old.offerID))
        #expect(try store.deposit(old.offerID) == nil)
        let receipt = try #require(try store.receipts(forSender: alice.publicKey.bytes).receipts.first)
        #expect(receipt.offerID == old.offerID && receipt.state == .expired && receipt.decision == nil)
        #expect(receipt.items.map(\.item) == [0, 1])
        #expect(receipt.items.allSatisfy { $0.status == "failed" && $0.code == WireErrorCode.expired.rawValue })
        #expect(receipt.items[0].message?.contains("within 2 days") == true)
        #expect(try store.status().expired == 1)

        #expect(try store.expire(now: now.addingTimeInterval(14 * RelayLimits.day)) == 0)
        #expect(try store.receipts(forSender: alice.publicKey.bytes).receipts.isEmpty)
    }

    @Test("status: queues per recipient, totals, counters that survive a restart")
    func status() throws {
        let dir = try TempDirectory()
        let admission = try RelayAdmission.parse(
            open: false, allowed: [Relay.fingerprint(alice), Relay.fingerprint(carol)])
        let start = Date()
        do {
            let store = try RelayStore(directory: dir.relay, admission: admission)
            try Relay.deposit(store, from: alice, to: bob, sizes: [100, 200])
            try Relay.deposit(store, from: carol, to: bob, sizes: [50])
            let (delivered, _) = try Relay.deposit(store, from: carol, to: alice, sizes: [1000])
            try Relay.deposit(store, from: alice, to: carol, sizes: [7])
            try store.recordDelivery(
                offerID: delivered.offerID, decision: .accepted, receipt: nil,
                results: [ReceiptItem(item: 0, status: "queued")])
            _ = try store.admit(senderKey: bob.publicKey.bytes, recipientKey: alice.publicKey.bytes, items: 1, bytes: 1)
        }
        let store = try RelayStore(directory: dir.relay, admission: admission)
        let s = try store.status()
        #expect(s.queues.map(\.recipient.fingerprint) == [Relay.fingerprint(bob), Relay.fingerprint(carol)])
        #expect(s.queues[0].offers == 2 && s.queues[0].items == 3 && s.queues[0].bytes == 350)
        #expect(s.queues[1].offers == 1 && s.queues[1].items == 1 && s.queues[1].bytes == 7)
        #expect(s.queues[0].oldestAt >= start.addingTimeInterval(-1) && s.queues[0].oldestAt <= s.queues[1].oldestAt)
        #expect(s.totals == RelayStatus.Totals(offers: 3, items: 4, bytes: 357))
        #expect(s.deliveries == 1 && s.receiptsWaiting == 1)
        #expect(
            s.refusals == [
                "policy": 1, "quota-sender": 0, "quota-total": 0, "bad-signature": 0, "bad-item": 0, "offer-reused": 0,
                "storage": 0,
            ])
        #expect(s.admission == "allow-list" && s.allowed == 2 && s.limits == RelayLimits())
        #expect(s.damaged.isEmpty)
        // Codable for the control API.
        let json = try JSONEncoder().encode(s)
        #expect(try JSONDecoder().decode(RelayStatus.self, from: json) == s)
    }
}
