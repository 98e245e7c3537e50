import LocafotoWire
import Testing

@Suite("Sender session state machine")
struct SenderSessionTests {
    static let id = WireTestSupport.offerID
    /// Item 0: 150,000 bytes, item 1: 10 bytes, item 2: empty.
    static let sizes: [Int64] = [150_000, 10, 0]

    static func session(statuses: Set<ItemStatus> = [.imported, .queued, .failed]) -> SenderSession {
        SenderSession(offer: id, itemSizes: sizes, resultStatuses: statuses)
    }

    static func decision(
        _ kind: DecisionKind, offer: String = id, resume: [ResumePoint]? = nil, completed: [CompletedItem]? = nil
    ) -> WireMessage {
        .decision(Decision(offer: offer, decision: kind, resume: resume, completed: completed))
    }

    static func result(_ i: Int, _ status: ItemStatus = .imported, offer: String = id) -> WireMessage {
        .itemResult(ItemResult(offer: offer, item: i, status: status))
    }

    static func violation(_ s: inout SenderSession, _ m: WireMessage) -> WireErrorCode? {
        WireTestSupport.code { _ = try s.receive(m) }
    }

    @Test func acceptedThenEveryResultFinishes() throws {
        var s = Self.session()
        #expect(try s.receive(.ping) == .reply(.pong))
        #expect(try s.receive(.pong) == SenderAction.none)
        #expect(s.state == .awaitingDecision)
        #expect(
            try s.receive(Self.decision(.accepted))
                == .send([.init(item: 0, offset: 0), .init(item: 1, offset: 0), .init(item: 2, offset: 0)]))
        #expect(s.state == .sending)
        // Results in any order; PINGs in between.
        #expect(try s.receive(Self.result(1)) == .result(ItemResult(offer: Self.id, item: 1, status: .imported)))
        #expect(try s.receive(.ping) == .reply(.pong))
        _ = try s.receive(Self.result(0, .failed))
        #expect(s.state == .sending)
        _ = try s.receive(Self.result(2, .queued))
        #expect(s.state == .finished)
        #expect(s.results.mapValues(\.status) == [0: .failed, 1: .imported, 2: .queued])
    }

    @Test func resumeAndCompletedShapeWhatIsSent() throws {
        var s = Self.session()
        let action = try s.receive(
            Self.decision(
                .accepted, resume: [ResumePoint(item: 0, offset: 65_536)],
                completed: [CompletedItem(item: 1, status: .imported)]))
        #expect(action == .send([.init(item: 0, offset: 65_536), .init(item: 2, offset: 0)]))
        #expect(s.streamed == [0, 2])
        // A result for the completed item is not due in this session.
        var late = s
        #expect(Self.violation(&late, Self.result(1)) == .protocolViolation)
        _ = try s.receive(Self.result(0))
        _ = try s.receive(Self.result(2))
        #expect(s.state == .finished)
    }

    @Test(
        "an item re-keyed since the last session (its file changed) is sent from 0 despite the receiver's resume offset"
    )
    func restartingItemIgnoresItsResumeOffset() throws {
        var s = SenderSession(offer: Self.id, itemSizes: [150_000, 100_000], restarting: [1])
        let action = try s.receive(
            Self.decision(
                .accepted, resume: [ResumePoint(item: 0, offset: 65_536), ResumePoint(item: 1, offset: 65_536)]))
        #expect(action == .send([.init(item: 0, offset: 65_536), .init(item: 1, offset: 0)]))
    }

    @Test func everythingCompletedFinishesAtOnce() throws {
        var s = Self.session()
        let all = (0..<3).map { CompletedItem(item: $0, status: .imported) }
        #expect(try s.receive(Self.decision(.accepted, completed: all)) == .send([]))
        #expect(s.state == .finished)
    }

    @Test func rejectedAndExpiredEndTheSession() throws {
        for kind in [DecisionKind.rejected, .expired] {
            var s = Self.session()
            guard case .declined(let d) = try s.receive(Self.decision(kind)) else {
                Issue.record("\(kind) was not reported as declined")
                continue
            }
            #expect(d.decision == kind)
            #expect(s.state == .finished)
            #expect(Self.violation(&s, Self.result(0)) == .protocolViolation)
        }
    }

    @Test func errorFromThePeerEndsTheSessionInAnyState() throws {
        let error = WireMessage.error(ErrorBody(code: .storageFailed, message: "disk full"))
        var waiting = Self.session()
        #expect(try waiting.receive(error) == .peerFailed(ErrorBody(code: .storageFailed, message: "disk full")))
        #expect(waiting.state == .finished)
        var sending = Self.session()
        _ = try sending.receive(Self.decision(.accepted))
        #expect(try sending.receive(error) == .peerFailed(ErrorBody(code: .storageFailed, message: "disk full")))
        #expect(sending.state == .finished)
    }

    @Test func cancellingTellsThePeerOnceAndEndsTheSession() throws {
        let cancelled = WireMessage.error(
            ErrorBody(code: .cancelled, message: "the sender cancelled the transfer", offer: Self.id))
        var waiting = Self.session()
        #expect(waiting.cancel() == cancelled)
        #expect(waiting.state == .finished)
        #expect(waiting.cancel() == nil, "nothing more to send once over")
        #expect(
            Self.violation(&waiting, Self.decision(.accepted)) == .protocolViolation,
            "a DECISION after the cancel is out of order")
        var sending = Self.session()
        _ = try sending.receive(Self.decision(.accepted))
        _ = try sending.receive(Self.result(1))
        #expect(sending.cancel() == cancelled)
        #expect(Self.violation(&sending, Self.result(0)) == .protocolViolation)
        // The receiver stops the transfer: its ERROR ends the session like any other.
        var stopped = Self.session()
        _ = try stopped.receive(Self.decision(.accepted))
        let body = ErrorBody(code: .cancelled, message: "the recipient stopped the transfer", offer: Self.id)
        #expect(try stopped.receive(.error(body)) == .peerFailed(body))
        #expect(stopped.state == .finished)
        #expect(stopped.cancel() == nil)
    }

    @Test func hostileDecisionsAndResultsAreRefused() throws {
        // A DECISION for another offer, one that resumes outside an item, one listing an item twice.
        var s = Self.session()
        #expect(Self.violation(&s, Self.decision(.accepted, offer: WireTestSupport.uuid(9))) == .unknownOffer)
        s = Self.session()
        #expect(
            Self.violation(&s, Self.decision(.accepted, resume: [ResumePoint(item: 0, offset: 150_000)]))
                == .protocolViolation)
        s = Self.session()
        #expect(
            Self.violation(&s, Self.decision(.accepted, resume: [ResumePoint(item: 7, offset: 1)]))
                == .protocolViolation)
        s = Self.session()
        #expect(
            Self.violation(
                &s,
                Self.decision(
                    .accepted, resume: [ResumePoint(item: 0, offset: 5)],
                    completed: [CompletedItem(item: 0, status: .imported)]))
                == .protocolViolation)
        // Results before the decision, twice for one item, for another offer, for an unknown item.
        s = Self.session()
        #expect(Self.violation(&s, Self.result(0)) == .protocolViolation)
        _ = try s.receive(Self.decision(.accepted))
        #expect(Self.violation(&s, Self.decision(.accepted)) == .protocolViolation, "a second DECISION")
        var twice = s
        _ = try twice.receive(Self.result(0))
        #expect(Self.violation(&twice, Self.result(0)) == .protocolViolation)
        var other = s
        #expect(Self.violation(&other, Self.result(0, offer: WireTestSupport.uuid(9))) == .unknownOffer)
        var unknown = s
        #expect(Self.violation(&unknown, Self.result(3)) == .protocolViolation)
        // A recipient never reports `held`; a relay taking a deposit never reports `imported`.
        var held = s
        #expect(Self.violation(&held, Self.result(0, .held)) == .protocolViolation)
        var deposit = Self.session(statuses: [.held, .failed])
        _ = try deposit.receive(Self.decision(.accepted))
        #expect(Self.violation(&deposit, Self.result(0, .imported)) == .protocolViolation)
        _ = try deposit.receive(Self.result(0, .held))
        // Messages only a sender sends.
        for m in [
            WireMessage.done(Done(offer: Self.id)),
            .itemEnd(ItemEnd(offer: Self.id, item: 0, authTag: Array(0..<16), signature: Array(0..<64))),
        ] {
            var copy = deposit
            #expect(Self.violation(&copy, m) == .protocolViolation)
        }
    }
}
