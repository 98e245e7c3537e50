import LocafotoControl
import LocafotoErrors
import LocafotoWire
import Testing

@testable import LocafotoSending
@testable import LocafotoTransfers

/// How a relay's receipt ends a held transfer, as a value: no relay, no agent.
@Suite("Receipts ending held transfers")
struct ReceiptEndingTests {
    static let bob = [UInt8](repeating: 7, count: 32)

    static func held(_ n: Int) -> [TransferSnapshot.Item] {
        (0..<n).map { TransferSnapshot.Item(name: "p\($0).jpg", bytes: 10, sentBytes: 10, status: .held) }
    }

    static func receipt(
        _ state: ReceiptState, _ decision: DecisionKind?, items: [ReceiptItem] = []
    ) -> Receipt {
        Receipt(
            offer: "o", to: bob, state: state, decision: decision,
            receipt: decision == nil ? nil : [UInt8](repeating: 1, count: 64), items: items, at: "2026-11-28T05:00:00Z")
    }

    static func end(_ r: Receipt, signed: Bool = true, items: Int = 2) -> ReceiptEnding {
        ReceiptEnding(r, decisionSigned: signed, items: held(items), peer: "bob", relay: "attic")
    }

    @Test("accepted and delivered: each item takes its result; all imported is done")
    func delivered() {
        let e = Self.end(
            Self.receipt(.delivered, .accepted, items: [ReceiptItem(item: 0, status: .imported)]))
        #expect(e.state == .done)
        #expect(e.message == "bob accepted 2 item(s) from the relay attic")
        // An item the receipt does not name was delivered; one it names takes its status.
        #expect(e.items.map(\.status) == [.imported, .delivered])
    }

    @Test("accepted, but an item failed at the recipient: the transfer failed, saying how many")
    func itemFailed() {
        let e = Self.end(
            Self.receipt(
                .delivered, .accepted,
                items: [
                    ReceiptItem(item: 1, status: .failed, code: .hashMismatch, message: "the hash differs"),
                    ReceiptItem(item: 9, status: .failed),  // no such item: ignored
                ]))
        #expect(e.state == .failed)
        #expect(e.message == "bob accepted the photos from the relay attic, but 1 of 2 item(s) failed there")
        #expect(e.items[1].status == .failed && e.items[1].code == "hash_mismatch")
        #expect(e.items[1].message == "the hash differs")
    }

    @Test("rejected, expired in the inbox, or dropped by the relay: the held items end alike")
    func undelivered() {
        let rejected = Self.end(Self.receipt(.delivered, .rejected))
        #expect(rejected.state == .rejected && rejected.items.allSatisfy { $0.status == .init(endedWith: .rejected) })
        #expect(rejected.message == "bob declined the photos (held by the relay attic)")
        let expired = Self.end(Self.receipt(.delivered, .expired))
        #expect(expired.state == .expired && expired.items.allSatisfy { $0.status == .init(endedWith: .expired) })
        let dropped = Self.end(Self.receipt(.expired, nil))
        #expect(dropped.state == .expired)
        #expect(dropped.message == "the relay attic dropped the photos: bob did not collect them in time")
    }

    @Test("a decision without the recipient's signature is not believed, whatever it says")
    func unsigned() {
        for decision: DecisionKind in [.accepted, .rejected] {
            let e = Self.end(Self.receipt(.delivered, decision), signed: false)
            #expect(e.state == .failed)
            #expect(e.items.allSatisfy { $0.status == .failed })
            #expect(e.message.contains("without bob's signature over it: not believed"))
        }
        // No decision (the relay's own expiry) needs no signature.
        #expect(Self.end(Self.receipt(.expired, nil), signed: false).state == .expired)
    }

    @Test("items that are no longer held keep their status when the transfer ends undelivered")
    func onlyHeldItemsEnd() {
        var items = Self.held(2)
        items[0].status = .failed
        let e = ReceiptEnding(
            Self.receipt(.delivered, .rejected), decisionSigned: true, items: items, peer: "bob", relay: "attic")
        #expect(e.items.map(\.status) == [.failed, .init(endedWith: .rejected)])
    }
}
