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
import LocafotoWire
import Logging
import NIOCore

// The relay's side of its sessions (protocol/messages.md "Relay"): a depositor's OFFER, or a
// COLLECT for offers (the relay then acts as the sender) or for receipts.
extension RelayServer {
    /// Serves one inbound session: a deposit, a collection of offers, or of receipts.
    package func serve(_ connection: PeerChannel.Async) async {
        let remote = connection.channel.remoteAddress?.description ?? "unknown"
        do {
            try await sessions.acceptSession(connection) { s in
                let peer = s.peer
                // The first message says what the peer comes for (a probe sends only PING).
                guard let first = try await s.nextSkippingPings() else { return }
                let request: RelayRequest
                do {
                    request = try RelayRequest(first: first)
                } catch let e as WireError {
                    try? await s.send(.error(ErrorBody(code: e.code, message: e.message)))
                    return
                }
                switch request {
                case .deposit: try await acceptDeposit(first, in: s)
                case .offers: try await handOn(in: s)
                case .receipts: try await sendReceipts(in: s)
                case .peerFailed(let e):
                    logger.info("\(peer.name) [\(peer.fingerprint.short)] reported \(e.code.name): \(e.message)")
                }
            }
        } catch {
            logger.info("relay session with \(remote) ended: \(error)")
        }
    }

    /// A deposit: OFFER (with `to` and the sender's offer signature), items stored as they
    /// arrive, and at DONE the deposit is committed durably before ITEM_RESULT `held` is sent.
    /// A deposit is whole or nothing: the offer signature covers every item and a recipient
    /// receives them all, so if one item fails the others are not held either.
    private func acceptDeposit(_ first: WireMessage, in s: PeerSession) async throws {
        let peer = s.peer
        var session = ReceiverSession(limits: offerLimits, acceptsPreviews: true)
        /// The sealed previews (for the recipient: the relay cannot open them), until the offer is complete.
        var previews: [Int: [UInt8]] = [:]
        var deposit: DepositWriter?
        defer { deposit?.discard() }  // nothing after a commit; everything before it
        var itemFailure: RelayError?
        var failedItems: [Int] = []
        var lastPing = clock.now
        var pending: WireMessage? = first
        /// Admits a complete deposit OFFER (and its previews): DECISION accepted (true), or a
        /// refusal (false: the session ends).
        func admit(_ offer: AssembledOffer) async throws -> Bool {
            switch admitDeposit(offer, from: peer) {
            case .success(let writer):
                deposit = writer
                try writer.storePreviews(previews)
                previews = [:]
                logger.info(
                    "deposit \(offer.id.prefix(8)) from \(peer.name) [\(peer.fingerprint.short)]: \(offer.items.count) item(s), \(offer.totalBytes) bytes"
                )
                try await s.send(session.decide(.accepted))
                return true
            case .failure(let refusal):
                logger.notice("refused a deposit from \(peer.name) [\(peer.fingerprint.short)]: \(refusal.message)")
                try await s.send(
                    session.decide(
                        .rejected, code: refusal.code,
                        message: PeerFacing.message(refusal.code, refusal.message, node: "the relay")))
                return false
            }
        }
        func failure(_ error: any Error) -> RelayError {
            error as? RelayError ?? RelayError(.io, .storageFailed, "the relay cannot store the item: \(error)")
        }
        do {
            while true {
                let message: WireMessage
                if let p = pending {
                    message = p
                    pending = nil
                } else {
                    guard let m = try await s.next() else {
                        throw AgentError(
                            .peerUnavailable,
                            "\(peer.name) closed the connection before DONE; the partial deposit is discarded")
                    }
                    message = m
                }
                switch try session.receive(message) {
                case .none:
                    break
                case .reply(let m):
                    try await s.send(m)
                case .previewReceived(let item, let sealed, let then):
                    // The relay cannot open a preview; its length is all it can check, and the
                    // preview signature covers them all: a wrong one spoils the whole deposit.
                    guard let size = session.offeredPreview(item)?.size, sealed.count == size + SealedBox.overhead
                    else {
                        throw WireError(
                            .protocolViolation, "the preview of item \(item) is not the length its OFFER announced")
                    }
                    previews[item] = sealed
                    guard let offer = then else { break }
                    guard try await admit(offer) else { return }
                case .latePreviewReceived:
                    // A relay does not announce cap `late-preview`: its session refuses them.
                    throw WireError(.internalError, "a late preview in a deposit")
                case .offerReceived(let offer):
                    guard try await admit(offer) else { return }
                case .beginItem(let start):
                    itemFailure = nil
                    do { try deposit!.begin(index: start.item, start: start) } catch { itemFailure = failure(error) }
                case .itemData(let d):
                    if itemFailure == nil {
                        do { try deposit!.append(d.data) } catch {
                            itemFailure = failure(error)
                            deposit!.abandonItem()
                        }
                    }
                    if clock.now - lastPing > sessions.pingInterval {
                        lastPing = clock.now
                        try await s.send(.ping)
                    }
                case .endItem(let end):
                    var problem = itemFailure
                    if problem == nil {
                        do { try deposit!.end(end) } catch { problem = failure(error) }
                    } else {
                        deposit!.abandonItem()
                    }
                    if let problem {
                        failedItems.append(end.item)
                        logger.notice("deposit \(end.offer.prefix(8)) item \(end.item) refused: \(problem.message)")
                        try await s.send(
                            .itemResult(
                                ItemResult(
                                    offer: end.offer, item: end.item, status: .failed, code: problem.code,
                                    message: PeerFacing.message(problem.code, problem.message, node: "the relay"))))
                    }
                case .senderDone:
                    guard let writer = deposit else { return }
                    let id = writer.offer.offerID
                    if !failedItems.isEmpty {
                        let message =
                            "not held: item \(failedItems[0]) of this offer failed, and a relay holds whole offers only; send again"
                        for i in writer.storedIndices {
                            try await s.send(
                                .itemResult(
                                    ItemResult(offer: id, item: i, status: .failed, code: .cancelled, message: message))
                            )
                        }
                        writer.discard()
                        return
                    }
                    let held = try writer.commit()
                    let recipient =
                        (try? SigningPublicKey(bytes: writer.offer.recipientKey)).map {
                            Fingerprint(publicKey: $0).short
                        } ?? "?"
                    for i in held {
                        try await s.send(
                            .itemResult(
                                ItemResult(
                                    offer: id, item: i, status: .held, message: "held by the relay for \(recipient)")))
                    }
                    logger.info(
                        "holding deposit \(id.prefix(8)) from \(peer.name) for \(recipient): \(held.count) item(s)")
                    return
                case .peerFailed(let e):
                    logger.info(
                        "\(peer.name) [\(peer.fingerprint.short)] abandoned its deposit: \(e.code.name): \(e.message)")
                    return
                }
            }
        } catch let e where e is WireError || e is RelayError {
            let wire = WireError(e, local: .internalError)
            try? await s.send(
                .error(
                    ErrorBody(
                        code: wire.code, message: PeerFacing.message(wire.code, wire.message, node: "the relay"),
                        offer: deposit?.offer.offerID)))
            throw e
        }
    }

    package struct DepositRefusal: Error {
        var code: WireErrorCode
        var message: String
    }

    /// Checks a deposit's OFFER and reserves room for it.
    private func admitDeposit(_ offer: AssembledOffer, from peer: PeerIdentity) -> Result<DepositWriter, DepositRefusal>
    {
        guard offer.from == nil else {
            return .failure(
                DepositRefusal(
                    code: .protocolViolation, message: "a deposit carries no 'from': the depositor is the sender"))
        }
        guard let to = offer.to, let signature = offer.signature else {
            return .failure(
                DepositRefusal(
                    code: .refusedByPolicy,
                    message:
                        "this is a relay: it only holds offers for someone else (OFFER with 'to' and 'signature'; `locafoto send PEER --via RELAY`)"
                ))
        }
        // Signature refusals are counted here (the store counts its own: policy and quotas).
        guard offer.hasValidSignature(by: peer.publicKey) else {
            try? store.count(.badSignature)
            return .failure(
                DepositRefusal(
                    code: .badSignature, message: "the offer signature does not verify for this sender and recipient"))
        }
        guard offer.previewsAreVouched(by: peer.publicKey) else {
            try? store.count(.badSignature)
            return .failure(
                DepositRefusal(
                    code: .badSignature, message: "the preview signature does not verify for this sender and recipient")
            )
        }
        do {
            let writer = try store.beginDeposit(
                DepositOffer(
                    offerID: offer.id, senderKey: peer.publicKey.bytes, senderName: peer.name, recipientKey: to,
                    items: offer.items,
                    totalBytes: offer.totalBytes, offerSignature: signature, previewSignature: offer.previewSignature))
            return .success(writer)
        } catch let e as RelayError {
            return .failure(DepositRefusal(code: e.code, message: e.message))
        } catch {
            return .failure(DepositRefusal(code: .storageFailed, message: "the relay cannot store a deposit: \(error)"))
        }
    }

    /// RECEIPTS for the depositor: as many as fit in one message; what is sent is forgotten.
    private func sendReceipts(in s: PeerSession) async throws {
        let (records, more) = try store.receipts(forSender: s.peer.publicKey.bytes, limit: Receipts.maxReceipts)
        let packed = try ReceiptPacking.pack(records.map(ReceiptPacking.wire))
        try await s.send(.receipts(Receipts(receipts: packed, more: more || packed.count < records.count)))
        _ = try store.acknowledgeReceipts(forSender: s.peer.publicKey.bytes, offerIDs: packed.map(\.offer))
        if !packed.isEmpty {
            logger.info("gave \(packed.count) receipt(s) to \(s.peer.name) [\(s.peer.fingerprint.short)]")
        }
    }
}

/// Fitting receipts into one transport message (protocol/messages.md "RECEIPTS").
package enum ReceiptPacking {
    package static func wire(_ r: ReceiptRecord) -> Receipt {
        Receipt(
            offer: r.offerID, to: r.recipientKey,
            state: LocafotoWire.ReceiptState(rawValue: r.state.rawValue) ?? .expired,
            decision: r.decision.flatMap(DecisionKind.init(rawValue:)), receipt: r.receipt,
            items: r.items.map {
                LocafotoWire.ReceiptItem(
                    item: $0.item, status: ItemStatus(rawValue: $0.status) ?? .failed,
                    code: $0.code.map(WireErrorCode.init(wire:)),
                    message: $0.message)
            },
            at: ISO8601DateFormatter().string(from: r.at))
    }

    package static func fits(_ receipts: [Receipt]) -> Bool {
        guard let n = try? WireMessage.receipts(Receipts(receipts: receipts, more: true)).encoded().count else {
            return false
        }
        return n <= WireProtocol.maxMessageLength
    }

    /// The receipts that fit, in order. A receipt too large alone (thousands of items) keeps
    /// only its items that were not imported, and if that is still too large, the first of
    /// them that fit: items a receipt leaves out were imported.
    package static func pack(_ all: [Receipt]) throws -> [Receipt] {
        var out: [Receipt] = []
        for r in all {
            if fits(out + [r]) {
                out.append(r)
                continue
            }
            guard out.isEmpty else { break }
            var short = r
            short.items = r.items.filter { $0.status != .imported }
            if !fits([short]) {
                var lo = 0
                var hi = short.items.count
                let all = short.items
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    short.items = Array(all.prefix(mid))
                    if fits([short]) { lo = mid } else { hi = mid - 1 }
                }
                short.items = Array(all.prefix(lo))
            }
            out.append(short)
            break
        }
        return out
    }
}
