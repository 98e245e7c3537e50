import Foundation

/// The questions `locafoto receive` asks, one offer at a time, as a state machine: offers
/// arriving or ending elsewhere (the web app, `accept` in another terminal, the sender
/// cancelling) and the user's answers go in, what to show and to do comes out. No I/O, so
/// every order of those events is tested without a terminal.
///
/// - An empty or unclear answer asks again: nothing is decided for the user by a stray Enter.
/// - An offer that ends while its question is shown loses its question (it is said why), and
///   the next waiting offer is asked about.
/// - Once standard input ends, offers are listed, not asked about.
public struct OfferPrompts: Sendable {
    public struct Offer: Sendable, Equatable {
        public var id: String
        /// `Accept 12 photos (38.0 MiB) from bob [GJOFGBI]?`
        public var question: String
        public init(id: String, question: String) {
            self.id = id
            self.question = question
        }
    }

    public enum Action: Sendable, Equatable {
        /// Show the question and wait for an answer.
        case ask(Offer)
        /// The answer was neither yes nor no: say so and show the question again.
        case askAgain(Offer, said: String)
        /// Tell the agent the user's decision.
        case decide(id: String, accept: Bool)
        /// The offer in question (or waiting to be asked) ended elsewhere: drop its question.
        case dropped(id: String, why: String)
        /// Standard input has ended: offers stay in the inbox from now on.
        case stopAsking
        /// List an offer without asking (after standard input ended).
        case list(Offer)
    }

    public private(set) var current: Offer?
    public private(set) var waiting: [Offer] = []
    public private(set) var asking = true

    public init() {}

    /// An offer waits for a decision.
    public mutating func arrived(_ offer: Offer) -> [Action] {
        guard current?.id != offer.id, !waiting.contains(where: { $0.id == offer.id }) else { return [] }
        guard asking else { return [.list(offer)] }
        guard current == nil else {
            waiting.append(offer)
            return []
        }
        current = offer
        return [.ask(offer)]
    }

    /// The offer was decided or ended without this prompt's answer.
    public mutating func ended(id: String, why: String) -> [Action] {
        if let i = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: i)
            return []
        }
        guard current?.id == id else { return [] }
        current = nil
        return [.dropped(id: id, why: why)] + next()
    }

    /// A line the user typed.
    public mutating func answered(_ line: String) -> [Action] {
        guard let offer = current else { return [] }
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "y", "yes":
            current = nil
            return [.decide(id: offer.id, accept: true)] + next()
        case "n", "no":
            current = nil
            return [.decide(id: offer.id, accept: false)] + next()
        case "":
            return [.askAgain(offer, said: "Answer y to accept or n to reject.")]
        default:
            return [.askAgain(offer, said: "'\(line.prefix(20))' is neither y nor n.")]
        }
    }

    /// Standard input ended: the question shown and those waiting are left to the inbox.
    public mutating func inputEnded() -> [Action] {
        guard asking else { return [] }
        asking = false
        let left = waiting
        waiting = []
        current = nil
        return [.stopAsking] + left.map(Action.list)
    }

    private mutating func next() -> [Action] {
        guard !waiting.isEmpty else { return [] }
        let offer = waiting.removeFirst()
        current = offer
        return [.ask(offer)]
    }
}
