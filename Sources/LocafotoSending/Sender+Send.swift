import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMediaWorker
import LocafotoNode
import LocafotoNoise
import LocafotoPeers
import LocafotoSession
import LocafotoTransfers
import LocafotoVault
import LocafotoWire
import Logging
import NIOCore
import Synchronization

extension Sender {
    /// Starts sending `paths` to the peer named `query`; progress is in the returned transfer.
    /// Sends files, and/or photos from the vault (`vaultPhotos`: ids of a selection).
    /// `via`: deposit at this relay (HOST:PORT, or a relay's name or fingerprint) instead of
    /// sending directly; see `relayTarget` for when a relay is used without being named.
    /// `wait`: how long a peer that is known but not online right now is waited for
    /// (`Sender.peerWait` unless given; zero fails at once).
    /// `previews`: offer each photo with a preview (the default; `send --no-preview` withholds them).
    package func send(
        to query: String, paths: [String], vaultPhotos: [PhotoRecord] = [], transform: SendTransform? = nil,
        via: String? = nil,
        wait: Duration? = nil, previews: Bool = true, pin: String? = nil
    ) throws -> OutgoingTransfer {
        try send(
            to: [query], paths: paths, vaultPhotos: vaultPhotos, transform: transform, via: via, wait: wait,
            previews: previews, pin: pin)[0]
    }

    /// Sends the same photos to several peers: each photo is read, checked and hashed once, then
    /// each peer gets its own transfer (own offer id, own photo keys, own decision), all at once.
    /// `uploads`: photos already in memory (uploaded from the web app), sent from there; the hold
    /// ends when the transfers are done with them (given back if they all failed). On a throw
    /// the caller still owns it.
    package func send(
        to queries: [String], paths: [String], vaultPhotos: [PhotoRecord] = [], uploads hold: UploadHold? = nil,
        transform: SendTransform? = nil, via: String? = nil, wait: Duration? = nil, previews: Bool = true,
        pin: String? = nil
    ) throws -> [OutgoingTransfer] {
        let uploads = hold?.items ?? []
        guard !queries.isEmpty else { throw AgentError(.invalidRequest, "name at least one peer to send to") }
        guard Set(queries.map { $0.lowercased() }).count == queries.count else {
            throw AgentError(.invalidRequest, "a peer is named twice")
        }
        guard !paths.isEmpty || !vaultPhotos.isEmpty || !uploads.isEmpty else {
            throw AgentError(.invalidRequest, "name at least one photo to send")
        }
        guard paths.count + vaultPhotos.count + uploads.count <= configuration.offerLimits.maxItems else {
            throw AgentError(.invalidRequest, "at most \(configuration.offerLimits.maxItems) photos per send")
        }
        let transfers = queries.map { OutgoingTransfer(peer: $0, clock: clock) }
        hold?.end(after: transfers)  // before any of them can end
        transfers.forEach(forgetStored)
        transfers.forEach(outbox.register)
        let wait = wait ?? Sender.peerWait
        work.submit {
            let items: [PreparedItem]
            do {
                items = try await self.prepare(
                    paths: paths, vaultPhotos: vaultPhotos, uploads: uploads, transform: transform, for: transfers)
            } catch {
                for t in transfers { self.settle(t, after: t.cancelRequested ? TransferCancelled() : error) }
                return
            }
            // Previews are made when a session needs them (`PreviewMaker`), once for all peers.
            let maker = previews ? PreviewMaker(items: items, media: self.configuration.media) : nil
            for t in transfers { t.previewMaker.withLock { $0 = maker } }
            await withDiscardingTaskGroup { group in
                for (t, query) in zip(transfers, queries) {
                    group.addTask { await self.run(t, query: query, items: items, via: via, wait: wait, pin: pin) }
                }
            }
        }
        return transfers
    }

    /// Reads, checks and hashes the photos once for every transfer; abandoned only when every
    /// one of them is cancelled.
    private func prepare(
        paths: [String], vaultPhotos: [PhotoRecord], uploads: [PreparedItem], transform: SendTransform?,
        for transfers: [OutgoingTransfer]
    ) async throws -> [PreparedItem] {
        let maxSize = configuration.offerLimits.maxItemBytes
        let work: @Sendable () async throws -> [PreparedItem] = {
            var items = try await PreparedItem.prepareAll(paths, maxSize: maxSize, transform: transform)
            if !vaultPhotos.isEmpty {
                let vault = try self.vaults.unlocked()
                for record in vaultPhotos {
                    let item = try PreparedItem.fromVault(record, vault: vault)
                    items.append(try transform.map { try item.transformed($0) } ?? item)
                }
            }
            for item in uploads {
                items.append(try transform.map { try item.transformed($0) } ?? item)
            }
            return items
        }
        return try await withThrowingTaskGroup(of: [PreparedItem]?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                for t in transfers { await t.untilCancelRequested() }
                return nil
            }
            defer { group.cancelAll() }
            guard let result = try await group.next(), let items = result else {
                throw transfers.allSatisfy(\.cancelRequested) ? TransferCancelled() : CancellationError()
            }
            return items
        }
    }

    private func run(
        _ t: OutgoingTransfer, query: String, items: [PreparedItem], via: String?, wait: Duration, pin: String?
    ) async {
        do {
            try t.checkCancelled()
            t.update { s in
                s.items = items.map { .init(name: $0.name, bytes: $0.size, status: .preparing) }
                s.totalBytes = items.reduce(0) { $0 + $1.size }
                s.originalBytes = items.reduce(0) { $0 + $1.originalSize }
            }
            if let foreign, foreign.claims(query) {
                return try await sendForeign(t, route: try foreign.route(query), items: items, via: via, pin: pin)
            }
            var query = query
            if let address = StaticAddress.named(query) {
                // An address (`send 192.168.1.20:47820 …`, or without the port: 47820): the
                // session that carries the offer is the only one, its handshake says who answers.
                guard via != nil else { return try await send(t, to: address, items: items) }
                // A deposit for whoever answers there: that is learnt first (a probe, which
                // offers nothing to that peer).
                query = try await t.unlessCancelled { try await self.peerProbe.probe(address).fingerprint.description }
            }
            var choice: PeerChoice
            do {
                choice = try PeerResolver.resolve(
                    query, online: directory.online, known: store.peers(), recent: directory.recentlySeen)
            } catch let e as AgentError where e.code == .notFound {
                // Not a locafoto peer: perhaps a LocalSend device of that name.
                guard let route = try foreign?.route(query) else {
                    throw foreign?.notFound(query).map { AgentError(.notFound, $0) } ?? e
                }
                return try await sendForeign(t, route: route, items: items, via: via, pin: pin)
            }
            t.update {
                $0.peer.name = choice.name
                $0.peer.fingerprint = choice.fingerprint.description
                $0.state = .connecting
            }
            // The wait window: for the peer to come online, and then for it to announce another
            // address while every address it announced refuses.
            let deadline = clock.now + wait
            let waited = via == nil && choice.endpoints.isEmpty ? try await waitForPeer(t, &choice, wait: wait) : nil
            let relay = try relayTarget(for: choice, via: via)
            guard relay != nil || !choice.endpoints.isEmpty else {
                let hint =
                    configuration.relays.isEmpty
                    ? "; to leave the photos at a relay, add --via RELAY"
                    : " and is not a trusted peer (only those get deposits at your relay automatically); add --via RELAY to use it"
                let after = waited.map { "; waited \($0)" } ?? ""
                throw AgentError(
                    .peerUnavailable,
                    "\(choice.name) [\(choice.fingerprint.short)] is not online (not seen over mDNS\(after))\(hint)")
            }
            // One id on both sides: the offer carries the transfer's id, so the id `send` prints is
            // the one the receiver's inbox shows (and `accept`/`reject` take).
            let plan = OutgoingPlan(
                offerID: t.id, peerFingerprint: choice.fingerprint.description, peerName: choice.name,
                items: try items.map { try PlannedItem($0, identity: identity) })
            t.plan.withLock { $0 = plan }
            if let relay {
                await deposit(t, at: relay, for: choice)
            } else {
                try await attempt(t, choice: choice, until: wait > .zero ? deadline : nil)
            }
        } catch {
            settle(t, after: error)
        }
    }

    /// A send to a peer of another protocol (a LocalSend device): that route runs it to its end.
    private func sendForeign(
        _ t: OutgoingTransfer, route: ForeignRoute?, items: [PreparedItem], via: String?, pin: String?
    ) async throws {
        guard let route else { throw AgentError(.notFound, "no such LocalSend device") }
        guard via == nil else {
            throw AgentError(
                .invalidRequest, "\(route.name) is a LocalSend device; relays hold photos for locafoto peers only")
        }
        t.update {
            $0.peer.name = route.name
            $0.peer.fingerprint = route.fingerprint
        }
        try await route.send(t, items, pin)
        persist(t)
    }

    /// A send to an address given by hand (`send 192.168.1.20:47820 …`): whoever answers there
    /// is the recipient. No session comes before the one that carries the offer (a peer that
    /// serves one connection gets the offer); its handshake proves who answers, who is then
    /// listed online at that address as a probe would list it (`PeerDirectory.applyStatic`).
    /// Nothing is waited for: a refused address fails at once.
    private func send(_ t: OutgoingTransfer, to address: StaticAddress, items: [PreparedItem]) async throws {
        let endpoint = address.endpoint
        t.update { $0.state = .connecting }
        let connection = try await connect(t, to: endpoint)
        try await session(t, connection: connection, endpoint: endpoint, expecting: nil) { peer in
            guard peer.fingerprint != identity.fingerprint else {
                throw AgentError(.invalidRequest, "\(address) is this node itself")
            }
            directory.applyStatic(peer: peer, endpoint: endpoint)
            t.update {
                $0.peer.name = peer.name
                $0.peer.fingerprint = peer.fingerprint.description
            }
            let plan = OutgoingPlan(
                offerID: t.id, peerFingerprint: peer.fingerprint.description, peerName: peer.name,
                items: try items.map { try PlannedItem($0, identity: identity) })
            t.plan.withLock { $0 = plan }
        }
    }

    /// A peer named by `send` that is known (met before, or seen within `PeerTable.recentWindow`)
    /// but not online right now may be restarting or between announcements: wait up to `wait`
    /// for the directory to show it. Returns how long was waited in vain ("10 s"), nil when the
    /// peer came online or nothing was waited.
    private func waitForPeer(_ t: OutgoingTransfer, _ choice: inout PeerChoice, wait: Duration) async throws -> String?
    {
        guard wait > .zero else { return nil }
        let seconds = wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0)
        t.update { $0.message = "\(choice.name) is not online; waiting up to \(seconds) s for it to appear" }
        logger.info("send: waiting up to \(seconds) s for \(choice.name) [\(choice.fingerprint.short)] to come online")
        let fingerprint = choice.fingerprint
        guard
            let peer = try await t.unlessCancelled({ await self.directory.waitUntilOnline(fingerprint, timeout: wait) })
        else {
            try Task.checkCancellation()
            return "\(seconds) s"
        }
        choice.endpoints = peer.endpoints
        t.update { $0.message = nil }
        return nil
    }

    /// Offers the transfer's plan to the peer at each of its endpoints in turn. When every one
    /// fails to connect and `deadline` (the end of a send's wait window) has not passed, waits
    /// for the directory to list other addresses of the peer and tries those: a restarting peer
    /// may announce an address it does not listen on (IPv6 link-local, for an agent on IPv4
    /// only) before the one it does. Without `deadline` (a resume), fails at once.
    package func attempt(_ t: OutgoingTransfer, choice: PeerChoice, until deadline: ContinuousClock.Instant? = nil)
        async throws
    {
        var lastError: (any Error)?
        var endpoints = choice.endpoints
        /// Addresses that failed and have been listed ever since (one withdrawn and announced
        /// again is tried again).
        var failed: Set<PeerEndpoint> = []
        var waited = false
        while true {
            for endpoint in endpoints where !failed.contains(endpoint) {
                let connection: PeerChannel.Async
                do {
                    connection = try await connect(t, to: endpoint)
                } catch is TransferCancelled {
                    throw TransferCancelled()
                } catch {
                    lastError = error
                    failed.insert(endpoint)
                    continue
                }
                if waited { t.update { $0.message = nil } }
                try await session(t, connection: connection, endpoint: endpoint, expecting: choice)
                return
            }
            guard let deadline else { break }
            let left = deadline - clock.now
            guard left > .zero else { break }
            if !waited {
                let seconds = left.components.seconds + (left.components.attoseconds > 0 ? 1 : 0)
                t.update {
                    $0.message =
                        "cannot connect to \(choice.name) at the addresses it announced; waiting up to \(seconds) s for another address"
                }
                logger.info(
                    "send: no address of \(choice.name) [\(choice.fingerprint.short)] answers; waiting up to \(seconds) s for another address"
                )
                waited = true
            }
            let fingerprint = choice.fingerprint
            let seen = endpoints
            guard
                let next = try await t.unlessCancelled({
                    await self.directory.waitForEndpoints(of: fingerprint, otherThan: seen, timeout: left)
                })
            else {
                try Task.checkCancellation()
                break
            }
            failed.formIntersection(next)
            endpoints = next
        }
        throw AgentError(
            .peerUnavailable,
            "cannot connect to \(choice.name): \(lastError.map(NetworkFailure.reason) ?? "no address")")
    }

    /// Connects to one address of the transfer's peer. An address that does not answer is taken
    /// off the directory's addresses given by hand (offline there now); a cancel by the user
    /// leaves it listed.
    private func connect(_ t: OutgoingTransfer, to endpoint: PeerEndpoint) async throws -> PeerChannel.Async {
        do {
            return try await t.unlessCancelled { try await self.sessions.connect(to: endpoint) }
        } catch is TransferCancelled {
            throw TransferCancelled()
        } catch {
            directory.removeStatic(endpoint: endpoint)
            throw error
        }
    }

    /// Ends a session attempt that threw. Once the offer went out, a lost connection interrupts
    /// the transfer (it resumes later); a refusal or protocol error by the peer ends it.
    package func settle(_ t: OutgoingTransfer, after error: any Error) {
        let message: String
        switch error {
        case let e as AgentError: message = e.message
        case let e as WireError: message = "\(e.message) [\(e.code.name)]"
        default: message = Self.lostConnection(error, in: t.current) ?? "\(error)"
        }
        if error is TransferCancelled {
            logger.info("transfer \(t.id.prefix(8)) to \(t.current.peer.name) cancelled by the user")
            t.finish(.cancelled, "cancelled by the user")
            persist(t)
            return
        }
        if let e = error as? WireError, e.code == .cancelled {
            logger.info("transfer \(t.id.prefix(8)): \(t.current.peer.name) cancelled it")
            t.finish(.cancelled, "\(t.current.peer.name) cancelled the transfer")
            persist(t)
            return
        }
        let state = t.current.state
        let resumable =
            t.plan.withLock { $0 != nil } && !(error is WireError)
            && (state == .offered || state == .sending || state == .interrupted
                || (state == .connecting && t.interruptedAt != nil))
        if resumable {
            t.interrupt(
                "interrupted (\(message)); resumes when \(t.current.peer.name) is reachable",
                resumeBase: configuration.resumeInterval)
            logger.notice("transfer \(t.id.prefix(8)) to \(t.current.peer.name) interrupted: \(message)")
            persist(t)
            return
        }
        logger.warning("send to '\(t.current.peer.name)' failed: \(message)")
        // The cause's code, so that `send` exits with the status of the table (a peer or file
        // not found, not a photo, a peer that cannot be reached); a peer's refusal has none.
        t.finish(.failed, message, code: (error as? AgentError)?.code)
        persist(t)
    }

    /// A connection lost under a transfer, in words: whose agent did what, and during which
    /// photo ("bob's agent closed the connection while sending IMG_0007.jpg"); nil for an error
    /// that is not a connection's.
    static func lostConnection(_ error: any Error, in s: TransferSnapshot) -> String? {
        guard let failure = NetworkFailure(error) else { return nil }
        let during = s.items.first { $0.status == .sending }.map { " while sending \($0.name)" } ?? ""
        return failure.during("\(s.peer.name)'s agent") + during
    }

    /// A transfer that ends is forgotten in the store before its end is visible, so that no one
    /// who saw it end (a `cancel` answer, say) finds it still stored to resume.
    package func forgetStored(_ t: OutgoingTransfer) {
        t.beforeEnding { [store, logger, id = t.id] in  // the id, not `t`: no reference cycle
            do {
                try store.deleteOutgoing(id)
            } catch {
                logger.error("cannot forget transfer \(id.prefix(8)): \(error)")
            }
        }
    }

    /// Keeps the store in step with an unfinished transfer; a finished one is forgotten there.
    package func persist(_ t: OutgoingTransfer) {
        let s = t.current
        guard let plan = t.plan.withLock({ $0 }) else { return }
        do {
            if s.finishedAt != nil {
                // Deleted before the end became visible (`forgetStored`); again here, after any
                // save of an earlier state that raced with the end.
                try store.deleteOutgoing(t.id)
                t.persistedPlan.withLock { $0 = nil }
            } else if t.persistedPlan.withLock({ $0 == plan }),
                try store.updateOutgoing(transfer: t.id, state: s.state, message: s.message)
            {
                // Only the state changed: a plan of thousands of items is not encoded again.
            } else {
                try store.saveOutgoing(
                    transfer: t.id, plan: plan, state: s.state, message: s.message, createdAt: s.startedAt)
                t.persistedPlan.withLock { $0 = plan }
            }
        } catch {
            logger.error("cannot record transfer \(t.id.prefix(8)): \(error)")
        }
    }

    /// The session that offers the transfer's plan and sends it. `choice`: the peer it is meant
    /// for, whose key the handshake must prove (pinning); nil for an address given by hand, where
    /// `met` learns who answered (and makes the plan) before anything is offered.
    private func session(
        _ t: OutgoingTransfer, connection: PeerChannel.Async, endpoint: PeerEndpoint, expecting choice: PeerChoice?,
        met: (PeerIdentity) throws -> Void = { _ in }
    ) async throws {
        // Pinning: the key behind the handshake must be the one the advertisement named.
        let refusal = choice.map { choice in
            { (e: PinningFailure) in
                "REFUSED: the peer at \(endpoint.hostPort) advertises fingerprint \(choice.fingerprint) (\(choice.name)) but its handshake proved key \(e.peer.fingerprint). Someone may be impersonating \(choice.name); nothing was sent."
            }
        }
        try await sessions.withSession(
            on: connection, endpoint: endpoint, expected: choice?.fingerprint, refusal: refusal
        ) { s in
            let peer = s.peer
            try met(peer)
            try store.sawPeer(
                fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name,
                address: endpoint.hostPort)
            // A peer that computes the hashes as the photos arrive gets the offer at once; any
            // other needs them in the offer.
            if !peer.caps.contains(Capability.lateHash) { try await ensureHashes(t) }
            // Previews go to a receiver that takes them. With cap `late-preview` they follow the
            // offer while its user decides (`awaitDecision`); otherwise they are made now,
            // announced in the OFFER and sent each in a PREVIEW in item order before the wait.
            let previews = peer.caps.contains(Capability.preview)
            let late = previews && peer.caps.contains(Capability.latePreview) ? latePreviewItems(of: t) : []
            if previews, late.isEmpty { try await makePreviewsBeforeOffer(t) }
            // The photo keys are sealed to the peer once; a resumed session reuses them.
            let plan = try t.plan.withLock { p -> OutgoingPlan in
                try p!.sealKeys(to: peer.publicKey, identity: identity)
                return p!
            }
            persist(t)
            let marked = Set(late)
            let offered = plan.items.indices.map {
                plan.items[$0].offerItem(preview: previews, late: marked.contains($0))
            }
            for part in Offer.parts(id: plan.offerID, items: offered) {
                try await s.send(.offer(part))
            }
            // Late previews are made once the receiver answers this PING: one that accepts at
            // once has sent its DECISION before the PONG, and costs no decode here.
            if !late.isEmpty { try await s.send(.ping) }
            if previews, late.isEmpty {
                for (i, item) in plan.items.enumerated() {
                    guard let sealed = try item.previewSealed(to: peer.publicKey, identity: identity) else { continue }
                    try await s.send(.preview(Preview(item: UInt32(i), sealed: sealed)))
                }
            }
            t.update {
                $0.state = .offered
                $0.offer = plan.offerID
                $0.message = "waiting for \(peer.name) to accept"
                for i in $0.items.indices where [.preparing, .offered].contains($0.items[i].status) {
                    $0.items[i].status = .offered
                }
            }
            persist(t)
            let restarting = Set(plan.items.indices.filter { plan.items[$0].restart == true })
            let (toSend, session) = try await awaitDecision(
                SenderSession(offer: plan.offerID, itemSizes: plan.items.map(\.size), restarting: restarting), in: s,
                cancelling: t,
                latePreviews: late)
            let decision = session.decision!
            switch decision.decision {
            case .rejected:
                // Without a code the receiver's user declined; with one, the receiver refused
                // (messages.md DECISION), and `cancelled` means the transfer had been cancelled.
                let why = decision.message.map { ": \($0)" } ?? ""
                switch decision.code {
                case nil: t.finish(.rejected, "\(peer.name) declined the photos\(why)")
                case .cancelled?:
                    t.finish(.cancelled, "\(peer.name) had this transfer cancelled; it is not sent again\(why)")
                case let code?: t.finish(.rejected, "\(peer.name) refused the photos (\(code.name))\(why)")
                }
                persist(t)
                return
            case .expired:
                t.finish(.expired, "the offer expired before \(peer.name) accepted it")
                persist(t)
                return
            case .accepted:
                break
            }
            let completed = decision.completed ?? []
            t.update {
                $0.state = .sending
                $0.message = nil
                for c in completed {
                    $0.items[c.item].status = .init(rawValue: c.status.rawValue)
                    $0.items[c.item].photo = c.photo
                    $0.items[c.item].sentBytes = $0.items[c.item].bytes
                }
                // The transfer's count is the sum of its items' (`sendItem` moves an item's count
                // to its resume offset and the total with it).
                $0.sentBytes = $0.items.reduce(0) { $0 + $1.sentBytes }
            }
            let resumed = toSend.filter { $0.offset > 0 }.count
            if !completed.isEmpty || resumed > 0 {
                logger.info(
                    "resuming offer \(plan.offerID.prefix(8)) to \(peer.name): \(completed.count) item(s) already there, \(resumed) partial"
                )
            }
            transferActivity.begin()
            defer { transferActivity.end() }
            let allReported = try await stream(
                toSend, of: plan, to: peer.publicKey, in: s, session: session, progress: t)
            guard allReported else {
                throw AgentError(.peerUnavailable, "\(peer.name) closed the connection before reporting every item")
            }
            let snapshot = t.current
            let count = plan.items.count
            let failed = snapshot.items.filter { $0.status == .failed }.count
            let queued = snapshot.items.filter { $0.status == .queued }.count
            let duplicates = snapshot.items.filter { $0.status == .duplicate }.count
            if failed > 0 {
                t.finish(.failed, "\(failed) of \(count) item(s) were refused by \(peer.name)")
            } else if queued > 0 {
                t.finish(
                    .done,
                    "\(peer.name) received \(count) item(s); \(queued) will be imported when they unlock their vault")
            } else if duplicates > 0 {
                t.finish(
                    .done,
                    "\(peer.name) imported \(count - duplicates) item(s); \(duplicates) already in \(peer.name)'s vault"
                )
            } else {
                t.finish(.done, "\(peer.name) imported \(count) item(s)")
            }
            persist(t)
        }
    }

    /// Waits for the peer's DECISION (`PeerSession.awaitingDecision` for each message), sending
    /// meanwhile the PREVIEWs of `latePreviews` (cap `late-preview`) in item order as they are
    /// made, from the PONG to the PING sent after the OFFER until the DECISION comes. If the user
    /// cancels meanwhile, the peer is told (ERROR `cancelled`: its inbox drops the offer) and
    /// `TransferCancelled` is thrown. One task writes: the readers and preview makers report here.
    private func awaitDecision(
        _ session: SenderSession, in s: PeerSession, cancelling t: OutgoingTransfer, latePreviews: [Int] = []
    ) async throws -> ([StreamItem], SenderSession) {
        enum Event: Sendable {
            case read(WireMessage?)
            case preview(Int, [UInt8])
            case cancelRequested
        }
        let peer = s.peer
        var session = session
        return try await withThrowingTaskGroup(of: Event.self) { group in
            group.addTask { .read(try await s.next()) }
            group.addTask {
                await t.untilCancelRequested()
                return .cancelRequested
            }
            // Late previews: made up to one per core at a time, sent in item order (`ready` holds
            // those made ahead of their turn; an empty body says there is none).
            var started = 0
            var sent = 0
            var ready: [Int: [UInt8]] = [:]
            func startPreview() {
                let n = started
                started += 1
                group.addTask { .preview(n, await self.latePreview(latePreviews[n], of: t, to: peer.publicKey)) }
            }
            while let event = try await group.next() {
                switch event {
                case .preview(let n, let sealed):
                    ready[n] = sealed
                    while let body = ready.removeValue(forKey: sent) {
                        try await s.send(.preview(Preview(item: UInt32(latePreviews[sent]), sealed: body)))
                        sent += 1
                    }
                    if started < latePreviews.count { startPreview() }
                case .read(nil):
                    throw AgentError(.peerUnavailable, "\(peer.name) closed the connection before deciding")
                case .read(let m?):
                    if m == .pong, started == 0 {
                        // The receiver has not accepted at once: its user may want previews.
                        while started < min(max(1, System.coreCount), latePreviews.count) { startPreview() }
                    }
                    guard let items = try await s.awaitingDecision(m, &session, peerName: peer.name) else {
                        group.addTask { .read(try await s.next()) }
                        continue
                    }
                    // Previews still being made are abandoned: the receiver drops any in flight.
                    group.cancelAll()
                    return (items, session)
                case .cancelRequested:
                    group.cancelAll()
                    // The reading task has ended (cancelled) before this one writes the ERROR.
                    try? await group.waitForAll()
                    // Not the user's cancel: the agent is stopping, and the offer is resumed later.
                    guard t.cancelRequested else { throw CancellationError() }
                    var cancelled = session
                    if let error = cancelled.cancel() { try? await s.send(error) }
                    throw TransferCancelled()
                }
            }
            throw AgentError(.peerUnavailable, "\(peer.name) closed the connection before deciding")
        }
    }

    /// Items whose preview may follow the offer: those with one kept in the plan (an earlier
    /// session made it) or one the transfer's `PreviewMaker` can make.
    package func latePreviewItems(of t: OutgoingTransfer) -> [Int] {
        let chosen = Set(t.previewMaker.withLock { $0?.chosen } ?? [])
        return t.plan.withLock { p in
            (p?.items.indices).map {
                Array($0.filter { p!.items[$0].previewSealedToSelf != nil || chosen.contains($0) })
            } ?? []
        }
    }

    /// A late PREVIEW's body for item `index`: its preview sealed to `recipient`, or empty when
    /// there is none.
    private func latePreview(_ index: Int, of t: OutgoingTransfer, to recipient: SigningPublicKey) async -> [UInt8] {
        if let kept = t.plan.withLock({ $0?.items[index] }),
            let sealed = try? kept.previewSealed(to: recipient, identity: identity)
        {
            return sealed
        }
        guard let maker = t.previewMaker.withLock({ $0 }), let jpeg = await maker.preview(index),
            let key = try? recipient.agreementKey()
        else { return [] }
        return SealedBox.seal(jpeg, to: key)
    }

    /// Makes the previews an OFFER announces (for a receiver without cap `late-preview`, or a
    /// relay) and keeps them in the plan, sealed to this node.
    package func makePreviewsBeforeOffer(_ t: OutgoingTransfer) async throws {
        guard let maker = t.previewMaker.withLock({ $0 }) else { return }
        let missing = t.plan.withLock { p in maker.chosen.contains { p?.items[$0].previewSealedToSelf == nil } }
        guard missing else { return }
        let made = try await t.unlessCancelled { try await maker.all() }
        try t.plan.withLock { p in
            for (i, jpeg) in made where p!.items[i].previewSealedToSelf == nil {
                try p!.items[i].setPreview(jpeg, identity: identity)
            }
        }
    }

    /// Streams `items` of `plan` (then DONE) while a second task reads their results into `t`,
    /// so the receiver never blocks writing a result while this task is busy writing data.
    /// Returns false if the peer closed before reporting every item. A cancel by the user stops
    /// the stream between two pieces and tells the peer (ERROR `cancelled`).
    package func stream(
        _ items: [StreamItem], of plan: OutgoingPlan, to recipient: SigningPublicKey, in s: PeerSession,
        session: SenderSession,
        progress t: OutgoingTransfer
    ) async throws -> Bool {
        let handOff = InboundHandOff(iterator: s.iterator, reader: s.reader)
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await self.collectResults(t, handOff, session: session) }
            var pacer = SendPacer(bytesPerSecond: configuration.sendRateLimit, clock: clock)
            do {
                for item in items {
                    try await sendItem(
                        plan.items[item.item], index: item.item, offset: item.offset, offer: plan.offerID,
                        to: recipient,
                        writer: &s.writer, progress: t, pacer: &pacer)
                }
                try await s.send(.done(Done(offer: plan.offerID)))
            } catch is TransferCancelled {
                group.cancelAll()
                var cancelled = session
                if let error = cancelled.cancel() { try? await s.send(error) }
                throw TransferCancelled()
            } catch {
                // A write failed because the peer closed: what it said before closing (an ERROR,
                // e.g. `cancelled` when its user stopped the transfer) explains more than the write.
                _ = try await group.next()
                throw error
            }
            let allDone = try await group.next() ?? false
            group.cancelAll()
            return allDone
        }
    }

    /// Reads ITEM_RESULTs into `t` until the session has every result it is owed; false if the
    /// peer closed first. A PING is not answered here (the streaming task owns the writer; the
    /// data it sends keeps the peer's idle timer alive).
    package func collectResults(_ t: OutgoingTransfer, _ h: InboundHandOff, session: SenderSession) async throws -> Bool
    {
        var session = session
        while session.state == .sending, let frame = try await h.iterator.next() {
            switch try session.receive(h.reader.open(frame)) {
            case .result(let r):
                t.update { s in
                    // Already in the peer's vault: imported there before, not stored again.
                    s.items[r.item].status =
                        r.status == .imported && r.duplicate == true ? .duplicate : .init(rawValue: r.status.rawValue)
                    s.items[r.item].photo = r.photo
                    s.items[r.item].code = r.code?.name
                    s.items[r.item].message = r.message
                }
            case .peerFailed(let e):
                throw WireError(e.code, "the peer reported: \(e.message)")
            case .none, .reply:
                continue
            case .send, .declined:
                throw WireError(.internalError, "the sender session answered a result with a decision")
            }
        }
        return session.state == .finished
    }

    /// Streams one photo of the plan (`SealingItem`: encrypted as it is read), keeping `t`'s
    /// progress. From `offset` > 0 (resume) the bytes before it are encrypted but not sent.
    package func sendItem(
        _ item: PlannedItem, index: Int, offset start: Int64, offer: String, to recipient: SigningPublicKey,
        writer: inout SecureWriter,
        progress t: OutgoingTransfer, pacer: inout SendPacer
    ) async throws {
        var source = try SealingItem(item, index: index, offer: offer, sender: identity, recipient: recipient)
        if item.restart == true {
            // Its ITEM_START goes out at 0 now: whatever the receiver spools from here on is of
            // the new content, so a later session may resume it.
            t.plan.withLock { $0?.items[index].restart = nil }
            persist(t)
        }
        t.update { s in
            s.items[index].status = .sending
            s.items[index].resumedBytes = start > 0 ? start : nil
            s.sentBytes += start - s.items[index].sentBytes
            s.items[index].sentBytes = start
        }
        try await source.stream(from: start, writer: &writer, pacer: &pacer) { n in
            try t.checkCancelled()
            t.update { s in
                s.items[index].sentBytes += Int64(n)
                s.sentBytes += Int64(n)
            }
        }
    }
}
