// `locafoto receive`'s questions as a state machine: offers arriving and ending elsewhere, and
// the user's answers, in the orders a terminal sees them.
import LocafotoControl
import Testing

@Suite("receive's questions")
struct OfferPromptsTests {
    let a = OfferPrompts.Offer(id: "aaaa1111", question: "Accept 2 photos (1.0 MiB) from bob [GJOF]?")
    let b = OfferPrompts.Offer(id: "bbbb2222", question: "Accept 1 photo (3.0 MiB) from carol [KQ2X]?")

    @Test("an empty or unclear answer asks again; y and n decide")
    func answers() {
        var p = OfferPrompts()
        #expect(p.arrived(a) == [.ask(a)])
        #expect(p.answered("") == [.askAgain(a, said: "Answer y to accept or n to reject.")])
        #expect(p.answered("   ") == [.askAgain(a, said: "Answer y to accept or n to reject.")])
        #expect(p.answered("maybe") == [.askAgain(a, said: "'maybe' is neither y nor n.")])
        #expect(p.current == a, "still asking about the same offer")
        #expect(p.answered(" YES ") == [.decide(id: a.id, accept: true)])
        #expect(p.current == nil)
        #expect(p.arrived(b) == [.ask(b)])
        #expect(p.answered("n") == [.decide(id: b.id, accept: false)])
        #expect(p.answered("y") == [], "no question is shown: a line decides nothing")
    }

    @Test("offers arriving while one is asked about wait their turn, in order")
    func queue() {
        var p = OfferPrompts()
        #expect(p.arrived(a) == [.ask(a)])
        #expect(p.arrived(b) == [])
        #expect(p.arrived(a) == [], "the same offer told twice is asked once")
        #expect(p.answered("no") == [.decide(id: a.id, accept: false), .ask(b)])
        #expect(p.waiting.isEmpty)
    }

    @Test("an offer decided elsewhere drops its question and the next one is asked")
    func endedElsewhere() {
        var p = OfferPrompts()
        _ = p.arrived(a)
        _ = p.arrived(b)
        #expect(
            p.ended(id: a.id, why: "accepted in the web app") == [
                .dropped(id: a.id, why: "accepted in the web app"), .ask(b),
            ])
        #expect(p.answered("y") == [.decide(id: b.id, accept: true)], "the answer goes to the question shown")
        #expect(p.ended(id: b.id, why: "accepted") == [], "an offer this prompt decided is not dropped again")
    }

    @Test("a waiting offer that ends is never asked about")
    func waitingEnds() {
        var p = OfferPrompts()
        _ = p.arrived(a)
        _ = p.arrived(b)
        #expect(p.ended(id: b.id, why: "cancelled by carol") == [])
        #expect(p.answered("y") == [.decide(id: a.id, accept: true)])
        #expect(p.current == nil && p.waiting.isEmpty)
    }

    @Test("after standard input ends, offers are listed and nothing is decided")
    func inputEnds() {
        var p = OfferPrompts()
        _ = p.arrived(a)
        _ = p.arrived(b)
        #expect(p.inputEnded() == [.stopAsking, .list(b)])
        #expect(p.inputEnded() == [])
        let c = OfferPrompts.Offer(id: "cccc3333", question: "Accept 5 photos?")
        #expect(p.arrived(c) == [.list(c)])
        #expect(p.answered("y") == [])
        #expect(p.ended(id: a.id, why: "accepted") == [], "the question was left to the inbox already")
    }
}
