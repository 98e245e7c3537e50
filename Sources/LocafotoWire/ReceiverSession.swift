import LocafotoCrypto
import LocafotoFormats

/// What the receiving side of a session must do after a message (the I/O layer carries it out).
public enum ReceiverAction: SessionActions {
    case none
    /// An offer is complete and valid: put it in the inbox and wait for a decision.
    case offerReceived(AssembledOffer)
    /// A PREVIEW for an item that announced one: check it (`PreviewCheck`) and keep it or drop
    /// it. With `then`, it was the offer's last preview: the offer is complete as with
    /// `offerReceived`.
    case previewReceived(item: Int, sealed: [UInt8], then: AssembledOffer?)
    /// A late PREVIEW (cap `late-preview`) while the decision is awaited: check it as an
    /// on-time one but against no announced size or hash, and keep it with the pending offer.
    /// `sealed` empty: the sender made none for this item.
    case latePreviewReceived(item: Int, sealed: [UInt8])
    case beginItem(ItemStart)
    case itemData(ItemData)
    case endItem(ItemEnd)
    /// The sender has sent every item; reply to results still outstanding, then close.
    case senderDone
    case reply(WireMessage)
    /// The peer reported an error and will close.
    case peerFailed(ErrorBody)
}

/// The receiver's session state machine: which messages are legal when, and the per-item
/// byte accounting. Pure (no sockets, no clock): tested message by message.
public struct ReceiverSession: Sendable {
    public enum State: Sendable, Equatable {
        case awaitingOffer
        /// Every OFFER part is here; the PREVIEWs its items announced come next, in item order.
        case awaitingPreviews(String)
        case awaitingDecision(String)
        case receiving(String)
        case finished
    }

    private enum ItemProgress: Sendable, Equatable {
        case pending
        case receiving(next: Int64)
        case ended
    }

    public private(set) var state: State = .awaitingOffer
    private var assembler: OfferAssembler
    private var offer: AssembledOffer?
    private var progress: [ItemProgress] = []
    private var current: Int?
    /// Resume offsets promised in our DECISION: ITEM_START may begin there (or at 0).
    private var resumeOffsets: [Int: Int64] = [:]
    /// Items whose PREVIEW is still due, in the order they must come.
    private var previewsDue: [Int] = []
    /// Items marked `latePreview` whose PREVIEW has not come yet, in the order they must come.
    private var latePreviewsDue: [Int] = []
    /// An ITEM_START was received: late PREVIEWs still in flight after the DECISION end there.
    private var itemsBegun = false

    /// - Parameter acceptsLateHash: this receiver announced cap `late-hash` (direct offers may
    ///   leave item hashes out; the item's content hash is then computed as it arrives).
    /// - Parameter acceptsPreviews: this receiver announced cap `preview` (items may announce
    ///   one; their PREVIEW messages follow the OFFER before it is complete).
    /// - Parameter acceptsLatePreviews: this receiver announced cap `late-preview` too (items
    ///   may mark their preview as following the complete offer, before the DECISION).
    public init(
        limits: OfferLimits = OfferLimits(), acceptsLateHash: Bool = false, acceptsPreviews: Bool = false,
        acceptsLatePreviews: Bool = false
    ) {
        assembler = OfferAssembler(
            limits: limits, acceptsLateHash: acceptsLateHash, acceptsPreviews: acceptsPreviews,
            acceptsLatePreviews: acceptsLatePreviews)
    }

    public mutating func receive(_ message: WireMessage) throws -> ReceiverAction {
        if let (action, ends) = message.answeredInAnyState(ReceiverAction.self) {
            if ends { state = .finished }
            return action
        }
        switch (state, message) {
        case (.awaitingOffer, .offer(let part)):
            guard let complete = try assembler.add(part) else { return .none }
            offer = complete
            progress = Array(repeating: .pending, count: complete.items.count)
            previewsDue = complete.items.indices.filter { complete.items[$0].preview != nil }
            latePreviewsDue = complete.items.indices.filter { complete.items[$0].latePreview == true }
            guard previewsDue.isEmpty else {
                state = .awaitingPreviews(complete.id)
                return .none
            }
            state = .awaitingDecision(complete.id)
            return .offerReceived(complete)
        case (.awaitingPreviews(let id), .preview(let p)):
            guard let next = previewsDue.first, Int(p.item) == next else {
                throw WireError(
                    .protocolViolation,
                    "PREVIEW for item \(p.item); expected " + (previewsDue.first.map { "item \($0)'s" } ?? "none"))
            }
            previewsDue.removeFirst()
            guard previewsDue.isEmpty else { return .previewReceived(item: next, sealed: p.sealed, then: nil) }
            state = .awaitingDecision(id)
            return .previewReceived(item: next, sealed: p.sealed, then: offer)
        case (.awaitingDecision, .preview(let p)):
            let item = try nextLatePreview(p)
            return .latePreviewReceived(item: item, sealed: p.sealed)
        case (.receiving, .preview(let p)) where !itemsBegun:
            // Sent before the sender read our DECISION: it stops there, we drop what was in flight.
            _ = try nextLatePreview(p)
            return .none
        case (.receiving(let id), .itemStart(let s)):
            guard s.offer == id else { throw WireError(.unknownOffer, "ITEM_START names another offer") }
            guard current == nil else {
                throw WireError(.protocolViolation, "ITEM_START before the previous item ended")
            }
            guard s.item >= 0, s.item < progress.count, progress[s.item] == .pending else {
                throw WireError(
                    .protocolViolation, "ITEM_START for item \(s.item), which is unknown, already sent or completed")
            }
            let offered = offer!.items[s.item]
            guard s.metadata.originalSize == offered.size else {
                throw WireError(
                    .sizeMismatch, "item \(s.item) announces \(s.metadata.originalSize) bytes, offered \(offered.size)")
            }
            // 0 restarts the item; the only other start is the offset our DECISION offered.
            guard s.offset == 0 || s.offset == resumeOffsets[s.item] else {
                throw WireError(
                    .protocolViolation,
                    "ITEM_START for item \(s.item) at offset \(s.offset); allowed: 0"
                        + (resumeOffsets[s.item].map { " or \($0)" } ?? ""))
            }
            progress[s.item] = .receiving(next: s.offset)
            current = s.item
            itemsBegun = true
            return .beginItem(s)
        case (.receiving, .itemData(let d)):
            guard let c = current, Int(d.item) == c, case .receiving(let next) = progress[c] else {
                throw WireError(.protocolViolation, "ITEM_DATA for an item that is not being sent")
            }
            guard d.offset == UInt64(next) else {
                throw WireError(.protocolViolation, "ITEM_DATA at offset \(d.offset), expected \(next)")
            }
            let end = next + Int64(d.data.count)
            guard end <= offer!.items[c].size else {
                throw WireError(.sizeMismatch, "item \(c) carries more bytes than offered")
            }
            progress[c] = .receiving(next: end)
            return .itemData(d)
        case (.receiving(let id), .itemEnd(let e)):
            guard e.offer == id, let c = current, e.item == c, case .receiving(let next) = progress[c] else {
                throw WireError(.protocolViolation, "ITEM_END for an item that is not being sent")
            }
            guard next == offer!.items[c].size else {
                throw WireError(.sizeMismatch, "item \(c) ended after \(next) of \(offer!.items[c].size) bytes")
            }
            progress[c] = .ended
            current = nil
            return .endItem(e)
        case (.receiving(let id), .done(let d)):
            guard d.offer == id, current == nil else {
                throw WireError(.protocolViolation, "DONE in the middle of an item")
            }
            guard progress.allSatisfy({ $0 == .ended }) else {
                throw WireError(.protocolViolation, "DONE before every offered item was sent")
            }
            state = .finished
            return .senderDone
        default:
            throw WireError(.protocolViolation, "unexpected \(message.kind) message in state \(state)")
        }
    }

    /// Consumes the late PREVIEW due next; throws for any other (wrong item, none due, too long).
    private mutating func nextLatePreview(_ p: Preview) throws -> Int {
        guard let next = latePreviewsDue.first, Int(p.item) == next else {
            throw WireError(
                .protocolViolation,
                "PREVIEW for item \(p.item); expected " + (latePreviewsDue.first.map { "item \($0)'s" } ?? "none"))
        }
        guard p.sealed.count <= PreviewImage.maxBytes + SealedBox.overhead else {
            throw WireError(
                .protocolViolation, "a PREVIEW carries at most \(PreviewImage.maxBytes) bytes of JPEG, sealed")
        }
        latePreviewsDue.removeFirst()
        return next
    }

    /// How many late PREVIEWs the pending offer still expects (they stop with the DECISION).
    public var latePreviewsOutstanding: Int { latePreviewsDue.count }

    /// The offer once every OFFER part is here (its previews may still be due); nil before.
    public var pendingOffer: AssembledOffer? { offer }

    /// What the offer announced of item `index`'s preview (nil: none, or no offer yet).
    public func offeredPreview(_ index: Int) -> PreviewInfo? {
        guard let offer, offer.items.indices.contains(index) else { return nil }
        return offer.items[index].preview
    }

    /// The user stops the transfer being received (protocol/messages.md "Cancelling"): the ERROR
    /// to send (after the results of committed items) before closing; nil unless receiving.
    public mutating func cancel(_ message: String = "the recipient stopped the transfer") -> WireMessage? {
        guard case .receiving(let id) = state else { return nil }
        state = .finished
        current = nil
        return .error(ErrorBody(code: .cancelled, message: message, offer: id))
    }

    /// The local decision on the pending offer. Returns the DECISION message to send.
    ///
    /// With `accepted`, `resume` lists items whose ciphertext prefix is already spooled and
    /// `completed` items committed in an earlier session (they count as ended for DONE; the
    /// sender must not start them). Entries that do not fit the offer (index out of range or
    /// repeated, offset not inside the item, status other than imported/queued) are dropped:
    /// the item is then simply sent from 0, so a stale local record can never make the DECISION
    /// invalid. The lists are ignored for other decisions.
    public mutating func decide(
        _ kind: DecisionKind, code: WireErrorCode? = nil, message: String? = nil,
        resume: [ResumePoint] = [], completed: [CompletedItem] = [], receipt: [UInt8]? = nil
    ) -> WireMessage {
        guard case .awaitingDecision(let id) = state, let offer else {
            preconditionFailure("decide() without a pending offer")
        }
        guard kind == .accepted else {
            state = .finished
            return .decision(Decision(offer: id, decision: kind, code: code, message: message, receipt: receipt))
        }
        state = .receiving(id)
        let sizes = offer.items.map(\.size)
        var used = Set<Int>()
        let done = completed.filter {
            ($0.status == .imported || $0.status == .queued) && sizes.indices.contains($0.item)
                && used.insert($0.item).inserted
        }.map { c in
            var c = c
            if let p = c.photo, !BundleHeader.isCanonicalUUID(p) { c.photo = nil }
            return c
        }
        let resumed = resume.filter {
            sizes.indices.contains($0.item) && $0.offset > 0 && $0.offset < sizes[$0.item]
                && used.insert($0.item).inserted
        }
        for c in done { progress[c.item] = .ended }
        resumeOffsets = Dictionary(uniqueKeysWithValues: resumed.map { ($0.item, $0.offset) })
        return .decision(
            Decision(
                offer: id, decision: kind, code: code, message: message, resume: resumed.isEmpty ? nil : resumed,
                completed: done.isEmpty ? nil : done, receipt: receipt))
    }
}
