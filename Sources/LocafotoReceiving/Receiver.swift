import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoVault
import LocafotoWire
import Logging
import NIOCore

/// The receiving role: sessions that bring offers to this node, directly or handed on by a relay
/// it collects from. The inbox decides or waits for the user, the importer takes verified
/// photos; this type runs the session between them (`ReceiverSession`) and knows nothing else of
/// the agent.
package final class Receiver: Sendable {
    package let inbox: Inbox
    package let importer: Importer
    package let store: AgentStore
    /// This node: offers handed on by a relay must be addressed to it, and its decisions on them
    /// go back signed.
    package let identity: Identity
    package let sessions: PeerSessions
    /// Told when photo bytes start and stop moving (the media indexer waits meanwhile).
    package let transferActivity: TransferActivity
    package let offerLimits: OfferLimits
    /// This node announced cap `late-hash`: direct offers may leave item hashes out.
    package let acceptsLateHash: Bool
    /// This node announced cap `late-preview`: previews may follow a direct offer.
    package let acceptsLatePreviews: Bool
    /// How long partial items of an interrupted offer wait for the sender to resume.
    package let resumeWindow: Duration
    /// Offers arriving, items imported, offers ending (`GET /v1/events`).
    package let events: EventHub
    /// Pings, decision waits and the resume window read it.
    package let clock: any AgentClock
    /// How often the connection is kept alive while the sender only writes or waits.
    package var pingInterval: Duration { sessions.pingInterval }
    package let logger: Logger

    package init(
        inbox: Inbox, importer: Importer, store: AgentStore, identity: Identity, sessions: PeerSessions,
        transferActivity: TransferActivity, offerLimits: OfferLimits, acceptsLateHash: Bool,
        acceptsLatePreviews: Bool = true, resumeWindow: Duration,
        events: EventHub, clock: any AgentClock, logger: Logger
    ) {
        self.events = events
        self.clock = clock
        self.inbox = inbox
        self.importer = importer
        self.store = store
        self.identity = identity
        self.sessions = sessions
        self.transferActivity = transferActivity
        self.offerLimits = offerLimits
        self.acceptsLateHash = acceptsLateHash
        self.acceptsLatePreviews = acceptsLatePreviews
        self.resumeWindow = resumeWindow
        self.logger = logger
    }

    /// Serves one inbound peer connection: handshake, offer, decision, items, results.
    /// One task reads and writes, reading straight from the channel so that a slow disk slows
    /// the sender down (NIO back-pressure) instead of filling memory.
    package func serve(_ connection: PeerChannel.Async) async {
        let remote = connection.channel.remoteAddress?.description ?? "unknown"
        do {
            try await sessions.acceptSession(connection) { session in
                let peer = session.peer
                // Under `trusted` or `off` a stranger can make no offer: keep no row of it.
                let policy = (try? inbox.policy) ?? .everyone
                try store.sawPeer(
                    fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil,
                    create: policy == .everyone)
                logger.info("session from \(peer.name) [\(peer.fingerprint.short)] at \(remote)")
                try await receive(session)
            }
        } catch {
            let why = NetworkFailure(error)?.during("the peer") ?? "\(error)"
            logger.info("connection from \(remote) ended: \(why)")
        }
    }

    /// One offer on session `s` (direct, or collected from a relay). If the session breaks, the
    /// offer is failed or left interrupted (`sessionFailed`); either way the inbox learns that
    /// its session ended.
    package func receive(_ s: PeerSession) async throws {
        var offerID: String?
        do {
            try await receiveOffer(s, offerID: &offerID)
        } catch {
            sessionFailed(offerID, error)
            await sessionEnded(offerID)
            throw error
        }
        await sessionEnded(offerID)
    }

    /// The inbox learns that the offer's session ended, and readers of the events how.
    private func sessionEnded(_ offerID: String?) async {
        guard let id = offerID else { return }
        // However it ended, the names of what it imported leave the WAL too (`AgentStore.recordItems`).
        store.checkpoint()
        await inbox.sessionEnded(id)
        announceEnd(of: id)
    }

    /// The receiving side of a session, from the OFFER to DONE. `session.peer` is the sender,
    /// or the relay handing on an offer that names its sender in `from`.
    private func receiveOffer(_ s: PeerSession, offerID: inout String?) async throws {
        let peer = s.peer
        var session = ReceiverSession(
            limits: offerLimits, acceptsLateHash: acceptsLateHash, acceptsPreviews: true,
            acceptsLatePreviews: acceptsLatePreviews)
        /// Previews that passed their checks, still sealed to this node (nothing else is kept).
        var previews: [Int: [UInt8]] = [:]
        var previewsVouched: Bool?
        var receiving: IncomingReceipt?
        var lastPing = clock.now
        /// Item bytes received in this session (for progress events).
        var received: Int64 = 0
        // An item cut off by a broken connection stays spooled for a resumed session, and
        // photos verified but not yet committed are committed (the sender learns of them when it
        // resumes); one refused for its content is discarded where it failed.
        defer { receiving?.suspend() }
        defer { if receiving != nil { transferActivity.end() } }
        await s.watchBacklog()
        do {
            while let message = try await s.next() {
                if let r = receiving, inbox.isStopRequested(r.offer.id) {
                    try await stopReceiving(&receiving!, session: &session, in: s)
                    return
                }
                // The offer is complete after its last part, or its last announced preview.
                var complete: AssembledOffer?
                switch try session.receive(message) {
                case .none:
                    break
                case .reply(let m):
                    try await s.send(m)
                case .offerReceived(let offer):
                    complete = offer
                case .previewReceived(let item, let sealed, let then):
                    // A relayed offer's previews count only under the original sender's preview
                    // signature for this node; a direct offer's are vouched for by the session.
                    if previewsVouched == nil, let o = session.pendingOffer {
                        previewsVouched =
                            o.to == nil || (o.to == identity.publicKey.bytes && o.previewsAreVouched(by: o.fromKey))
                        if previewsVouched == false {
                            logger.warning(
                                "dropping the previews of offer \(o.id.prefix(8)) handed on by \(peer.name): their signature does not verify"
                            )
                        }
                    }
                    if previewsVouched == true {
                        keepPreview(item, sealed, announced: session.offeredPreview(item), from: peer, in: &previews)
                    }
                    complete = then
                case .latePreviewReceived:
                    // Read while the user decides (`awaitUser`); the session allows it nowhere else.
                    throw WireError(.internalError, "a late preview outside the wait for a decision")
                case .beginItem(let start):
                    try receiving!.begin(start)
                case .itemData(let d):
                    receiving!.data(d)
                    received += Int64(d.data.count)
                    // Filled in only when an event goes out (a few a second, if anyone reads).
                    events.progress(key: receiving!.offer.id, bytes: received) {
                        .itemProgress(
                            offer: receiving!.offer.id, item: Int(d.item), items: receiving!.offer.items.count,
                            totalBytes: receiving!.offer.totalBytes, progress: $0)
                    }
                    // A sender busy streaming one large item reads nothing else: a PING
                    // now and then keeps its idle timeout from firing (framing.md).
                    if clock.now - lastPing > pingInterval {
                        lastPing = clock.now
                        try await s.send(.ping)
                    }
                case .endItem(let end):
                    if let result = receiving!.end(end) { try await report(result, of: receiving!.offer, on: s) }
                case .senderDone:
                    for result in receiving!.commitPending() { try await report(result, of: receiving!.offer, on: s) }
                    let done = receiving!.summary
                    try store.updateOffer(receiving!.offer.id) {
                        $0.state = done.failed == 0 ? .completed : .failed
                        // Photos the vault already held count apart (they were verified, not stored again).
                        let already = done.duplicates > 0 ? "\(done.duplicates) already in the vault, " : ""
                        $0.message =
                            "\(done.imported - done.duplicates) imported, \(already)\(done.queued) waiting for unlock, \(done.failed) failed"
                    }
                    logger.info(
                        "offer \(receiving!.offer.id.prefix(8)) from \(receiving!.peer.name): \(done.imported) imported, \(done.queued) queued, \(done.failed) failed"
                    )
                    return
                case .peerFailed(let e):
                    logger.warning("\(peer.name) [\(peer.fingerprint.short)] reported \(e.code.name): \(e.message)")
                    // A sender withdraws an offer with ERROR `cancelled`: this session's, or (first
                    // message of a new session) one interrupted earlier.
                    if e.code == .cancelled, let id = e.offer ?? offerID {
                        _ = receiving?.stop()
                        try await withdraw(id, by: peer, current: offerID)
                    }
                    return
                }
                if let offer = complete {
                    offerID = offer.id
                    let (decision, plan, sender) = try await decide(offer, in: s, session: &session, previews: previews)
                    previews = [:]
                    guard decision == .accepted else { return }
                    receiving = try IncomingReceipt(
                        offer: offer, peer: sender, importer: importer, reoffered: plan != nil)
                    transferActivity.begin()
                    for c in plan?.completed ?? [] {
                        if c.status == .imported {
                            receiving!.summary.imported += 1
                        } else {
                            receiving!.summary.queued += 1
                        }
                    }
                }
                // Group commit: verified photos wait while more of the sender's frames are already
                // here, and are committed together once the receiver has caught up (or the batch
                // is full). A sender that waits for each result is answered at once.
                if let r = receiving, r.hasPending, r.isBatchFull || !s.hasBacklog {
                    for result in receiving!.commitPending() { try await report(result, of: receiving!.offer, on: s) }
                }
            }
            if receiving != nil {
                throw AgentError(.peerUnavailable, "the sender closed the connection before every item arrived")
            }
        } catch let e as WireError {
            logger.warning("session with \(peer.name) [\(peer.fingerprint.short)] failed: \(e)")
            receiving?.discard()
            try? await s.send(
                .error(ErrorBody(code: e.code, message: PeerFacing.message(e.code, e.message), offer: offerID)))
            throw e
        }
    }

    /// Keeps a PREVIEW that passes every check (`PreviewCheck`), as it arrived: sealed to this
    /// node. One that fails is dropped and logged; the offer goes on without it.
    private func keepPreview(
        _ item: Int, _ sealed: [UInt8], announced: PreviewInfo?, from peer: PeerIdentity,
        in previews: inout [Int: [UInt8]]
    ) {
        guard let announced else { return }
        do {
            _ = try PreviewCheck.open(sealed, announced: announced, with: identity.agreementKey)
            previews[item] = sealed
        } catch {
            logger.info("dropped the preview of item \(item) from \(peer.name) [\(peer.fingerprint.short)]: \(error)")
        }
    }

    /// Keeps a late PREVIEW (cap `late-preview`) with the pending offer if it passes
    /// `PreviewCheck.openLate` and the inbox's bound; an empty one says the sender made none.
    /// Whether it was kept.
    private func keepLatePreview(_ id: String, item: Int, sealed: [UInt8], from peer: PeerIdentity) async throws
        -> Bool
    {
        guard !sealed.isEmpty else { return false }
        do {
            _ = try PreviewCheck.openLate(sealed, with: identity.agreementKey)
        } catch {
            logger.info("dropped the preview of item \(item) from \(peer.name) [\(peer.fingerprint.short)]: \(error)")
            return false
        }
        return try await inbox.addLatePreview(id, item: item, sealed: sealed)
    }

    /// After a receiving session threw: an accepted offer whose items did not all arrive is
    /// failed by a protocol error; a lost connection leaves it interrupted, its partial items
    /// spooled, until the sender offers it again (or it expires, see `expireInterrupted`).
    private func sessionFailed(_ offerID: String?, _ error: any Error) {
        guard let id = offerID else { return }
        if let e = error as? WireError {
            // Only a transfer under way fails; a pending offer stays in the inbox.
            guard (try? store.offer(id))?.state == .accepted else { return }
            discardSpool(of: id, "the transfer failed: \(e.message)")
            try? store.updateOffer(id) {
                if $0.state == .accepted {
                    $0.state = .failed
                    $0.message = e.message
                }
            }
        } else {
            try? store.updateOffer(id) {
                if $0.state == .accepted {
                    $0.state = .interrupted
                    $0.decidedAt = clock.date  // the resume window runs from the interruption
                    $0.message = "interrupted: the connection to the sender was lost; it resumes when they reconnect"
                }
            }
        }
    }

    /// The original sender of an offer handed on by a relay, if the offer is for this node and
    /// its offer signature verifies (protocol/messages.md "Delivery"); nil otherwise.
    package func relayedSender(of offer: AssembledOffer) -> PeerIdentity? {
        guard let to = offer.to, to == identity.publicKey.bytes, let from = offer.from, let key = offer.fromKey,
            offer.hasValidSignature(by: key)
        else { return nil }
        return PeerIdentity(publicKey: key, fingerprint: Fingerprint(publicKey: key), name: from.name, caps: [])
    }

    /// Runs the inbox for a complete offer and sends the DECISION; returns what was decided,
    /// for an offer accepted in an earlier session what is already here, and the sender (the
    /// original sender of a relayed offer, whose key the items are signed with).
    private func decide(
        _ offer: AssembledOffer, in s: PeerSession, session: inout ReceiverSession, previews: [Int: [UInt8]] = [:]
    ) async throws -> (DecisionKind, ResumePlan?, PeerIdentity) {
        var sender = s.peer
        var via: PeerIdentity?
        if offer.from != nil {
            guard let original = relayedSender(of: offer) else {
                let message = "the relayed offer is not signed by its sender for this node; it was forged or altered"
                logger.warning(
                    "refused offer \(offer.id.prefix(8)) handed on by \(s.peer.name) [\(s.peer.fingerprint.short)]: \(message)"
                )
                try await s.send(session.decide(.rejected, code: .badSignature, message: message))
                return (.rejected, nil, sender)
            }
            via = s.peer
            // `from.name` is the relay's word (the offer signature does not cover it): a sender
            // met directly keeps the name it gave itself, and no relayed name replaces it.
            let policy = (try? inbox.policy) ?? .everyone
            let record = try? store.sawPeer(
                fingerprint: original.fingerprint, publicKey: original.publicKey.bytes, name: original.name,
                address: nil,
                create: policy == .everyone, direct: false)
            sender = PeerIdentity(
                publicKey: original.publicKey, fingerprint: original.fingerprint, name: record?.name ?? original.name,
                caps: original.caps)
        }
        // A relayed offer's decision goes back signed: the relay cannot forge it (formats.md).
        let receipt = { (kind: DecisionKind) -> [UInt8]? in
            via == nil
                ? nil
                : DecisionReceipt.sign(
                    offerID: offer.id, sender: sender.publicKey, recipient: self.identity.signingKey,
                    decision: kind.rawValue)
        }
        let peer = sender
        let through = via.map { " via \($0.name) [\($0.fingerprint.short)]" } ?? ""
        switch try await inbox.register(offer, from: sender, via: via, previews: previews) {
        case .refuse(let code, let message):
            logger.info("refused offer from \(peer.name) [\(peer.fingerprint.short)]\(through): \(message)")
            try await s.send(session.decide(.rejected, code: code, message: message, receipt: receipt(.rejected)))
            return (.rejected, nil, sender)
        case .decided(let kind, let code, let message):
            try await s.send(session.decide(kind, code: code, message: message, receipt: receipt(kind)))
            return (kind, nil, sender)
        case .resume(var plan):
            // Only a sender that announced "resume" understands what is already here; another
            // gets a plain acceptance and sends every item from the start.
            if !s.peer.caps.contains(Capability.resume) { plan = ResumePlan() }
            let message = session.decide(
                .accepted, resume: plan.resume, completed: plan.completed, receipt: receipt(.accepted))
            if case .decision(let sent) = message {  // the session drops entries that do not fit the offer
                plan.resume = sent.resume ?? []
                plan.completed = sent.completed ?? []
            }
            logger.info(
                "resuming offer \(offer.id.prefix(8)) from \(peer.name)\(through): \(plan.completed.count) item(s) already here, \(plan.resume.count) partial"
            )
            try await s.send(message)
            return (.accepted, plan, sender)
        case .accept:
            logger.info(
                "accepted offer \(offer.id.prefix(8)) from trusted \(peer.name)\(through) (\(offer.items.count) items)")
            announceArrival(offer, from: peer, via: via, state: "accepted")
            try await s.send(session.decide(.accepted, receipt: receipt(.accepted)))
            return (.accepted, nil, sender)
        case .pending:
            logger.info(
                "offer \(offer.id.prefix(8)) from \(peer.name) [\(peer.fingerprint.short)]\(through) waits in the inbox (\(offer.items.count) items)"
            )
            inbox.expectLatePreviews(offer.id, session.latePreviewsOutstanding)
            announceArrival(offer, from: peer, via: via, state: "pending")
            guard let d = try await awaitUser(offer.id, in: s, session: &session, receipt: receipt) else {
                return (.rejected, nil, sender)  // withdrawn by the sender
            }
            return (d, nil, sender)
        }
    }

    /// While the user decides on a pending offer, the connection is read (a PING answered, the
    /// sender's ERROR `cancelled` or its going away seen at once) and PINGed every 20 s, and the
    /// offer expires when it is due (the last wait ends at its `expiresAt`, not at the next PING).
    /// Sends the DECISION and returns it; nil if the sender withdrew the offer. After an
    /// acceptance the message read meanwhile (the first ITEM_START) is handed back to the session.
    private func awaitUser(
        _ id: String, in s: PeerSession, session: inout ReceiverSession, receipt: (DecisionKind) -> [UInt8]?
    ) async throws -> DecisionKind? {
        enum Event: Sendable {
            case read(WireMessage?)
            case decided(DecisionKind?)
            case tick
        }
        let inbox = self.inbox
        let pingInterval = self.pingInterval
        let clock = self.clock
        let expiresAt = try await inbox.find(id).expiresAt
        /// The next PING, or the offer's expiry when that comes first.
        @Sendable func tick() async throws -> Event {
            let left = expiresAt.timeIntervalSince(clock.date)
            try await clock.sleep(for: left > 0 ? min(pingInterval, .seconds(left)) : pingInterval)
            return .tick
        }
        return try await withThrowingTaskGroup(of: Event.self) { group in
            group.addTask { .read(try await s.next()) }
            group.addTask { .decided(try await inbox.waitForDecision(id)) }
            group.addTask { try await tick() }
            while let event = try await group.next() {
                switch event {
                case .tick:
                    if try await inbox.expireIfDue(id) {
                        group.addTask { .decided(.expired) }  // the waiter learns it from the store only when asked
                    }
                    try await s.send(.ping)
                    group.addTask { try await tick() }
                case .decided(nil):
                    // Cleared: the agent is stopping, or another session took the offer over.
                    throw AgentError(.peerUnavailable, "session ended")
                case .decided(let d?):
                    if d == .expired {
                        events.publish(.offerDecided(offer: id, state: "expired", message: nil))
                    }
                    let message =
                        d == .expired
                        ? "the offer expired before it was accepted"
                        : d == .rejected ? "the recipient rejected the offer" : nil
                    inbox.expectLatePreviews(id, 0)  // the sender stops sending them at the DECISION
                    try await s.send(session.decide(d, message: message, receipt: receipt(d)))
                    guard d == .accepted else {
                        group.cancelAll()
                        return d
                    }
                    // The reading task is not cancelled (that would end the connection's input):
                    // its message, the sender's next, goes back to the session.
                    while let next = try await group.next() {
                        if case .read(let m) = next {
                            s.unread(m)
                            group.cancelAll()
                            return d
                        }
                    }
                    return d
                case .read(.ping):
                    try await s.send(.pong)
                    group.addTask { .read(try await s.next()) }
                case .read(.pong):
                    group.addTask { .read(try await s.next()) }
                case .read(.error(let e)) where e.code == .cancelled:
                    group.cancelAll()
                    try await withdraw(e.offer ?? id, by: s.peer, current: id)
                    return nil
                case .read(nil):
                    group.cancelAll()
                    throw AgentError(.peerUnavailable, "the sender closed the connection before the offer was decided")
                case .read(let m?):
                    switch try session.receive(m) {
                    case .latePreviewReceived(let item, let sealed):
                        // Counted before it is announced: a reader of the event finds the inbox's
                        // `previewsPending` already without it. Readers learn of each kept one
                        // (`item`) and of one that did not come (no `item`: a placeholder goes).
                        inbox.expectLatePreviews(id, session.latePreviewsOutstanding)
                        let kept = try await keepLatePreview(id, item: item, sealed: sealed, from: s.peer)
                        events.publish(.offerPreview(offer: id, item: kept ? item : nil))
                        group.addTask { .read(try await s.next()) }
                    case .peerFailed(let e):
                        group.cancelAll()
                        throw AgentError(.peerUnavailable, "the sender reported \(e.code.name): \(e.message)")
                    default:
                        group.cancelAll()
                        throw WireError(.protocolViolation, "unexpected message while the offer waits for a decision")
                    }
                }
            }
            throw AgentError(.peerUnavailable, "session ended")
        }
    }

    /// The sender withdrew offer `id` (ERROR `cancelled`): it leaves the inbox and its partial
    /// items are deleted.
    package func withdraw(_ id: String, by peer: PeerIdentity, current: String?) async throws {
        let message = "cancelled by \(peer.name)"
        guard let o = try await inbox.withdraw(id, by: peer.fingerprint.description, current: current, message: message)
        else { return }
        announceEnd(of: o.id)
        logger.info("offer \(o.id.prefix(8)) from \(o.senderName) was cancelled by \(peer.name)")
    }

    /// The user stopped a running receive (`reject` on an accepted offer): verified photos are
    /// kept and reported, the item in progress is dropped, the sender is told (ERROR `cancelled`).
    private func stopReceiving(_ receiving: inout IncomingReceipt, session: inout ReceiverSession, in s: PeerSession)
        async throws
    {
        let id = receiving.offer.id
        for result in receiving.stop() { try await report(result, of: receiving.offer, on: s) }
        let done = receiving.summary
        if let error = session.cancel() { try? await s.send(error) }
        _ = try await inbox.withdraw(
            id, by: receiving.peer.fingerprint.description, current: id,
            message: "stopped by you; \(done.imported) imported, \(done.queued) waiting for unlock")
        logger.info("stopped receiving offer \(id.prefix(8)) from \(receiving.peer.name)")
    }

    // MARK: the user's decisions

    /// The user's decision on an offer in the inbox (`locafoto accept`/`reject`, the web app, a
    /// notification's action); rejecting an interrupted offer deletes its partial items.
    package func decide(_ idPrefix: String, _ kind: DecisionKind) async throws -> Inbox.DecisionOutcome {
        let outcome = try await inbox.decide(idPrefix, kind)
        if outcome.state == .rejected { discardSpool(of: outcome.offer, "rejected") }
        return outcome
    }

    /// Offers nobody decided in time expire, and interrupted transfers the sender did not resume
    /// within the window end (their partial items are deleted): what the inbox shows is current.
    package func expireOffers() throws {
        _ = try store.expireOffers(now: clock.date)
        expireInterrupted()
    }

    /// Interrupted transfers the sender did not resume within the window end; their partial
    /// items are deleted.
    package func expireInterrupted() {
        let cutoff = clock.date.addingTimeInterval(-resumeWindow.seconds)
        for id in (try? store.failInterrupted(before: cutoff)) ?? [] { discardSpool(of: id, "not resumed in time") }
    }

    /// Removes the partial items of an offer that will not resume, and records every item that
    /// did not arrive as failed (an ended offer lists no item as still arriving).
    package func discardSpool(of offer: String, _ reason: String) {
        for item in (try? store.items(of: offer)) ?? [] where item.status == .receiving || item.status == .offered {
            unlink(inbox.spoolPath(offer, item.idx))
            try? store.updateItem(offer, item.idx) {
                $0.status = .failed
                $0.errorMessage = reason
                $0.spoolPath = nil
            }
        }
    }

    // MARK: events

    /// Sends an item's result to the sender and announces it (imported, queued or failed).
    private func report(_ result: ItemResult, of offer: AssembledOffer, on s: PeerSession) async throws {
        try await s.send(.itemResult(result))
        // `duplicate`: verified, and already in the vault (`photo` is the one there).
        events.publish(
            .itemImported(
                offer: result.offer, item: result.item,
                name: offer.items.indices.contains(result.item) ? offer.items[result.item].name : nil,
                state: result.duplicate == true ? "duplicate" : result.status.rawValue, photo: result.photo,
                message: result.message))
    }

    private func announceArrival(_ offer: AssembledOffer, from peer: PeerIdentity, via: PeerIdentity?, state: String) {
        events.publish(
            .offerReceived(
                .init(
                    offer: offer.id, peer: EventPeer(name: peer.name, fingerprint: peer.fingerprint.description),
                    items: offer.items.count, totalBytes: offer.totalBytes, state: state,
                    firstItem: offer.items.first?.name,
                    message: via.map { "handed on by relay \($0.name) [\($0.fingerprint.short)]" })))
    }

    /// The offer's session ended: its state now (completed, failed, interrupted, cancelled,
    /// rejected, expired) is announced, unless it is still waiting for a decision.
    private func announceEnd(of id: String) {
        events.forget(id)
        Inbox.announceFinished(id, store: store, events: events)
    }
}
