import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoTransfers
import LocafotoWire
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A relay to deposit at: its addresses, and its key when known (then the handshake is pinned).
package struct RelayTarget: Sendable {
    package var endpoints: [PeerEndpoint]
    package var fingerprint: Fingerprint?
    package var label: String
}

// A node's side of relays (protocol/messages.md "Relay"): deposits for peers that are offline,
// and receipts for those deposits (offers that wait at a relay for this node are collected by
// receiving: `Receiver.collect(from:)`).
extension Sender {
    /// The relay a send goes through, or nil to send directly. Named with `--via` (HOST:PORT,
    /// or the name or fingerprint of a relay seen over mDNS), or else, automatically, the first
    /// relay of `--relay` when the recipient is a trusted peer that is not online: a relay
    /// never gets photos for an unknown or untrusted peer unless the user names it.
    package func relayTarget(for choice: PeerChoice, via: String?) throws -> RelayTarget? {
        guard let via else {
            guard choice.endpoints.isEmpty, choice.known?.trust == .trusted, let first = configuration.relays.first
            else { return nil }
            return RelayTarget(endpoints: [first.endpoint], fingerprint: nil, label: first.description)
        }
        if StaticAddress.looksLikeAddress(via) {
            let address = try StaticAddress(parsing: via)
            return RelayTarget(endpoints: [address.endpoint], fingerprint: nil, label: address.description)
        }
        let relay = try PeerResolver.resolve(via, online: directory.online, known: store.peers())
        guard !relay.endpoints.isEmpty else {
            throw AgentError(
                .peerUnavailable,
                "the relay \(relay.name) [\(relay.fingerprint.short)] is not online; name it by address (--via HOST:PORT)"
            )
        }
        return RelayTarget(endpoints: relay.endpoints, fingerprint: relay.fingerprint, label: relay.name)
    }

    /// Deposits the transfer's plan at `relay` for the chosen peer. Ends in `held` (the relay
    /// committed every item) or `failed`; a deposit cut short is not resumed: the relay
    /// discards partial deposits, so the user sends again.
    package func deposit(_ t: OutgoingTransfer, at relay: RelayTarget, for choice: PeerChoice) async {
        do {
            guard let keyData = choice.known?.publicKey, let recipient = try? SigningPublicKey(bytes: [UInt8](keyData))
            else {
                throw AgentError(
                    .notFound,
                    "\(choice.name)'s key is not known yet, and a relay needs it to seal the photos: meet \(choice.name) once on the network (or `locafoto peers`/`send` to its address) first"
                )
            }
            var lastError: (any Error)?
            for endpoint in relay.endpoints {
                do {
                    try await sessions.withSession(endpoint, expected: relay.fingerprint) { s in
                        try await self.depositSession(t, in: s, at: endpoint, recipient: recipient)
                    }
                    return
                } catch {
                    if error is AgentError || error is WireError || error is TransferCancelled { throw error }
                    lastError = error  // cannot connect there: try the next address
                }
            }
            throw AgentError(
                .peerUnavailable,
                "cannot connect to the relay \(relay.label): \(lastError.map(NetworkFailure.reason) ?? "no address")")
        } catch is TransferCancelled {
            t.finish(.cancelled, "cancelled by the user; the relay keeps nothing of a deposit cut short")
            persist(t)
        } catch {
            let message: String
            switch error {
            case let e as AgentError: message = e.message
            case let e as WireError: message = "\(e.message) [\(e.code.name)]"
            default: message = NetworkFailure(error)?.during("the relay") ?? "\(error)"
            }
            logger.warning("deposit for '\(t.current.peer.name)' failed: \(message)")
            t.finish(.failed, message)
            persist(t)
        }
    }

    private func depositSession(
        _ t: OutgoingTransfer, in s: PeerSession, at endpoint: PeerEndpoint, recipient: SigningPublicKey
    ) async throws {
        let relay = s.peer
        guard relay.caps.contains(Capability.relay) else {
            throw AgentError(
                .invalidRequest,
                "\(relay.name) at \(endpoint.address):\(endpoint.port) is not a relay (it does not announce the relay capability); nothing was sent"
            )
        }
        let address =
            endpoint.address.contains(":")
            ? "[\(endpoint.address)]:\(endpoint.port)" : "\(endpoint.address):\(endpoint.port)"
        let route = RelayRoute(
            address: address, fingerprint: relay.fingerprint.description, name: relay.name,
            recipientKey: recipient.bytes)
        try await ensureHashes(t)  // the offer signature covers them
        if relay.caps.contains(Capability.preview) { try await makePreviewsBeforeOffer(t) }
        let plan = try t.plan.withLock { p -> OutgoingPlan in
            try p!.sealKeys(to: recipient, identity: identity)
            p!.relay = route
            return p!
        }
        // Previews go to a relay that takes them, sealed to the recipient (the relay cannot open
        // them) and signed for it apart from the offer (the relay may hand the offer on without).
        let previews = relay.caps.contains(Capability.preview)
        let items = plan.items.map { $0.offerItem(preview: previews) }
        let signature = try Offer.signature(
            id: plan.offerID, items: items, sender: identity.signingKey, recipient: recipient)
        let previewSignature = try Offer.previewSignature(
            id: plan.offerID, items: items, sender: identity.signingKey, recipient: recipient)
        for part in Offer.parts(
            id: plan.offerID, items: items, to: recipient.bytes, signature: signature,
            previewSignature: previewSignature)
        {
            try await s.send(.offer(part))
        }
        if previews {
            for (i, item) in plan.items.enumerated() {
                guard let sealed = try item.previewSealed(to: recipient, identity: identity) else { continue }
                try await s.send(.preview(Preview(item: UInt32(i), sealed: sealed)))
            }
        }
        t.update {
            $0.state = .offered
            $0.offer = plan.offerID
            $0.message = "depositing at the relay \(relay.name)"
            for i in $0.items.indices { $0.items[i].status = .offered }
        }
        // A relay answers `held` (or `failed`) for each item, never a recipient's statuses.
        var session = SenderSession(
            offer: plan.offerID, itemSizes: plan.items.map(\.size), resultStatuses: [.held, .failed])
        let toSend = try await s.awaitDecision(&session, peerName: "the relay \(relay.name)")
        let decision = session.decision!
        guard decision.decision == .accepted else {
            let code = decision.code.map { " [\($0.name)]" } ?? ""
            throw AgentError(
                .refused,
                "the relay \(relay.name) refused the deposit: \(decision.message ?? decision.decision.rawValue)\(code)")
        }
        guard toSend.count == plan.items.count, toSend.allSatisfy({ $0.offset == 0 }) else {
            throw WireError(.protocolViolation, "the relay \(relay.name) asked to resume a new deposit")
        }
        t.update {
            $0.state = .sending
            $0.message = nil
        }
        let complete = try await stream(toSend, of: plan, to: recipient, in: s, session: session, progress: t)
        guard complete else {
            throw AgentError(
                .peerUnavailable, "the relay \(relay.name) closed the connection before confirming every item")
        }
        let notHeld = t.current.items.filter { $0.status != .held }
        guard notHeld.isEmpty else {
            let why = notHeld.compactMap(\.message).first.map { ": \($0)" } ?? ""
            throw AgentError(
                .refused, "the relay \(relay.name) did not hold \(notHeld.count) of \(plan.items.count) item(s)\(why)")
        }
        t.update {
            $0.state = .held
            $0.message =
                "held by the relay \(relay.name) for \(plan.peerName); delivered when \(plan.peerName) collects it or comes online"
        }
        persist(t)
        // The relay has the photos: the bytes in memory are not needed again (a held transfer
        // ends with its receipt, which may take days).
        t.letGoOfBytes(in: .held)
        logger.info(
            "transfer \(t.id.prefix(8)): the relay \(relay.name) holds \(plan.items.count) item(s) for \(plan.peerName)"
        )
    }

    // MARK: receipts

    /// Asks the relays of `held` transfers what became of them.
    package func pollReceipts() async {
        var byRelay: [String: [(OutgoingTransfer, OutgoingPlan, RelayRoute)]] = [:]
        for t in outbox.transfers(in: .held) {
            guard let plan = t.plan.withLock({ $0 }), let route = plan.relay else { continue }
            byRelay[route.fingerprint, default: []].append((t, plan, route))
        }
        for (fp, held) in byRelay {
            guard let relayFP = try? Fingerprint(parsing: fp) else { continue }
            var endpoints = directory.online(relayFP)?.endpoints ?? []
            if let a = try? StaticAddress(parsing: held[0].2.address) { endpoints.append(a.endpoint) }
            do {
                try await fetchReceipts(from: relayFP, endpoints: endpoints, held: held)
            } catch {
                logger.debug("cannot fetch receipts from the relay \(held[0].2.name): \(error)")
            }
        }
    }

    private func fetchReceipts(
        from relay: Fingerprint, endpoints: [PeerEndpoint], held: [(OutgoingTransfer, OutgoingPlan, RelayRoute)]
    ) async throws {
        for _ in 0..<10 {  // up to 1,000 receipts a pass; the rest on the next
            var answer: Receipts?
            var lastError: (any Error)?
            for endpoint in endpoints where answer == nil {
                do {
                    answer = try await sessions.withSession(endpoint, expected: relay) { s -> Receipts in
                        guard case .receipts(let r) = try await s.collect(.receipts) else {
                            throw WireError(.internalError, "COLLECT receipts was answered otherwise")
                        }
                        return r
                    }
                } catch {
                    lastError = error
                }
            }
            guard let answer else { throw lastError ?? AgentError(.peerUnavailable, "no address") }
            for receipt in answer.receipts {
                guard let (t, plan, route) = held.first(where: { $0.1.offerID == receipt.offer }) else {
                    logger.notice(
                        "the relay sent a receipt for offer \(receipt.offer.prefix(8)), which no held transfer of this agent is waiting for"
                    )
                    continue
                }
                apply(receipt, to: t, plan: plan, route: route)
            }
            if !answer.more { return }
        }
    }

    /// Ends a held transfer from its receipt (`ReceiptEnding`), once the receipt names the
    /// transfer's recipient and the recipient's signature over its decision is checked.
    package func apply(_ r: Receipt, to t: OutgoingTransfer, plan: OutgoingPlan, route: RelayRoute) {
        guard r.to.bytes == route.recipientKey, let recipient = try? SigningPublicKey(bytes: route.recipientKey) else {
            logger.warning(
                "the relay \(route.name) sent a receipt for offer \(r.offer.prefix(8)) naming another recipient; ignored"
            )
            return
        }
        let signed =
            r.decision.map { decision in
                r.receipt.map {
                    DecisionReceipt.verify(
                        $0.bytes, offerID: r.offer, sender: identity.publicKey, recipient: recipient,
                        decision: decision.rawValue)
                } ?? false
            } ?? true
        var ending: ReceiptEnding?
        t.update { s in
            let end = ReceiptEnding(r, decisionSigned: signed, items: s.items, peer: plan.peerName, relay: route.name)
            s.items = end.items
            ending = end
        }
        guard let ending else { return }
        t.finish(ending.state, ending.message)
        logger.info("transfer \(t.id.prefix(8)) to \(plan.peerName) via \(route.name): \(ending.state.rawValue)")
        persist(t)
    }
}

/// A node's visits to the relays that hold its transfers, for their receipts, every
/// `collectInterval`.
package struct RelayReceiptService: Service {
    package let sender: Sender

    package init(sender: Sender) { self.sender = sender }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sender.pollReceipts()
                try await sender.clock.sleep(for: sender.configuration.collectInterval)
            }
        }
    }
}
