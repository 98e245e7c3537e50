import LocafotoControl
import LocafotoWire

/// How a relay's receipt ends a held transfer (protocol/messages.md "RECEIPTS"), as a value: the
/// receipt, whether the recipient's signature over its decision verified, and the transfer's
/// items in; the items' statuses, the end state and its message out. Tested without a relay.
///
/// The decision is believed only with the recipient's signature; the rest (item results, the
/// relay's expiry) is the relay's word. A receipt that ends the transfer undelivered ends its
/// held items alike: the relay forgets a deposit once it has its outcome, so they are no longer
/// held anywhere.
package struct ReceiptEnding: Equatable {
    package var items: [TransferSnapshot.Item]
    package var state: TransferSnapshot.State
    package var message: String

    package init(
        _ r: Receipt, decisionSigned: Bool, items: [TransferSnapshot.Item], peer: String, relay: String
    ) {
        self.items = items
        if let decision = r.decision, !decisionSigned {
            state = .failed
            message =
                "the relay \(relay) reports that \(peer) answered '\(decision.rawValue)', without \(peer)'s signature over it: not believed"
            endHeldItems()
            return
        }
        switch (r.state, r.decision) {
        case (.delivered, .accepted?):
            for i in self.items.indices { self.items[i].status = .delivered }
            for result in r.items where self.items.indices.contains(result.item) {
                self.items[result.item].status = .init(rawValue: result.status.rawValue)
                self.items[result.item].code = result.code?.name
                self.items[result.item].message = result.message
            }
            let failed = self.items.filter { $0.status == .failed }.count
            if failed > 0 {
                state = .failed
                message =
                    "\(peer) accepted the photos from the relay \(relay), but \(failed) of \(items.count) item(s) failed there"
            } else {
                state = .done
                message = "\(peer) accepted \(items.count) item(s) from the relay \(relay)"
            }
            return
        case (_, .rejected?):
            state = .rejected
            message = "\(peer) declined the photos (held by the relay \(relay))"
        case (_, .expired?):
            state = .expired
            message = "the offer expired in \(peer)'s inbox before they accepted it"
        default:
            state = .expired
            message = "the relay \(relay) dropped the photos: \(peer) did not collect them in time"
        }
        endHeldItems()
    }

    private mutating func endHeldItems() {
        for i in items.indices where items[i].status == .held {
            items[i].status = .init(endedWith: state)
        }
    }
}
