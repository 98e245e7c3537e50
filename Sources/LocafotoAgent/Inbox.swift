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
    }

    private let store: AgentStore
    private let limits: InboxLimits
    private var waiters: [String: (token: Int, continuation: CheckedContinuation<DecisionKind?, Never>)] = [:]
    private var decided: [String: DecisionKind] = [:]
    private var live: Set<String> = []
    private var nextToken = 0

    init(store: AgentStore, limits: InboxLimits) {
        self.store = store
        self.limits = limits
    }

    var policy: ReceivePolicy {
        get throws { ReceivePolicy(rawValue: try store.setting("policy") ?? "") ?? .everyone }
    }

    /// Applies policy and limits to a complete offer and, unless refused, stores it.
    func register(_ offer: AssembledOffer, from peer: PeerIdentity) throws -> Verdict {
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
        guard try store.offer(offer.id) == nil else {
            return .refuse(.protocolViolation, "an offer with this id was already received")
        }
        let now = Date()
        let record = OfferRecord(
            id: offer.id, senderFingerprint: fp, senderName: peer.name, senderKey: Data(peer.publicKey.bytes),
            receivedAt: now, expiresAt: now.addingTimeInterval(limits.expiry.seconds), state: trusted ? .accepted : .pending,
            itemCount: offer.items.count, totalBytes: offer.totalBytes, decidedAt: trusted ? now : nil,
            message: trusted ? "accepted automatically (trusted peer)" : nil)
        let items = offer.items.enumerated().map { i, item in
            OfferItemRecord(
                offerId: offer.id, idx: i, itemId: item.id, name: item.name, kind: item.kind, size: item.size, hash: item.hash,
                status: .offered)
        }
        try store.insertOffer(record, items: items)
        live.insert(offer.id)
        return trusted ? .accept : .pending
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
        guard live.contains(o.id) else {
            try store.updateOffer(o.id) {
                $0.state = .failed
                $0.decidedAt = Date()
                $0.message = "the sender disconnected before the decision"
            }
            throw AgentError(.peerUnavailable, "\(o.senderName) is no longer connected, so nothing can be received; ask them to send again")
        }
        let state: OfferRecord.State = kind == .accepted ? .accepted : .rejected
        try store.updateOffer(o.id) {
            $0.state = state
            $0.decidedAt = Date()
        }
        if let w = waiters.removeValue(forKey: o.id) {
            w.continuation.resume(returning: kind)
        } else {
            decided[o.id] = kind
        }
        return DecisionOutcome(
            offer: o.id, state: state,
            message: kind == .accepted ? "accepted \(o.itemCount) item(s) from \(o.senderName)" : "rejected the offer from \(o.senderName)")
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
