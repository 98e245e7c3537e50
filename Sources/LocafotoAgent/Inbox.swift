import Foundation
import LocafotoFormats
import LocafotoWire

/// Incoming offers: the persistent inbox (in `AgentStore`) plus the decisions that live
/// sessions are waiting for. An offer holds metadata only; no photo byte is stored before
/// acceptance.
actor Inbox {
    enum Verdict: Sendable, Equatable {
        case refuse(WireErrorCode, String)
        case accept
        case pending
        /// The sender offers again an offer accepted earlier: what is already here is not sent again.
        case resume(ResumePlan)
        /// The sender offers again an offer decided earlier (rejected or expired).
        case decided(DecisionKind, String)
    }

    private let store: AgentStore
    private let limits: InboxLimits
    nonisolated let spoolDirectory: String
    private var waiters: [String: (token: Int, continuation: CheckedContinuation<DecisionKind?, Never>)] = [:]
    private var decided: [String: DecisionKind] = [:]
    private var live: Set<String> = []
    private var nextToken = 0

    init(store: AgentStore, limits: InboxLimits, spoolDirectory: String) {
        self.store = store
        self.limits = limits
        self.spoolDirectory = spoolDirectory
    }

    var policy: ReceivePolicy {
        get throws { ReceivePolicy(rawValue: try store.setting("policy") ?? "") ?? .everyone }
    }

    /// Applies policy and limits to a complete offer and, unless refused, stores it. `peer` is
    /// the sender: for an offer handed on by a relay (`via`), the original sender named in
    /// `from`, whose offer signature the caller has verified. Policy and limits apply to it;
    /// the relay is only the carrier.
    func register(_ offer: AssembledOffer, from peer: PeerIdentity, via relay: PeerIdentity? = nil) throws -> Verdict {
        // A deposit (`to` without `from`) is for a relay; this node holds nothing for others.
        guard offer.from != nil || offer.to == nil else {
            return .refuse(.refusedByPolicy, "this node is not a relay; it does not hold offers for others")
        }
        guard (offer.from == nil) == (relay == nil) else {
            return .refuse(.protocolViolation, "a relayed offer must name its sender in 'from'")
        }
        let trusted = try store.peer(peer.fingerprint.description)?.trust == .trusted
        switch try policy {
        case .off:
            return .refuse(.refusedByPolicy, "this node is not receiving photos right now")
        case .trusted where !trusted:
            return .refuse(.refusedByPolicy, "this node only receives photos from trusted peers")
        default:
            break
        }
        let fp = peer.fingerprint.description
        let windowStart = Date().addingTimeInterval(-limits.window.seconds)
        if try store.offerCount(from: fp, since: windowStart) >= limits.maxOffersPerWindow {
            return .refuse(.rateLimited, "too many offers from this peer; try again in a few minutes")
        }
        if !trusted, try store.offerCount(from: fp, since: .distantPast, states: [.pending]) >= limits.maxPendingPerPeer {
            return .refuse(.rateLimited, "this peer already has \(limits.maxPendingPerPeer) offers waiting for a decision")
        }
        if let earlier = try store.offer(offer.id) {
            return try reoffered(offer, earlier: earlier, from: peer)
        }
        if !trusted {
            let waiting = try store.pendingFromUntrusted()
            if waiting.offers >= limits.maxPendingUntrusted || waiting.items + offer.items.count > limits.maxPendingUntrustedItems {
                return .refuse(
                    .rateLimited,
                    "this node's inbox is full (\(waiting.offers) offers, \(waiting.items) items wait for a decision); try again once its owner has decided")
            }
        }
        let now = Date()
        let record = OfferRecord(
            id: offer.id, senderFingerprint: fp, senderName: peer.name, senderKey: Data(peer.publicKey.bytes),
            receivedAt: now, expiresAt: now.addingTimeInterval(limits.expiry.seconds), state: trusted ? .accepted : .pending,
            itemCount: offer.items.count, totalBytes: offer.totalBytes, decidedAt: trusted ? now : nil,
            message: trusted ? "accepted automatically (trusted peer)" : nil,
            viaFingerprint: relay?.fingerprint.description, viaName: relay?.name)
        let items = offer.items.enumerated().map { i, item in
            OfferItemRecord(
                offerId: offer.id, idx: i, itemId: item.id, name: item.name, kind: item.kind, size: item.size, hash: item.hash,
                status: .offered)
        }
        try store.insertOffer(record, items: items)
        live.insert(offer.id)
        return trusted ? .accept : .pending
    }

    /// The same offer id again (protocol/messages.md, "Resuming"): the earlier decision stands.
    private func reoffered(_ offer: AssembledOffer, earlier: OfferRecord, from peer: PeerIdentity) throws -> Verdict {
        guard earlier.senderFingerprint == peer.fingerprint.description else {
            return .refuse(.protocolViolation, "an offer with this id was already received from another sender")
        }
        let stored = try store.items(of: offer.id)
        guard stored.count == offer.items.count,
            zip(stored, offer.items).allSatisfy({ $0.itemId == $1.id && $0.name == $1.name })
        else { return .refuse(.protocolViolation, "offer id reused with other items") }
        // An item whose content changed since the interrupted session starts again from zero.
        for (record, item) in zip(stored, offer.items) where record.size != item.size || record.hash != item.hash {
            if let path = record.spoolPath ?? (record.status == .receiving ? spoolPath(offer.id, record.idx) : nil) { unlink(path) }
            try store.updateItem(offer.id, record.idx) {
                $0.size = item.size
                $0.hash = item.hash
                $0.status = .offered
                $0.startJSON = nil
                $0.spoolPath = nil
            }
        }
        switch earlier.state {
        case .pending:
            if earlier.expiresAt <= Date() {
                try store.updateOffer(offer.id) {
                    $0.state = .expired
                    $0.decidedAt = Date()
                }
                return .decided(.expired, "the offer expired before it was accepted")
            }
            live.insert(offer.id)
            return .pending
        case .rejected:
            return .decided(.rejected, "the recipient rejected the offer")
        case .expired:
            return .decided(.expired, "the offer expired before it was accepted")
        case .accepted, .interrupted, .completed, .failed:
            try store.updateOffer(offer.id) {
                $0.state = .accepted
                $0.message = "resuming"
            }
            live.insert(offer.id)
            return .resume(try ResumePlan(offer: offer.id, items: try store.items(of: offer.id), spool: spoolPath))
        }
    }

    nonisolated func spoolPath(_ offer: String, _ index: Int) -> String {
        "\(spoolDirectory)/\(offer)-\(index).part"
    }

    /// Waits up to `timeout` for the user's decision; nil means "still pending, ping and ask again".
    func waitForDecision(_ id: String, timeout: Duration) async throws -> DecisionKind? {
        if let d = decided.removeValue(forKey: id) { return d }
        if let o = try store.offer(id), o.state == .pending, o.expiresAt <= Date() {
            try store.updateOffer(id) {
                $0.state = .expired
                $0.decidedAt = Date()
            }
            return .expired
        }
        nextToken += 1
        let token = nextToken
        return await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                waiters[id] = (token, c)
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    await self?.timeOut(id, token)
                }
            }
        } onCancel: {
            Task { await self.timeOut(id, token) }
        }
    }

    private func timeOut(_ id: String, _ token: Int) {
        guard let w = waiters[id], w.token == token else { return }
        waiters[id] = nil
        w.continuation.resume(returning: nil)
    }

    /// The session for `id` has ended (completed, failed, or the sender vanished).
    func sessionEnded(_ id: String) {
        live.remove(id)
        decided[id] = nil
        if let w = waiters.removeValue(forKey: id) { w.continuation.resume(returning: nil) }
    }

    struct DecisionOutcome: Sendable, Codable {
        var offer: String
        var state: OfferRecord.State
        var message: String
    }

    /// `accept`/`reject` from the CLI. The id may be a unique prefix.
    func decide(_ idPrefix: String, _ kind: DecisionKind) throws -> DecisionOutcome {
        let o = try find(idPrefix)
        // An interrupted transfer may still be rejected: it is then not resumed.
        if o.state == .interrupted, kind == .rejected {
            try store.updateOffer(o.id) {
                $0.state = .rejected
                $0.decidedAt = Date()
                $0.message = "rejected after an interruption; the partial photos were deleted"
            }
            return DecisionOutcome(offer: o.id, state: .rejected, message: "rejected the interrupted transfer from \(o.senderName)")
        }
        guard o.state == .pending else {
            throw AgentError(.conflict, "offer \(o.id.prefix(8)) is already \(o.state.rawValue)")
        }
        if o.expiresAt <= Date() {
            try store.updateOffer(o.id) {
                $0.state = .expired
                $0.decidedAt = Date()
            }
            throw AgentError(.conflict, "offer \(o.id.prefix(8)) has expired; ask \(o.senderName) to send again")
        }
        // A sender that went away offers the same offer again when it can (resume): the decision
        // is recorded now and given to it then, without asking again.
        let connected = live.contains(o.id)
        let state: OfferRecord.State = kind == .accepted ? (connected ? .accepted : .interrupted) : .rejected
        try store.updateOffer(o.id) {
            $0.state = state
            $0.decidedAt = Date()
            if !connected, kind == .accepted { $0.message = "accepted while the sender was away; the photos arrive when it reconnects" }
        }
        if let w = waiters.removeValue(forKey: o.id) {
            w.continuation.resume(returning: kind)
        } else {
            decided[o.id] = kind
        }
        let message: String
        switch (kind, connected) {
        case (.accepted, true): message = "accepted \(o.itemCount) item(s) from \(o.senderName)"
        case (.accepted, false): message = "accepted \(o.itemCount) item(s) from \(o.senderName); \(o.senderName) is not connected now, the photos arrive when it reconnects"
        default: message = "rejected the offer from \(o.senderName)"
        }
        return DecisionOutcome(offer: o.id, state: state, message: message)
    }

    func find(_ idPrefix: String) throws -> OfferRecord {
        let p = idPrefix.lowercased()
        guard p.count >= 4 else { throw AgentError(.invalidRequest, "give at least 4 characters of the offer id") }
        let all = try store.offers().filter { $0.id.hasPrefix(p) }
        guard let first = all.first else { throw AgentError(.notFound, "no offer with id \(idPrefix); run `locafoto inbox`") }
        guard all.count == 1 else {
            throw AgentError(.ambiguous, "offer id \(idPrefix) is ambiguous: \(all.map { String($0.id.prefix(8)) }.joined(separator: ", "))")
        }
        return first
    }

    func isLive(_ id: String) -> Bool { live.contains(id) }
}

extension Duration {
    var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
