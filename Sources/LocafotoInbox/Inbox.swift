import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoWire
import Synchronization

/// Incoming offers: the persistent inbox (in `AgentStore`) plus the decisions that live
/// sessions are waiting for. An offer holds metadata only; no photo byte is stored before
/// acceptance.
package actor Inbox {
    package enum Verdict: Sendable, Equatable {
        case refuse(WireErrorCode, String)
        case accept
        case pending
        /// The sender offers again an offer accepted earlier: what is already here is not sent again.
        case resume(ResumePlan)
        /// The sender offers again an offer decided earlier (rejected, expired or cancelled); the
        /// code, when there is one, says the user did not decline it (messages.md DECISION).
        case decided(DecisionKind, WireErrorCode?, String)
    }

    let store: AgentStore
    let limits: InboxLimits
    package nonisolated let spoolDirectory: String
    /// Decisions posted for live sessions (taken without a hop onto this actor).
    nonisolated let decisions = DecisionBoard()
    var live: Set<String> = []
    /// Accepted offers whose running receive the user stopped (`reject`); the receiving session
    /// checks it for every message, so it is read without a hop onto this actor.
    private nonisolated let stops = Mutex<Set<String>>([])
    /// Pending offers whose sender still sends previews (cap `late-preview`): how many may come.
    /// They stop with the decision or the session.
    private nonisolated let latePreviews = Mutex<[String: Int]>([:])

    /// Where decisions are announced (`offer.decided`), before the session that waits for one
    /// learns it: its end (`offer.finished`) always comes after.
    nonisolated let events: EventHub?

    /// Offers expire, and decisions are dated, by this clock.
    nonisolated let clock: any AgentClock

    package init(
        store: AgentStore, limits: InboxLimits, spoolDirectory: String, events: EventHub? = nil, clock: any AgentClock
    ) {
        self.events = events
        self.clock = clock
        self.store = store
        self.limits = limits
        self.spoolDirectory = spoolDirectory
    }

    /// The stored setting (`PUT /v1/policy`); `everyone` when unset. Read outside the actor: it
    /// only reads the store, and the status reads it too.
    nonisolated package var policy: ReceivePolicy {
        get throws { ReceivePolicy(rawValue: try store.setting("policy") ?? "") ?? .everyone }
    }

    /// Applies policy and limits to a complete offer and, unless refused, stores it. `peer` is
    /// the sender: for an offer handed on by a relay (`via`), the original sender named in
    /// `from`, whose offer signature the caller has verified. Policy and limits apply to it;
    /// the relay is only the carrier.
    ///
    /// `previews`: the item previews that passed `PreviewCheck`, sealed to this node as they
    /// arrived. They are written only with a new offer let in by policy and limits, and for an
    /// untrusted sender only within the previews' own bound (over it, the offer comes without).
    package func register(
        _ offer: AssembledOffer, from peer: PeerIdentity, via relay: PeerIdentity? = nil, previews: [Int: [UInt8]] = [:]
    ) throws -> Verdict {
        // A deposit (`to` without `from`) is for a relay; this node holds nothing for others.
        guard offer.from != nil || offer.to == nil else {
            return .refuse(.refusedByPolicy, "this node is not a relay; it does not hold offers for others")
        }
        guard (offer.from == nil) == (relay == nil) else {
            return .refuse(.protocolViolation, "a relayed offer must name its sender in 'from'")
        }
        let trusted = try store.peer(peer.fingerprint.description)?.trust == .trusted
        let fp = peer.fingerprint.description
        if let refusal = try admission(from: fp, trusted: trusted) { return refusal }
        if let earlier = try store.offer(offer.id) {
            return try reoffered(offer, earlier: earlier, from: peer)
        }
        if !trusted, let refusal = try roomForUntrusted(items: offer.items.count) { return refusal }
        let now = clock.date
        let record = OfferRecord(
            id: offer.id, senderFingerprint: fp, senderName: peer.name, senderKey: Data(peer.publicKey.bytes),
            receivedAt: now, expiresAt: now.addingTimeInterval(limits.expiry.seconds),
            state: trusted ? .accepted : .pending,
            itemCount: offer.items.count, totalBytes: offer.totalBytes, decidedAt: trusted ? now : nil,
            message: trusted ? "accepted automatically (trusted peer)" : nil,
            viaFingerprint: relay?.fingerprint.description, viaName: relay?.name)
        let items = offer.items.enumerated().map { i, item in
            OfferItemRecord(
                offerId: offer.id, idx: i, itemId: item.id, name: item.name, kind: item.kind, size: item.size,
                hash: item.hash ?? "",
                status: .offered)
        }
        let previewBytes = previews.values.reduce(0) { $0 + $1.count }
        let keepPreviews =
            try trusted || store.pendingUntrustedPreviewBytes() + previewBytes <= limits.maxPendingUntrustedPreviewBytes
        try store.insertOffer(record, items: items, previews: keepPreviews ? previews : [:])
        live.insert(offer.id)
        return trusted ? .accept : .pending
    }

    /// Policy and the per-sender limits, before anything of an offer is stored: a refusal, or
    /// nil when the offer may go on. Every way offers reach the inbox (our protocol, LocalSend)
    /// passes here.
    func admission(from fp: String, trusted: Bool) throws -> Verdict? {
        switch try policy {
        case .off:
            return .refuse(.refusedByPolicy, "this node is not receiving photos right now")
        case .trusted where !trusted:
            return .refuse(.refusedByPolicy, "this node only receives photos from trusted peers")
        default:
            break
        }
        let windowStart = clock.date.addingTimeInterval(-limits.window.seconds)
        if try store.offerCount(from: fp, since: windowStart) >= limits.maxOffersPerWindow {
            return .refuse(.rateLimited, "too many offers from this peer; try again in a few minutes")
        }
        if !trusted, try store.offerCount(from: fp, since: .distantPast, states: [.pending]) >= limits.maxPendingPerPeer
        {
            return .refuse(
                .rateLimited, "this peer already has \(limits.maxPendingPerPeer) offers waiting for a decision")
        }
        return nil
    }

    /// The bound on what untrusted senders may leave waiting in the inbox, for a new offer of
    /// `items` items: a refusal when it would pass it.
    func roomForUntrusted(items: Int) throws -> Verdict? {
        let waiting = try store.pendingFromUntrusted()
        guard waiting.offers >= limits.maxPendingUntrusted || waiting.items + items > limits.maxPendingUntrustedItems
        else { return nil }
        return .refuse(
            .rateLimited,
            "this node's inbox is full (\(waiting.offers) offers, \(waiting.items) items wait for a decision); try again once its owner has decided"
        )
    }

    /// The same offer id again (protocol/messages.md, "Resuming"): the earlier decision stands.
    private func reoffered(_ offer: AssembledOffer, earlier: OfferRecord, from peer: PeerIdentity) throws -> Verdict {
        guard earlier.senderFingerprint == peer.fingerprint.description else {
            return .refuse(.protocolViolation, "an offer with this id was already received from another sender")
        }
        let stored = try store.items(of: offer.id)
        guard stored.count == offer.items.count,
            // An imported item's name is no longer kept here (`AgentStore.recordItems`); its id still is.
            zip(stored, offer.items).allSatisfy({ $0.itemId == $1.id && ($0.name == $1.name || $0.status == .imported) }
            )
        else { return .refuse(.protocolViolation, "offer id reused with other items") }
        // An item whose content changed since the interrupted session starts again from zero.
        // Without a hash in both offers (cap late-hash) only the size tells here; a sender whose
        // file changed otherwise restarts the item itself (ITEM_START at 0).
        // A committed item is never committed twice, changed or not (messages.md "Resume").
        for (record, item) in zip(stored, offer.items)
        where ![.imported, .queued, .needsKey].contains(record.status)
            && (record.size != item.size || (item.hash != nil && !record.hash.isEmpty && record.hash != item.hash))
        {
            if let path = record.spoolPath ?? (record.status == .receiving ? spoolPath(offer.id, record.idx) : nil) {
                unlink(path)
            }
            try store.updateItem(offer.id, record.idx) {
                $0.size = item.size
                $0.hash = item.hash ?? ""
                $0.status = .offered
                $0.startJSON = nil
                $0.spoolPath = nil
            }
        }
        switch earlier.state {
        case .pending:
            if earlier.expiresAt <= clock.date {
                try store.updateOffer(offer.id) {
                    $0.state = .expired
                    $0.decidedAt = clock.date
                }
                return .decided(.expired, nil, "the offer expired before it was accepted")
            }
            live.insert(offer.id)
            return .pending
        case .rejected:
            return .decided(.rejected, nil, "the recipient rejected the offer")
        case .expired:
            return .decided(.expired, nil, "the offer expired before it was accepted")
        case .cancelled:
            // Not "declined": a cancelled transfer is never offered again (messages.md CANCEL).
            return .decided(.rejected, .cancelled, "the transfer was cancelled")
        case .accepted, .interrupted, .completed, .failed:
            try store.updateOffer(offer.id) {
                $0.state = .accepted
                $0.message = "resuming"
            }
            live.insert(offer.id)
            return .resume(try ResumePlan(offer: offer.id, items: try store.items(of: offer.id), spool: spoolPath))
        }
    }

    package nonisolated func spoolPath(_ offer: String, _ index: Int) -> String {
        SpoolFile.partPath(in: spoolDirectory, offer: offer, item: index)
    }

    /// Waits for the user's decision on a pending offer; nil when its session ended or the
    /// waiting task was cancelled. An offer past its expiry is expired here.
    package func waitForDecision(_ id: String) async throws -> DecisionKind? {
        if try expireIfDue(id) { return .expired }
        return await decisions.wait(id)
    }

    /// Expires the offer if it is still pending past its expiry; true if it is expired now.
    package func expireIfDue(_ id: String) throws -> Bool {
        guard let o = try store.offer(id), o.state == .pending, o.expiresAt <= clock.date else {
            return try store.offer(id)?.state == .expired
        }
        try store.updateOffer(id) {
            $0.state = .expired
            $0.decidedAt = clock.date
        }
        return true
    }

    /// The session for `id` has ended (completed, failed, or the sender vanished).
    package func sessionEnded(_ id: String) {
        live.remove(id)
        decisions.clear(id)
        stops.withLock { _ = $0.remove(id) }
        latePreviews.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Late previews that may still come for the pending offer `id` (0: none).
    package nonisolated func latePreviewsOutstanding(_ id: String) -> Int { latePreviews.withLock { $0[id] ?? 0 } }

    /// The session of offer `id` expects `count` more late previews (0: no more).
    package nonisolated func expectLatePreviews(_ id: String, _ count: Int) {
        latePreviews.withLock { $0[id] = count > 0 ? count : nil }
    }

    /// Keeps a late preview that passed `PreviewCheck` with its pending offer, within the bound
    /// on untrusted senders' previews. False when it was not kept (offer decided, or bound).
    package func addLatePreview(_ id: String, item: Int, sealed: [UInt8]) throws -> Bool {
        guard let o = try store.offer(id), o.state == .pending else { return false }
        let trusted = try store.peer(o.senderFingerprint)?.trust == .trusted
        guard
            try trusted || store.pendingUntrustedPreviewBytes() + sealed.count <= limits.maxPendingUntrustedPreviewBytes
        else {
            return false
        }
        try store.insertPreviews(id, [item: sealed])
        return true
    }

    /// Whether the user stopped the running receive of `id` (`reject` on an accepted offer).
    package nonisolated func isStopRequested(_ id: String) -> Bool { stops.withLock { $0.contains(id) } }

    /// The sender withdrew an offer (ERROR `cancelled`): an offer still pending, accepted or
    /// interrupted ends `cancelled` and leaves the inbox; its partial items are deleted. Only the offer's sender may withdraw it
    /// (`current`: the offer of the session the ERROR came in, whoever carries it). Returns the
    /// offer if it was withdrawn now.
    package func withdraw(_ id: String, by fingerprint: String, current: String?, message: String) throws
        -> OfferRecord?
    {
        guard let o = try store.offer(id), o.senderFingerprint == fingerprint || id == current,
            [.pending, .accepted, .interrupted].contains(o.state)
        else { return nil }
        // Partial items go first, so that whoever sees the offer `cancelled` finds nothing of it
        // in the spool.
        for item in try store.items(of: id) where item.status == .offered || item.status == .receiving {
            unlink(spoolPath(id, item.idx))  // nothing partial remains
            try store.updateItem(id, item.idx) {
                $0.status = .failed
                $0.errorMessage = "cancelled"
                $0.spoolPath = nil
            }
        }
        try store.updateOffer(id) {
            $0.state = .cancelled
            $0.decidedAt = clock.date
            $0.message = message
        }
        decisions.clear(id)
        return o
    }

    package struct DecisionOutcome: Sendable, Codable {
        package var offer: String
        package var state: OfferRecord.State
        package var message: String
    }

    private func announce(_ outcome: DecisionOutcome) {
        events?.publish(.offerDecided(offer: outcome.offer, state: outcome.state.rawValue, message: outcome.message))
    }

    /// `accept`/`reject` from the CLI. The id may be a unique prefix. The decision is announced
    /// (`offer.decided`) before a waiting session learns it.
    package func decide(_ idPrefix: String, _ kind: DecisionKind) throws -> DecisionOutcome {
        let o = try find(idPrefix)
        // An interrupted transfer may still be rejected: it is then not resumed.
        if o.state == .interrupted, kind == .rejected {
            try store.updateOffer(o.id) {
                $0.state = .rejected
                $0.decidedAt = clock.date
                $0.message = "rejected after an interruption; the partial photos were deleted"
            }
            let outcome = DecisionOutcome(
                offer: o.id, state: .rejected, message: "rejected the interrupted transfer from \(o.senderName)")
            announce(outcome)
            return outcome
        }
        // A running receive may be stopped: the session tells the sender (ERROR `cancelled`).
        if o.state == .accepted, kind == .rejected, live.contains(o.id) {
            let outcome = DecisionOutcome(
                offer: o.id, state: .cancelled, message: "stopped receiving the transfer from \(o.senderName)")
            announce(outcome)
            stops.withLock { _ = $0.insert(o.id) }
            return outcome
        }
        guard o.state == .pending else {
            throw AgentError(.conflict, "offer \(o.id.prefix(8)) is already \(o.state.rawValue)")
        }
        if o.expiresAt <= clock.date {
            try store.updateOffer(o.id) {
                $0.state = .expired
                $0.decidedAt = clock.date
            }
            throw AgentError(.conflict, "offer \(o.id.prefix(8)) has expired; ask \(o.senderName) to send again")
        }
        // A sender that went away offers the same offer again when it can (resume): the decision
        // is recorded now and given to it then, without asking again.
        let connected = live.contains(o.id)
        let state: OfferRecord.State = kind == .accepted ? (connected ? .accepted : .interrupted) : .rejected
        try store.updateOffer(o.id) {
            $0.state = state
            $0.decidedAt = clock.date
            if !connected, kind == .accepted {
                $0.message = "accepted while the sender was away; the photos arrive when it reconnects"
            }
        }
        let message: String
        switch (kind, connected) {
        case (.accepted, true): message = "accepted \(o.itemCount) item(s) from \(o.senderName)"
        case (.accepted, false):
            message =
                "accepted \(o.itemCount) item(s) from \(o.senderName); \(o.senderName) is not connected now, the photos arrive when it reconnects"
        default: message = "rejected the offer from \(o.senderName)"
        }
        let outcome = DecisionOutcome(offer: o.id, state: state, message: message)
        announce(outcome)
        if connected { decisions.post(o.id, kind) }
        return outcome
    }

    package func find(_ idPrefix: String) throws -> OfferRecord {
        let p = idPrefix.lowercased()
        guard p.count >= 4 else { throw AgentError(.invalidRequest, "give at least 4 characters of the offer id") }
        let all = try store.offers().filter { $0.id.hasPrefix(p) }
        guard let first = all.first else {
            throw AgentError(.notFound, "no offer with id \(idPrefix); run `locafoto inbox`")
        }
        guard all.count == 1 else {
            throw AgentError(
                .ambiguous,
                "offer id \(idPrefix) is ambiguous: \(all.map { String($0.id.prefix(8)) }.joined(separator: ", "))")
        }
        return first
    }

    package func isLive(_ id: String) -> Bool { live.contains(id) }
}

/// Decisions that live receiving sessions wait for: `Inbox.decide` posts one, the session for
/// that offer takes it. One waiter per offer; a later one replaces (and wakes) an earlier.
package final class DecisionBoard: Sendable {
    private struct State {
        var posted: [String: DecisionKind] = [:]
        var waiting: [String: (key: Int, continuation: CheckedContinuation<DecisionKind?, Never>)] = [:]
        var nextKey = 0
    }
    private let state = Mutex(State())

    package func post(_ id: String, _ kind: DecisionKind) {
        let waiter = state.withLock { s -> CheckedContinuation<DecisionKind?, Never>? in
            if let w = s.waiting.removeValue(forKey: id) { return w.continuation }
            s.posted[id] = kind
            return nil
        }
        waiter?.resume(returning: kind)
    }

    /// Forgets what was posted for `id` and wakes its waiter with nil.
    package func clear(_ id: String) {
        let waiter = state.withLock { s in
            s.posted[id] = nil
            return s.waiting.removeValue(forKey: id)
        }
        waiter?.continuation.resume(returning: nil)
    }

    /// The decision posted for `id`; nil when cleared, replaced or cancelled.
    package func wait(_ id: String) async -> DecisionKind? {
        let key = state.withLock { s -> Int in
            s.nextKey += 1
            return s.nextKey
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<DecisionKind?, Never>) in
                let (now, replaced) = state.withLock {
                    s -> (DecisionKind??, CheckedContinuation<DecisionKind?, Never>?) in
                    if let d = s.posted.removeValue(forKey: id) { return (.some(d), nil) }
                    // The cancellation flag is set before the handler runs: seen here if it came first.
                    if Task.isCancelled { return (.some(nil), nil) }
                    let earlier = s.waiting.updateValue((key, c), forKey: id)
                    return (nil, earlier?.continuation)
                }
                replaced?.resume(returning: nil)
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<DecisionKind?, Never>? in
                guard let w = s.waiting[id], w.key == key else { return nil }
                s.waiting[id] = nil
                return w.continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}
