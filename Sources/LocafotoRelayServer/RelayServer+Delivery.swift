import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoRelay
import LocafotoSession
import LocafotoTransfers
import LocafotoWire
import Logging
import NIOCore
import ServiceLifecycle

// The relay hands a deposit on (protocol/messages.md "Delivery"): to a recipient that comes to
// collect (COLLECT offers), or to one it finds online (mDNS, --peer), as the session's sender.
extension RelayServer {
    /// COLLECT offers: QUEUE n, then the oldest deposit not being delivered elsewhere.
    package func handOn(in s: PeerSession) async throws {
        let waiting = try store.deposits(for: s.peer.publicKey.bytes, now: clock.date)
        let next = waiting.first { claim($0.offerID) }
        defer { if let next { release(next.offerID) } }
        try await s.send(.queue(Queue(offers: next == nil ? 0 : waiting.count)))
        guard let next else { return }
        try await deliver(next, in: s)
    }

    /// Sends one deposit to its recipient (the session's peer): the OFFER as the sender made
    /// it (with `from`), then the stored items, and records the outcome as a receipt for the
    /// sender. A broken session leaves the deposit held; the next one resumes it.
    package func deliver(_ d: DepositRecord, in s: PeerSession) async throws {
        let recipient = s.peer
        let from = OfferSender(ed25519: d.senderKey, name: d.senderName)
        // Previews go to a recipient that takes them, all of them or none (the preview signature
        // covers them together); any other gets the offer without, which its signature allows.
        let previews = previewsToHandOn(d, to: recipient)
        var items = d.items
        if previews == nil { for i in items.indices { items[i].preview = nil } }
        for part in Offer.parts(
            id: d.offerID, items: items, to: d.recipientKey, from: from, signature: d.offerSignature,
            previewSignature: previews == nil ? nil : d.previewSignature)
        {
            try await s.send(.offer(part))
        }
        for (index, sealed) in previews ?? [] {
            try await s.send(.preview(Preview(item: UInt32(index), sealed: sealed)))
        }
        logger.info(
            "handing deposit \(d.offerID.prefix(8)) from \(d.senderName) to \(recipient.name) [\(recipient.fingerprint.short)]"
        )
        var session = SenderSession(offer: d.offerID, itemSizes: d.items.map(\.size))
        let toSend = try await s.awaitDecision(&session, peerName: recipient.name)
        let decision = session.decision!
        guard decision.decision == .accepted else {
            try store.recordDelivery(
                offerID: d.offerID, decision: decision.decision, receipt: decision.receipt?.bytes, results: [])
            logger.info("\(recipient.name) answered \(decision.decision.rawValue) to deposit \(d.offerID.prefix(8))")
            return
        }
        let stored = Dictionary(uniqueKeysWithValues: try store.storedItems(d.offerID).map { ($0.index, $0) })
        let completed = decision.completed ?? []
        let handOff = InboundHandOff(iterator: s.iterator, reader: s.reader)
        let decided = session
        let results = try await withThrowingTaskGroup(of: [Int: ItemResult]?.self) { group in
            group.addTask { try await Self.readResults(handOff, session: decided) }
            var pacer = SendPacer(bytesPerSecond: sendRateLimit, clock: clock)
            for item in toSend {
                guard let held = stored[item.item] else {
                    throw AgentError(.corrupt, "deposit \(d.offerID.prefix(8)) has no item \(item.item)")
                }
                var source = StoredCiphertext(held)
                try await source.stream(from: item.offset, writer: &s.writer, pacer: &pacer)
            }
            try await s.send(.done(Done(offer: d.offerID)))
            let r = try await group.next() ?? nil
            group.cancelAll()
            return r
        }
        guard let results else {
            throw AgentError(.peerUnavailable, "\(recipient.name) closed the connection before reporting every item")
        }
        var report = completed.map { LocafotoRelay.ReceiptItem(item: $0.item, status: $0.status.rawValue) }
        report += results.values.sorted { $0.item < $1.item }.map {
            LocafotoRelay.ReceiptItem(
                item: $0.item, status: $0.status.rawValue, code: $0.code?.rawValue, message: $0.message)
        }
        try store.recordDelivery(
            offerID: d.offerID, decision: .accepted, receipt: decision.receipt?.bytes, results: report)
        logger.info(
            "delivered deposit \(d.offerID.prefix(8)) to \(recipient.name): \(report.filter { $0.status != "failed" }.count) of \(d.items.count) item(s) taken"
        )
    }

    /// The deposit's sealed previews in item order, if the recipient announced cap `preview` and
    /// every announced one is here; nil otherwise.
    private func previewsToHandOn(_ d: DepositRecord, to recipient: PeerIdentity) -> [(Int, [UInt8])]? {
        let announced = d.items.indices.filter { d.items[$0].preview != nil }
        guard !announced.isEmpty, d.previewSignature != nil, recipient.caps.contains(Capability.preview) else {
            return nil
        }
        var out: [(Int, [UInt8])] = []
        for i in announced {
            guard let sealed = store.preview(d.offerID, i) else {
                logger.warning(
                    "deposit \(d.offerID.prefix(8)): the preview of item \(i) is unreadable; handing the offer on without previews"
                )
                return nil
            }
            out.append((i, sealed))
        }
        return out
    }

    /// ITEM_RESULTs until every expected item is reported; nil if the peer closed first.
    private static func readResults(_ h: InboundHandOff, session: SenderSession) async throws -> [Int: ItemResult]? {
        var session = session
        while session.state == .sending, let frame = try await h.iterator.next() {
            switch try session.receive(h.reader.open(frame)) {
            case .result, .none, .reply:
                continue
            case .peerFailed(let e):
                throw WireError(e.code, "the recipient reported: \(e.message)")
            case .send, .declined:
                throw WireError(.internalError, "the sender session answered a result with a decision")
            }
        }
        return session.state == .finished ? session.results : nil
    }

    /// One pass of the relay's loop: drops what expired, and opens a session to each recipient
    /// with deposits waiting that is online (mDNS or --peer) and not already being served.
    package func deliveryRound() {
        do {
            let expired = try store.expire(now: clock.date)
            if expired > 0 {
                logger.info("\(expired) deposit(s) expired undelivered; their senders get 'expired' receipts")
            }
            for key in try store.recipientsWithQueue(now: clock.date) {
                guard let publicKey = try? SigningPublicKey(bytes: key) else { continue }
                let fp = Fingerprint(publicKey: publicKey)
                guard let online = directory.online(fp), !online.endpoints.isEmpty, claim("to:" + fp.description) else {
                    continue
                }
                work.submit {
                    defer { self.release("to:" + fp.description) }
                    await self.pushQueue(to: fp, key: key, endpoints: online.endpoints)
                }
            }
        } catch {
            logger.error("relay: cannot read the queue: \(error)")
        }
    }

    /// Delivers the recipient's deposits one session at a time until none is left or it fails.
    private func pushQueue(to fp: Fingerprint, key: [UInt8], endpoints: [PeerEndpoint]) async {
        while let d = ((try? store.deposits(for: key, now: clock.date)) ?? []).first(where: { claim($0.offerID) }) {
            defer { release(d.offerID) }
            do {
                try await pushOne(d, to: fp, endpoints: endpoints)
            } catch {
                logger.info("cannot hand deposit \(d.offerID.prefix(8)) to \(fp.short) now: \(error)")
                return
            }
        }
    }

    private func pushOne(_ d: DepositRecord, to fp: Fingerprint, endpoints: [PeerEndpoint]) async throws {
        var lastError: (any Error)?
        for endpoint in endpoints {
            do {
                try await sessions.withSession(endpoint, expected: fp) { s in try await self.deliver(d, in: s) }
                return
            } catch {
                // Only a failure to connect moves on to the next address.
                if error is AgentError || error is WireError || error is RelayError { throw error }
                lastError = error
            }
        }
        throw lastError ?? AgentError(.peerUnavailable, "no address")
    }
}

/// The relay's loop: expiry, and delivery to recipients that are online.
package struct RelayDeliveryService: Service {
    package let relay: RelayServer
    package let interval: Duration

    package init(relay: RelayServer, interval: Duration) {
        self.relay = relay
        self.interval = interval
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                relay.deliveryRound()
                try await relay.clock.sleep(for: interval)
            }
        }
    }
}
