import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoTransfers
import LocafotoWire
import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Interrupted outgoing transfers (protocol/messages.md, "Resuming"): the same offer is offered
/// again when the peer is reachable; the receiver says what it already holds.
extension Sender {
    /// At start: transfers that were unfinished when the agent stopped come back as interrupted.
    package func loadUnfinishedTransfers() {
        let records: [OutgoingRecord]
        do {
            records = try store.outgoing()
        } catch {
            logger.error("cannot read unfinished transfers: \(error)")
            return
        }
        for r in records {
            let t = OutgoingTransfer(peer: r.peerName, id: r.id, startedAt: r.createdAt, clock: clock)
            guard let items = try? JSONDecoder().decode([PlannedItem].self, from: r.items) else {
                logger.error("unfinished transfer \(r.id.prefix(8)) cannot be read back; it is dropped")
                try? store.deleteOutgoing(r.id)
                continue
            }
            let route = r.relay.flatMap { try? JSONDecoder().decode(RelayRoute.self, from: $0) }
            let plan = OutgoingPlan(
                offerID: r.offerId, peerFingerprint: r.peerFingerprint, peerName: r.peerName, items: items, relay: route
            )
            t.plan.withLock { $0 = plan }
            t.interrupted(since: r.updatedAt)
            t.update {
                $0.peer.fingerprint = r.peerFingerprint
                $0.offer = r.offerId
                $0.items = items.map { .init(name: $0.name, bytes: $0.size, status: .offered) }
                $0.totalBytes = items.reduce(0) { $0 + $1.size }
                $0.originalBytes = items.reduce(0) { $0 + $1.originalSize }
                $0.state = .interrupted
                $0.message = "interrupted by a restart of this agent; resumes when \(r.peerName) is reachable"
            }
            forgetStored(t)
            outbox.register(t)
            if let route {
                // A deposit the relay confirmed waits for its receipt; one cut short was discarded
                // by the relay (partial deposits are not kept).
                if r.state == OutgoingTransfer.State.held.rawValue {
                    t.update {
                        $0.state = .held
                        $0.message = "held by the relay \(route.name) for \(r.peerName)"
                        for i in $0.items.indices { $0.items[i].status = .held }
                    }
                } else {
                    t.finish(
                        .failed,
                        "the deposit at the relay \(route.name) was cut short by a restart of this agent; send again")
                    persist(t)
                }
                continue
            }
            if items.contains(where: { $0.path == nil }) {
                // Compressed photos and photos from the vault exist only in memory while sending.
                t.finish(
                    .failed,
                    "compressed photos and photos from the vault cannot resume after the agent restarted; send them again"
                )
                persist(t)
            }
        }
        if !records.isEmpty {
            logger.info("\(records.count) unfinished transfer(s) will resume when their peers are reachable")
        }
    }

    /// One pass of the resume loop: gives up on transfers past the resume window and offers
    /// again the others whose peer is online.
    package func resumeDue() {
        let now = clock.date
        let window = configuration.resumeWindow.seconds
        for t in outbox.transfers(in: .interrupted) {
            guard let plan = t.plan.withLock({ $0 }) else { continue }
            if let since = t.interruptedAt, now.timeIntervalSince(since) > window {
                t.finish(
                    .failed, "\(plan.peerName) was not reachable to resume the transfer within \(Int(window / 3600)) h")
                persist(t)
                continue
            }
            guard let peer = directory.online.first(where: { $0.fingerprint.description == plan.peerFingerprint }),
                t.resumeIsDue(now: now, endpoints: peer.endpoints)
            else { continue }
            t.update {
                $0.state = .connecting
                $0.message = "resuming"
            }
            work.submit { await self.resume(t) }
        }
    }

    /// The file at `path` prepared again if it is no longer the one `planned` was made from,
    /// else nil. A plan with a stamp is compared by stamp, without reading the file (as rsync's
    /// quick check); a plan stored before stamps existed, by content hash.
    private func changedFile(_ path: String, since planned: PlannedItem) async throws -> PreparedItem? {
        let maxSize = configuration.offerLimits.maxItemBytes
        var fresh = try await NIOThreadPool.singleton.runIfActive {
            try PreparedItem.prepare(path: path, maxSize: maxSize)
        }
        if let stamp = planned.stamp { return fresh.stamp == stamp ? nil : fresh }
        let (size, stamp) = (fresh.size, fresh.stamp)
        let hash = try await NIOThreadPool.singleton.runIfActive {
            try PreparedItem.hashFile(path: path, size: size, stamp: stamp)
        }
        guard hash != planned.hash || fresh.size != planned.size else { return nil }
        fresh.hash = hash
        return fresh
    }

    /// Offers an interrupted transfer again. A file that changed meanwhile is sent again from
    /// zero under a new photo key; a file that is gone ends the transfer.
    package func resume(_ t: OutgoingTransfer) async {
        guard var plan = t.plan.withLock({ $0 }), !t.isFinished else { return }
        do {
            for i in plan.items.indices {
                guard let path = plan.items[i].path else { continue }
                let changed: PreparedItem?
                do {
                    changed = try await changedFile(path, since: plan.items[i])
                } catch {
                    let why = (error as? AgentError)?.message ?? "\(error)"
                    t.finish(.failed, "cannot resume: \(why)")
                    persist(t)
                    return
                }
                guard let fresh = changed else { continue }
                logger.info("\(path) changed since the transfer was interrupted; it is sent again from the start")
                plan.items[i].size = fresh.size
                plan.items[i].hash = fresh.hash
                plan.items[i].stamp = fresh.stamp
                plan.items[i].kind = fresh.kind
                plan.items[i].restart = true
                try plan.items[i].rekey(identity: identity)
                let size = fresh.size
                t.update {
                    $0.items[i].bytes = size
                    $0.items[i].sentBytes = 0
                    $0.totalBytes = $0.items.reduce(0) { $0 + $1.bytes }
                }
            }
            let updated = plan
            t.plan.withLock { $0 = updated }
            persist(t)
            let choice = try PeerResolver.resolve(plan.peerFingerprint, online: directory.online, known: store.peers())
            guard !choice.endpoints.isEmpty else {
                t.update {
                    $0.state = .interrupted
                    $0.message = "interrupted; resumes when \(plan.peerName) is reachable"
                }
                return
            }
            logger.info("resuming transfer \(t.id.prefix(8)) to \(plan.peerName)")
            t.resuming(at: choice.endpoints)
            try await attempt(t, choice: choice)
        } catch {
            settle(t, after: error)
        }
    }

    /// Cancels a transfer (by id or unique prefix) in any state before its end: one being
    /// prepared or waiting for its peer is abandoned; one offered or sending tells the peer
    /// (ERROR `cancelled`, its inbox drops the offer); an interrupted one is dropped, and its peer
    /// told if it is online. Answers once the transfer has ended (or after `wait`).
    package func cancelTransfer(_ idPrefix: String, wait: Duration = .seconds(15)) async throws -> OutgoingTransfer {
        let t = try outbox.find(idPrefix)
        let state = t.current.state
        if t.isFinished {
            throw AgentError(.conflict, "transfer \(t.id.prefix(8)) has already ended (\(state.rawValue))")
        }
        if state == .held {
            throw AgentError(
                .conflict,
                "transfer \(t.id.prefix(8)) is held by a relay, which cannot be told to drop it; the recipient can reject it when it arrives"
            )
        }
        // A running job stops at its next step; a resume about to start sees the flag first.
        t.requestCancel()
        if state == .interrupted {
            t.finish(.cancelled, "cancelled by the user")
            persist(t)
            logger.info("transfer \(t.id.prefix(8)) to \(t.current.peer.name) cancelled")
            if let plan = t.plan.withLock({ $0 }), plan.relay == nil {
                work.submit { await self.withdraw(t, plan: plan) }
            }
            return t
        }
        var phase = t.current.phase
        let deadline = clock.now + wait
        while !t.isFinished, clock.now < deadline {
            phase = await t.snapshot(after: phase, timeout: deadline - clock.now).phase
        }
        return t
    }

    /// Tells the peer of a cancelled interrupted transfer that it is withdrawn (a session whose
    /// first message is ERROR `cancelled` naming the offer), so that its inbox drops the offer
    /// and its partial photos. A peer that is not online keeps them until the resume window ends.
    private func withdraw(_ t: OutgoingTransfer, plan: OutgoingPlan) async {
        let note: String
        do {
            let choice = try PeerResolver.resolve(plan.peerFingerprint, online: directory.online, known: store.peers())
            guard let endpoint = choice.endpoints.first else { throw AgentError(.peerUnavailable, "not online") }
            let fingerprint = try Fingerprint(parsing: plan.peerFingerprint)
            try await sessions.withSession(endpoint, expected: fingerprint) { s in
                try await s.send(
                    .error(
                        ErrorBody(code: .cancelled, message: "the sender cancelled the transfer", offer: plan.offerID)))
            }
            note = "cancelled by the user; \(plan.peerName) was told"
        } catch {
            note =
                "cancelled by the user; \(plan.peerName) could not be told (\((error as? AgentError)?.message ?? "\(error)")) and drops its partial photos when the resume window ends"
        }
        t.update { $0.message = note }
    }
}

/// Runs the resume loop every `resumeInterval`.
package struct ResumeService: Service {
    package let sender: Sender

    package init(sender: Sender) { self.sender = sender }

    package func run() async throws {
        sender.loadUnfinishedTransfers()
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await sender.clock.sleep(for: sender.configuration.resumeInterval)
                sender.resumeDue()
            }
        }
    }
}
