import LocafotoWire
import Testing

@Suite("COLLECT at a relay: the collector's session and the relay's first message")
struct CollectSessionTests {
    static func code(_ s: inout CollectSession, _ m: WireMessage) -> WireErrorCode? {
        WireTestSupport.code { _ = try s.receive(m) }
    }

    @Test("COLLECT offers is answered by QUEUE, pings on the way; then the session is a receiver's")
    func offers() throws {
        var s = CollectSession(want: .offers)
        #expect(s.request == .collect(Collect(want: .offers)))
        #expect(try s.receive(.ping) == .reply(.pong))
        #expect(try s.receive(.pong) == CollectAction.none)
        #expect(s.state == .awaitingAnswer)
        #expect(try s.receive(.queue(Queue(offers: 3))) == .queue(3))
        #expect(s.state == .answered)
        // A second answer is out of turn.
        #expect(Self.code(&s, .queue(Queue(offers: 1))) == .protocolViolation)
    }

    @Test("COLLECT receipts is answered by RECEIPTS, which says whether more wait")
    func receipts() throws {
        var s = CollectSession(want: .receipts)
        #expect(s.request == .collect(Collect(want: .receipts)))
        let answer = Receipts(receipts: [], more: true)
        #expect(try s.receive(.receipts(answer)) == .receipts(answer))
        #expect(s.state == .answered)
        #expect(Self.code(&s, .receipts(answer)) == .protocolViolation)
    }

    @Test("the other answer, or any other message, is a protocol violation naming what came")
    func wrongAnswers() {
        var offers = CollectSession(want: .offers)
        #expect(Self.code(&offers, .receipts(Receipts(receipts: [], more: false))) == .protocolViolation)
        var receipts = CollectSession(want: .receipts)
        #expect(Self.code(&receipts, .queue(Queue(offers: 0))) == .protocolViolation)
        var done = CollectSession(want: .receipts)
        do {
            _ = try done.receive(.done(Done(offer: "x")))
            Issue.record("DONE was taken for an answer")
        } catch let e as WireError {
            #expect(e.message == "the relay answered COLLECT receipts with DONE, not RECEIPTS")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("an ERROR instead of the answer ends the session and is reported")
    func error() throws {
        var s = CollectSession(want: .offers)
        let e = ErrorBody(code: .rateLimited, message: "slow down", offer: nil)
        #expect(try s.receive(.error(e)) == .peerFailed(e))
        #expect(s.state == .answered)
    }

    @Test("a relay tells a deposit, a collection of offers or of receipts by the first message")
    func relayRequests() throws {
        #expect(try RelayRequest(first: .collect(Collect(want: .offers))) == .offers)
        #expect(try RelayRequest(first: .collect(Collect(want: .receipts))) == .receipts)
        let e = ErrorBody(code: .cancelled, message: "bye", offer: nil)
        #expect(try RelayRequest(first: .error(e)) == .peerFailed(e))
        for first: WireMessage in [.done(Done(offer: "x")), .queue(Queue(offers: 1)), .pong] {
            #expect(throws: WireError.self) { try RelayRequest(first: first) }
        }
    }

    @Test("message kinds are named as protocol/messages.md names them")
    func kindNames() {
        #expect(WireMessage.Kind.itemStart.name == "ITEM_START")
        #expect(WireMessage.Kind.collect.name == "COLLECT")
        #expect(WireMessage.Kind.itemResult.name == "ITEM_RESULT")
    }
}
