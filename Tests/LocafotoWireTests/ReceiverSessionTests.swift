import LocafotoFormats
import LocafotoTestSupport
import LocafotoWire
import Testing

@Suite("Receiver session state machine")
struct ReceiverSessionTests {
    typealias S = WireTestSupport

    /// Item 0: 150,000 bytes (three chunks), item 1: 10 bytes, item 2: empty.
    static let sizes: [Int64] = [150_000, 10, 0]
    static let items = sizes.enumerated().map { S.item($0.offset, size: $0.element) }
    static let offer = S.offer(items)
    static let id = S.offerID

    static func start(_ i: Int, offer: String = id, size: Int64? = nil, offset: Int64 = 0) -> WireMessage {
        .itemStart(
            ItemStart(
                offer: offer, item: i, photo: S.uuid(100 + (i & 0xFFFF)), algorithm: "chacha20-poly1305",
                iv: Array(0..<12),
                encryptedKey: Array(repeating: 1, count: 80), offset: offset,
                metadata: BundleMetadata(
                    originalSize: size ?? (sizes.indices.contains(i) ? sizes[i] : 1), format: "JPEG")))
    }

    static func data(_ i: Int, at offset: Int, _ n: Int) -> WireMessage {
        .itemData(ItemData(item: UInt32(i), offset: UInt64(offset), data: [UInt8](repeating: UInt8(i), count: n)))
    }

    static func end(_ i: Int, offer: String = id) -> WireMessage {
        .itemEnd(ItemEnd(offer: offer, item: i, authTag: Array(0..<16), signature: Array(0..<64)))
    }

    static let done = WireMessage.done(Done(offer: id))

    /// ITEM_DATA messages covering item `i` in pieces of at most `chunkLength`.
    static func pieces(_ i: Int) -> [WireMessage] {
        var out: [WireMessage] = []
        var offset = 0
        while offset < Int(sizes[i]) {
            let n = min(WireProtocol.chunkLength, Int(sizes[i]) - offset)
            out.append(data(i, at: offset, n))
            offset += n
        }
        return out
    }

    /// A session that has received the offer and accepted it.
    static func accepted() throws -> ReceiverSession {
        var s = ReceiverSession()
        _ = try s.receive(.offer(offer))
        _ = s.decide(.accepted)
        return s
    }

    /// A session in the middle of item 0 (one piece received).
    static func midItem() throws -> ReceiverSession {
        var s = try accepted()
        _ = try s.receive(start(0))
        _ = try s.receive(data(0, at: 0, 1000))
        return s
    }

    static func outcome(_ s: inout ReceiverSession, _ m: WireMessage) -> String {
        S.outcome { _ = try s.receive(m) }
    }

    @Test func cancellingEndsTheSessionFromEitherSide() throws {
        // The sender withdraws the offer while it waits for a decision.
        var waiting = ReceiverSession()
        _ = try waiting.receive(.offer(Self.offer))
        #expect(waiting.cancel() == nil, "only a transfer being received is stopped; a pending offer is rejected")
        let withdrawn = ErrorBody(code: .cancelled, message: "the sender cancelled the offer", offer: Self.id)
        #expect(try waiting.receive(.error(withdrawn)) == .peerFailed(withdrawn))
        #expect(waiting.state == .finished)
        // ERROR `cancelled` as the first message withdraws an offer of an earlier session.
        var fresh = ReceiverSession()
        #expect(try fresh.receive(.error(withdrawn)) == .peerFailed(withdrawn))
        // The receiver stops mid-item: the ERROR names the offer; more data is out of order.
        var s = try Self.midItem()
        #expect(
            s.cancel()
                == .error(ErrorBody(code: .cancelled, message: "the recipient stopped the transfer", offer: Self.id)))
        #expect(s.state == .finished)
        #expect(Self.outcome(&s, Self.data(0, at: 1000, 10)) == "protocol_violation")
    }

    @Test func happyPath() throws {
        var s = ReceiverSession()
        #expect(s.state == .awaitingOffer)
        let action = try s.receive(.offer(Self.offer))
        #expect(action == .offerReceived(AssembledOffer(id: Self.id, items: Self.items, totalBytes: 150_010)))
        #expect(s.state == .awaitingDecision(Self.id))

        let decision = s.decide(.accepted)
        #expect(decision == .decision(Decision(offer: Self.id, decision: .accepted)))
        #expect(s.state == .receiving(Self.id))

        for i in [1, 0, 2] {  // any order
            guard case .itemStart(let st) = Self.start(i) else { return }
            #expect(try s.receive(.itemStart(st)) == .beginItem(st))
            for p in Self.pieces(i) {
                guard case .itemData(let d) = p else { return }
                #expect(try s.receive(p) == .itemData(d))
            }
            guard case .itemEnd(let e) = Self.end(i) else { return }
            #expect(try s.receive(.itemEnd(e)) == .endItem(e))
            #expect(s.state == .receiving(Self.id))
        }
        #expect(Self.pieces(0).count == 3)
        #expect(try s.receive(Self.done) == .senderDone)
        #expect(s.state == .finished)
    }

    @Test func splitOfferThroughTheSession() throws {
        let items = (0..<300).map { S.item($0, size: 5) }
        let parts = Offer.parts(id: Self.id, items: items)
        var s = ReceiverSession()
        for p in parts.dropLast() {
            #expect(try s.receive(.offer(p)) == ReceiverAction.none)
            #expect(s.state == .awaitingOffer)
        }
        guard case .offerReceived(let o) = try s.receive(.offer(parts.last!)) else {
            Issue.record("offer not complete")
            return
        }
        #expect(o.items == items)
        #expect(s.state == .awaitingDecision(Self.id))
    }

    @Test func invalidOfferIsRefused() {
        var limits = OfferLimits()
        limits.maxItems = 2
        var s = ReceiverSession(limits: limits)
        #expect(Self.outcome(&s, .offer(Self.offer)) == "too_large")
        var s2 = ReceiverSession()
        #expect(Self.outcome(&s2, .offer(S.offer([S.item(0, kind: "bmp")]))) == "unsupported_content")
    }

    @Test func decisions() throws {
        for kind in [DecisionKind.rejected, .expired] {
            var s = ReceiverSession()
            _ = try s.receive(.offer(Self.offer))
            let m = s.decide(kind, code: .refusedByPolicy, message: "no")
            #expect(m == .decision(Decision(offer: Self.id, decision: kind, code: .refusedByPolicy, message: "no")))
            #expect(s.state == .finished)
            #expect(Self.outcome(&s, Self.start(0)) == "protocol_violation")
            #expect(Self.outcome(&s, Self.done) == "protocol_violation")
            #expect(try s.receive(.ping) == .reply(.pong))
        }
    }

    // MARK: messages out of order

    @Test func nothingButAnOfferBeforeTheOffer() throws {
        for m in [
            Self.start(0), Self.data(0, at: 0, 1), Self.end(0), Self.done,
            .decision(Decision(offer: Self.id, decision: .accepted)),
            .itemResult(ItemResult(offer: Self.id, item: 0, status: .imported)),
        ] {
            var s = ReceiverSession()
            #expect(Self.outcome(&s, m) == "protocol_violation", "\(m.kind)")
        }
    }

    @Test func nothingBeforeTheDecision() throws {
        for m in [Self.start(0), Self.data(0, at: 0, 1), Self.end(0), Self.done, .offer(Self.offer)] {
            var s = ReceiverSession()
            _ = try s.receive(.offer(Self.offer))
            #expect(Self.outcome(&s, m) == "protocol_violation", "\(m.kind)")
        }
    }

    @Test func offerAfterTheDecision() throws {
        var s = try Self.accepted()
        #expect(Self.outcome(&s, .offer(Self.offer)) == "protocol_violation")
        var s2 = try Self.accepted()
        #expect(Self.outcome(&s2, .offer(S.offer([S.item(5)], id: S.uuid(5)))) == "protocol_violation")
    }

    @Test func itemDataBeforeItemStart() throws {
        var s = try Self.accepted()
        #expect(Self.outcome(&s, Self.data(0, at: 0, 10)) == "protocol_violation")
        // After an item ended, its data is no longer accepted either.
        var s2 = try Self.accepted()
        _ = try s2.receive(Self.start(1))
        _ = try s2.receive(Self.data(1, at: 0, 10))
        _ = try s2.receive(Self.end(1))
        #expect(Self.outcome(&s2, Self.data(1, at: 10, 0)) == "protocol_violation")
    }

    @Test func itemDataForAnotherItem() throws {
        var s = try Self.midItem()
        #expect(Self.outcome(&s, Self.data(1, at: 0, 5)) == "protocol_violation")
        var s2 = try Self.midItem()
        #expect(Self.outcome(&s2, Self.data(99, at: 1000, 5)) == "protocol_violation")
    }

    @Test func wrongOffset() throws {
        for offset in [0, 999, 1001, 5000] {
            var s = try Self.midItem()  // 1000 bytes received
            #expect(Self.outcome(&s, Self.data(0, at: offset, 10)) == "protocol_violation", "offset \(offset)")
        }
        var s = try Self.midItem()
        #expect(Self.outcome(&s, Self.data(0, at: 1000, 10)) == "ok")
        #expect(Self.outcome(&s, Self.data(0, at: 1010, 0)) == "ok")  // empty pieces are fine
        #expect(Self.outcome(&s, Self.data(0, at: 1010, 10)) == "ok")
    }

    @Test func moreBytesThanOffered() throws {
        var s = try Self.accepted()
        _ = try s.receive(Self.start(1))  // 10 bytes
        #expect(Self.outcome(&s, Self.data(1, at: 0, 11)) == "size_mismatch")
        var s2 = try Self.accepted()
        _ = try s2.receive(Self.start(1))
        _ = try s2.receive(Self.data(1, at: 0, 10))
        #expect(Self.outcome(&s2, Self.data(1, at: 10, 1)) == "size_mismatch")
        var s3 = try Self.accepted()
        _ = try s3.receive(Self.start(2))  // empty item
        #expect(Self.outcome(&s3, Self.data(2, at: 0, 1)) == "size_mismatch")
        #expect(Self.outcome(&s3, Self.end(2)) == "ok")
    }

    @Test func itemEndTooEarly() throws {
        var s = try Self.midItem()
        #expect(Self.outcome(&s, Self.end(0)) == "size_mismatch")
        var s2 = try Self.accepted()
        _ = try s2.receive(Self.start(1))
        _ = try s2.receive(Self.data(1, at: 0, 9))
        #expect(Self.outcome(&s2, Self.end(1)) == "size_mismatch")
    }

    @Test func itemEndForAnotherItemOrOffer() throws {
        var s = try Self.accepted()
        #expect(Self.outcome(&s, Self.end(0)) == "protocol_violation")  // nothing started
        var s2 = try Self.midItem()
        #expect(Self.outcome(&s2, Self.end(1)) == "protocol_violation")
        var s3 = try Self.accepted()
        _ = try s3.receive(Self.start(2))
        #expect(Self.outcome(&s3, Self.end(2, offer: S.uuid(5))) == "protocol_violation")
    }

    @Test func doneInTheMiddleOfAnItem() throws {
        var s = try Self.midItem()
        #expect(Self.outcome(&s, Self.done) == "protocol_violation")
        var s2 = try Self.accepted()
        _ = try s2.receive(Self.start(2))  // started, not ended
        #expect(Self.outcome(&s2, Self.done) == "protocol_violation")
        var s3 = try Self.accepted()
        #expect(Self.outcome(&s3, .done(Done(offer: S.uuid(5)))) == "protocol_violation")
    }

    /// DONE with no item in progress ends the session even if some offered items were never
    /// sent (the sender may skip items it could no longer read).
    @Test func doneWithItemsNeverSent() throws {
        var s = try Self.accepted()
        _ = try s.receive(Self.start(2))
        _ = try s.receive(Self.end(2))
        // Items 0 and 1 were offered but never sent: DONE is refused.
        #expect(Self.outcome(&s, Self.done) == "protocol_violation")
    }

    @Test func itemStartTwice() throws {
        var s = try Self.accepted()
        _ = try s.receive(Self.start(1))
        _ = try s.receive(Self.data(1, at: 0, 10))
        _ = try s.receive(Self.end(1))
        #expect(Self.outcome(&s, Self.start(1)) == "protocol_violation")  // already sent
        var s2 = try Self.midItem()
        #expect(Self.outcome(&s2, Self.start(0)) == "protocol_violation")  // in progress
        var s3 = try Self.midItem()
        #expect(Self.outcome(&s3, Self.start(1)) == "protocol_violation")  // another before this one ended
    }

    @Test func itemStartChecks() throws {
        var s = try Self.accepted()
        #expect(Self.outcome(&s, Self.start(3)) == "protocol_violation")  // no such item
        #expect(Self.outcome(&s, Self.start(-1)) == "protocol_violation")
        #expect(Self.outcome(&s, Self.start(Int.max)) == "protocol_violation")
        #expect(Self.outcome(&s, Self.start(0, offer: S.uuid(5))) == "unknown_offer")
        #expect(Self.outcome(&s, Self.start(0, size: 149_999)) == "size_mismatch")
        #expect(Self.outcome(&s, Self.start(0, offset: 10)) == "protocol_violation")  // no resume offered
        // None of those started anything: item 0 can still start.
        #expect(Self.outcome(&s, Self.start(0)) == "ok")
    }

    @Test func receiverOnlyMessagesFromThePeer() throws {
        var s = try Self.accepted()
        #expect(Self.outcome(&s, .decision(Decision(offer: Self.id, decision: .accepted))) == "protocol_violation")
        var s2 = try Self.accepted()
        #expect(
            Self.outcome(&s2, .itemResult(ItemResult(offer: Self.id, item: 0, status: .imported)))
                == "protocol_violation")
    }

    // MARK: any state

    static func sessions() throws -> [(String, ReceiverSession)] {
        var pending = ReceiverSession()
        _ = try pending.receive(.offer(offer))
        var finished = pending
        _ = finished.decide(.rejected)
        return [
            ("awaitingOffer", ReceiverSession()), ("awaitingDecision", pending), ("receiving", try accepted()),
            ("mid-item", try midItem()), ("finished", finished),
        ]
    }

    @Test func pingIsAnsweredInEveryState() throws {
        for (name, var s) in try Self.sessions() {
            let before = s.state
            #expect(try s.receive(.ping) == .reply(.pong), "\(name)")
            #expect(try s.receive(.pong) == ReceiverAction.none, "\(name)")
            #expect(s.state == before)
        }
    }

    @Test func errorEndsEveryState() throws {
        let body = ErrorBody(code: .cancelled, message: "user cancelled", offer: Self.id)
        for (name, var s) in try Self.sessions() {
            #expect(try s.receive(.error(body)) == .peerFailed(body), "\(name)")
            #expect(s.state == .finished)
            #expect(Self.outcome(&s, Self.start(0)) == "protocol_violation")
        }
    }

    /// Bytes to actions: the sender's messages framed, split at random, parsed, decoded and fed
    /// to the session.
    @Test func fromTheByteStream() throws {
        var stream: [UInt8] = []
        var sent = [WireMessage.offer(Self.offer)]
        for i in 0..<3 { sent += [Self.start(i)] + Self.pieces(i) + [Self.end(i)] }
        sent.append(Self.done)
        for m in sent { stream += try Framing.frame(try m.encoded()) }

        var rng = S.RNG(7)
        var parser = FrameParser()
        var s = ReceiverSession()
        var actions: [ReceiverAction] = []
        var i = 0
        while i < stream.count {
            let n = min(stream.count - i, Int.random(in: 1...9000, using: &rng))
            parser.append(stream[i..<i + n])
            i += n
            while let frame = try parser.next() {
                actions.append(try s.receive(try WireMessage.decode(frame)))
                if case .offerReceived = actions.last { _ = s.decide(.accepted) }
            }
        }
        #expect(actions.count == sent.count)
        #expect(actions.first.map { if case .offerReceived = $0 { true } else { false } } == true)
        #expect(actions.last == .senderDone)
        let bytes = actions.reduce(0) { if case .itemData(let d) = $1 { $0 + d.data.count } else { $0 } }
        #expect(Int64(bytes) == Self.sizes.reduce(0, +))
    }
}
