import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoNode
import LocafotoWire

/// Offers that come over another protocol than ours (LocalSend): the same inbox, the same
/// policy, limits, decisions and events, but no session of ours behind them. Their sender is
/// named by a fingerprint of that protocol (`localsend:` and the certificate's SHA-256), never
/// one of ours, so no trust of a locafoto peer applies to them and none of theirs to ours.
extension Inbox {
    package struct ForeignOffer: Sendable {
        package struct Item: Sendable {
            package var id: String
            package var name: String
            package var kind: String
            package var size: Int64
            /// Why this node does not take the item (not a photo); nil: wanted.
            package var refusal: String?

            package init(id: String, name: String, kind: String, size: Int64, refusal: String? = nil) {
                self.id = id
                self.name = name
                self.kind = kind
                self.size = size
                self.refusal = refusal
            }
        }

        package var id: String
        package var senderFingerprint: String
        package var senderName: String
        package var items: [Item]

        package init(id: String, senderFingerprint: String, senderName: String, items: [Item]) {
            self.id = id
            self.senderFingerprint = senderFingerprint
            self.senderName = senderName
            self.items = items
        }

        var totalBytes: Int64 { items.reduce(0) { $0 + $1.size } }
    }

    /// A new foreign offer, under the same policy and limits as ours: refused, accepted (the
    /// user trusts its sender) or pending. Refused items are stored as failed with their reason.
    package func registerForeign(_ offer: ForeignOffer, trusted: Bool) throws -> Verdict {
        if let refusal = try admission(from: offer.senderFingerprint, trusted: trusted) { return refusal }
        guard try store.offer(offer.id) == nil else {
            return .refuse(.protocolViolation, "an offer with this id was already received")
        }
        if !trusted, let refusal = try roomForUntrusted(items: offer.items.count) { return refusal }
        let now = clock.date
        let record = OfferRecord(
            id: offer.id, senderFingerprint: offer.senderFingerprint, senderName: offer.senderName, senderKey: Data(),
            receivedAt: now, expiresAt: now.addingTimeInterval(limits.expiry.seconds),
            state: trusted ? .accepted : .pending, itemCount: offer.items.count, totalBytes: offer.totalBytes,
            decidedAt: trusted ? now : nil, message: trusted ? "accepted automatically (trusted peer)" : nil)
        let items = offer.items.enumerated().map { i, item in
            OfferItemRecord(
                offerId: offer.id, idx: i, itemId: item.id, name: item.name, kind: item.kind, size: item.size, hash: "",
                status: item.refusal == nil ? .offered : .failed, errorMessage: item.refusal)
        }
        try store.insertOffer(record, items: items)
        live.insert(offer.id)
        return trusted ? .accept : .pending
    }

    /// An item of a foreign offer has begun to arrive.
    package func foreignItemStarted(_ offer: String, _ idx: Int) throws {
        try store.setItemStatus(offer, idx, .receiving)
    }

    /// An item of a foreign offer has ended: imported (as `photo`; nil when its content was
    /// already in the vault, which `note` then says), or failed with `note`. An imported photo is
    /// recorded as a locafoto peer's is: its offered name leaves `agent.sqlite` (the vault's
    /// sealed catalog has it), in one prepared statement.
    package func foreignItemEnded(_ offer: String, _ idx: Int, imported: Bool, photo: String?, note: String?) throws {
        if imported, let photo, note == nil {
            return try store.recordItems(offer, receiving: [], imported: [(idx, photo)])
        }
        try store.updateItem(offer, idx) {
            $0.status = imported ? .imported : .failed
            $0.photoId = photo
            $0.errorMessage = note
        }
    }

    /// A foreign offer's transfer has ended (`completed`, `failed`, `cancelled`): every item still
    /// waiting or arriving failed with `message`, and the offer leaves the live ones.
    /// An offer already ended (rejected or withdrawn meanwhile) keeps its state.
    package func foreignOfferEnded(_ id: String, _ state: OfferRecord.State, message: String?) throws {
        defer { sessionEnded(id) }
        guard let o = try store.offer(id), [.pending, .accepted, .interrupted].contains(o.state) else { return }
        for item in try store.items(of: id) where item.status == .offered || item.status == .receiving {
            try store.updateItem(id, item.idx) {
                $0.status = .failed
                $0.errorMessage = message ?? "not received"
            }
        }
        try store.updateOffer(id) {
            $0.state = state
            if $0.decidedAt == nil { $0.decidedAt = clock.date }
            if let message { $0.message = message }
        }
    }

    /// `offer.finished` for an offer whose session ended, with its state now; nothing while it
    /// still waits for a decision. Every way offers come in announces their end so.
    package static func announceFinished(_ id: String, store: AgentStore, events: EventHub?) {
        guard let o = try? store.offer(id), o.state != .pending else { return }
        events?.publish(
            .offerFinished(
                .init(
                    offer: id, peer: EventPeer(name: o.senderName, fingerprint: o.senderFingerprint),
                    items: o.itemCount, totalBytes: o.totalBytes, state: o.state.rawValue, message: o.message)))
    }
}
