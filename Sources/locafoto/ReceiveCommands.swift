import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoWire
import Synchronization

struct AcceptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept", abstract: "Accept offers: the photos are received and imported.",
        discussion: """
            `locafoto accept ID...` accepts one or more offers (a unique prefix of 4+ characters is \
            enough); `--all` accepts every offer waiting for a decision. It then waits until the photos \
            are imported, with a progress line on a terminal (`--no-wait` returns at once). An offer \
            whose sender went away is accepted all the same: its photos arrive when the sender comes back.

            Exit status: 0 when every accepted photo was imported (or waits for the vault to be \
            unlocked); 1 when an item failed or the transfer ended otherwise; an offer that cannot be \
            accepted gives its own status (66 not found, 1 already decided, …: `locafoto --help`).
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Offer ids (or unique prefixes, 4+ characters).", completion: Completions.pendingOffers) var offers:
        [String] = []
    @Flag(help: "Accept every offer waiting for a decision.") var all = false
    @Flag(help: "Return once the offers are accepted, without waiting for the photos.") var noWait = false

    func validate() throws {
        guard all != !offers.isEmpty else {
            throw ValidationError(
                all
                    ? "give offer ids or --all, not both"
                    : "name the offers to accept (ids from `locafoto inbox`), or give --all")
        }
    }

    func run() throws {
        var ids = offers
        if all {
            var pending: [InboxOffer] = []
            try global.pages("/v1/inbox", ["items": "0"], as: InboxOffer.self) { page, _ in
                pending += page.filter { $0.state == "pending" }
            }
            ids = pending.map(\.id)
            if ids.isEmpty {
                if global.json { return printRawJSON("{\"offers\": []}") }
                return print("No offer waits for a decision.")
            }
        }
        // Subscribed before accepting: nothing the transfer does can be missed.
        let events = noWait ? nil : try global.client.events(kinds: ["offer", "item"])
        defer { events?.close() }
        var follow = ReceiveProgress(json: global.json)
        var failures: [CLIError] = []
        // With --json one document is printed at the end, refusals included.
        var quiet = global
        quiet.json = false
        for id in ids {
            do {
                let outcome = try quiet.fetch(OfferDecision.self, "/v1/inbox/\(id)/accept", method: "POST").value
                if !global.json { print(outcome.message) }
                // Accepted while its sender is away (`interrupted`): the photos arrive when it
                // reconnects, and nothing is waited for now.
                follow.record(outcome, waiting: events != nil && outcome.state == "accepted")
            } catch let e as CLIError {
                if !global.json { writeStderr("locafoto: \(e.description)\n") }
                failures.append(e)
                follow.recordFailure(id, e.description)
            }
        }
        if let events { try follow.run(events) }
        let status = failures.first?.exitCode ?? (follow.failed ? ExitStatus.failed : ExitStatus.ok)
        if global.json {
            if status == ExitStatus.ok {
                follow.printJSON(single: !all && offers.count == 1)
            } else {
                // The one error shape, the offers as they ended beside it.
                let message = failures.first?.description ?? follow.failureMessage
                let (key, value) = follow.detail(single: !all && offers.count == 1)
                printJSONError(code: ExitStatus.code(for: status), message: message, detail: (key, value))
            }
        }
        if status != ExitStatus.ok { throw ExitCode(status) }
    }
}

/// Follows accepted offers on the event stream until each has ended: a progress line on a
/// terminal, a line per imported photo, a summary per offer.
struct ReceiveProgress {
    /// One accepted offer, as `accept --json` prints it: the decision (`offer`, `state`,
    /// `message`, as the agent answered it) and, after waiting, `outcome` (the offer's state at
    /// the end: completed, failed, interrupted, cancelled) with the names imported and failed.
    struct Offer: Encodable {
        var offer: String
        var state: String
        var message: String?
        var outcome: String?
        var outcomeMessage: String?
        var imported: [String] = []
        var failed: [String] = []
        var bytes: Int64 = 0
        var totalBytes: Int64 = 0
    }
    let json: Bool
    private(set) var offers: [String: Offer] = [:]
    private var order: [String] = []
    private var rate: Double?
    private var open: Set<String> = []
    private let started = Date()
    private let bar = isatty(STDERR_FILENO) == 1

    init(json: Bool) {
        self.json = json
    }

    var failed: Bool {
        offers.values.contains { o in
            !["accepted", "interrupted"].contains(o.state) || !["completed", "interrupted", nil].contains(o.outcome)
                || !o.failed.isEmpty
        }
    }

    mutating func record(_ outcome: OfferDecision, waiting: Bool) {
        order.append(outcome.offer)
        offers[outcome.offer] = Offer(offer: outcome.offer, state: outcome.state, message: outcome.message)
        if waiting { open.insert(outcome.offer) }
    }

    mutating func recordFailure(_ id: String, _ message: String) {
        order.append(id)
        offers[id] = Offer(offer: id, state: "failed", message: message)
    }

    /// Reads events until every watched offer has ended (or the agent stops).
    mutating func run(_ events: EventReader) throws {
        while !open.isEmpty, let e = try events.next() {
            guard let id = e.offer, open.contains(id) else { continue }
            switch e.kind {
            case .itemProgress:
                offers[id]?.bytes = e.bytes ?? 0
                offers[id]?.totalBytes = e.totalBytes ?? 0
                if let r = e.bytesPerSecond { rate = r }
                drawBar()
            case .itemImported:
                let name = e.name ?? "item \((e.item ?? 0) + 1)"
                if e.state == "failed" {
                    offers[id]?.failed.append(name)
                    clearBar()
                    if !json { print("failed    \(name)\(e.message.map { ": \($0)" } ?? "")") }
                } else {
                    offers[id]?.imported.append(name)
                    clearBar()
                    if !json {
                        switch e.state {
                        case "queued": print("queued    \(name)")
                        case "duplicate": print("skipped   \(name) (already in the vault)")
                        default: print("imported  \(name)")
                        }
                    }
                }
            case .offerFinished:
                offers[id]?.outcome = e.state ?? "failed"
                offers[id]?.outcomeMessage = e.message
                open.remove(id)
                clearBar()
                if !json { print(summary(e)) }
            default:
                break
            }
        }
        clearBar()
        if !open.isEmpty, !json {
            writeStderr("locafoto: the agent stopped before the photos arrived; they resume when it runs again\n")
        }
    }

    private func summary(_ e: ControlEvent) -> String {
        let from = e.peer?.name ?? "the sender"
        let elapsed = Date().timeIntervalSince(started)
        switch e.state {
        case "completed":
            let size = e.totalBytes ?? 0
            let average = elapsed > 0 ? " (\(Format.bytes(Int64(Double(size) / elapsed)))/s)" : ""
            return
                "\(String((e.offer ?? "").prefix(8))) from \(from): \(e.message ?? "done") in \(Format.duration(elapsed))\(average)"
        case "interrupted":
            return
                "\(String((e.offer ?? "").prefix(8))) from \(from): interrupted; the photos resume when \(from) reconnects"
        default:
            return
                "\(String((e.offer ?? "").prefix(8))) from \(from): \(e.state ?? "failed")\(e.message.map { ": \($0)" } ?? "")"
        }
    }

    private func drawBar() {
        guard bar, !json else { return }
        let bytes = open.reduce(Int64(0)) { $0 + (offers[$1]?.bytes ?? 0) }
        let size = open.reduce(Int64(0)) { $0 + (offers[$1]?.totalBytes ?? 0) }
        writeStatusLine(Format.progress(bytes: bytes, of: size, rate: rate))
    }

    private func clearBar() {
        guard bar, !json else { return }
        clearStatusLine()
    }

    /// One offer named: its object; several or `--all`: `{"offers": [...]}` (as `send` does
    /// with one peer or several).
    func printJSON(single: Bool) {
        struct Several: Encodable { var offers: [Offer] }
        let list = order.compactMap { offers[$0] }
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = single && list.count == 1 ? try? e.encode(list[0]) : try? e.encode(Several(offers: list))
        if let data { printRawJSON(String(decoding: data, as: UTF8.self)) }
    }

    /// What a failed `accept --json` puts beside its error: the offer, or the offers.
    func detail(single: Bool) -> (String, any Encodable) {
        let list = order.compactMap { offers[$0] }
        return single && list.count == 1 ? ("offer", list[0]) : ("offers", list)
    }

    /// Why the accepted offers did not all end imported, in one line.
    var failureMessage: String {
        order.compactMap { offers[$0] }.compactMap { o -> String? in
            let id = String(o.offer.prefix(8))
            if !o.failed.isEmpty { return "\(id): \(o.failed.count) photo(s) failed" }
            if let outcome = o.outcome, !["completed", "interrupted"].contains(outcome) {
                return "\(id): \(o.outcomeMessage ?? outcome)"
            }
            if !["accepted", "interrupted"].contains(o.state) { return "\(id): \(o.message ?? o.state)" }
            return nil
        }.joined(separator: "; ")
    }
}

extension Format {
    /// `[#####·····]  12.3 MiB / 38.0 MiB  4.2 MiB/s  ETA 6s`
    /// `[#####···············]` for a fraction 0...1.
    static func bar(_ fraction: Double, width: Int = 20) -> String {
        let filled = Int(min(1, max(0, fraction)) * Double(width))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled) + "]"
    }

    static func progress(bytes: Int64, of size: Int64, rate: Double?) -> String {
        var line = bar(size > 0 ? Double(bytes) / Double(size) : 0)
        line += "  \(Self.bytes(bytes)) / \(Self.bytes(size))"
        if let rate, rate > 0 {
            line += "  \(Self.bytes(Int64(rate)))/s"
            if size > bytes { line += "  ETA \(duration(Double(size - bytes) / rate))" }
        }
        return line
    }

    /// 42s, 3m05s, 1h02m.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return seconds < 10 ? String(format: "%.1fs", seconds) : "\(s)s" }
        if s < 3600 { return String(format: "%dm%02ds", s / 60, s % 60) }
        return String(format: "%dh%02dm", s / 3600, (s % 3600) / 60)
    }
}

/// `locafoto receive` (= `inbox --watch`): waits for offers and asks about each.
struct ReceiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive", abstract: "Wait for offers and answer each (the same as `inbox --watch`).",
        discussion: InboxWatch.discussion)
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try InboxWatch(global: global).run()
    }
}

/// Watches the inbox: offers waiting now and every new one are asked about on the terminal,
/// `Accept 12 photos (38.0 MiB) from bob [GJOFGBI]? [y/n]`; an accepted offer's photos are
/// followed until imported. With --json, events are printed as JSON lines and nothing is asked.
struct InboxWatch {
    static let discussion = """
        Offers waiting now and each one that arrives are shown with the sender's name and fingerprint, \
        the number of photos and their size, and a question: y accepts and follows the photos until \
        they are imported, n rejects; any other answer asks again. A question whose offer is decided \
        elsewhere (the web app, `locafoto accept`) or withdrawn by its sender goes away, and the next \
        offer is asked about. When standard input ends, the command keeps \
        listing offers without asking. Offers from trusted peers are accepted by the agent itself \
        and only reported. With --json every event about offers is printed as one JSON line \
        (protocol/control-api.md, "Events") and nothing is asked. Ctrl-C stops watching.
        """
    let global: GlobalOptions

    func run() throws {
        let events = try global.client.events(kinds: global.json ? ["offer", "item"] : ["offer", "item.imported"])
        defer { events.close() }
        if global.json {
            let e = JSONEncoder()
            e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            e.dateEncodingStrategy = .iso8601
            while let event = try events.next() {
                if let d = try? e.encode(event) { printRawJSON(String(decoding: d, as: UTF8.self)) }
                fflush(nil)
            }
            return
        }
        // Events and typed lines both come in through one queue: a question shown while its
        // offer is decided elsewhere is dropped at once, not after the next Enter. (Only stdout
        // is flushed from here on: fflush(NULL) would wait for stdin's lock, which the reading
        // thread holds while it waits for a line.)
        let inputs = WatchInputs()
        Thread.detachNewThread {
            do {
                while let e = try events.next() { inputs.push(.event(e)) }
                inputs.push(.streamEnded)
            } catch {
                inputs.push(.failed(error))
            }
        }
        Thread.detachNewThread {
            while let line = readLine() { inputs.push(.line(line)) }
            inputs.push(.inputEnded)
        }
        var prompts = OfferPrompts()
        var watched: Set<String> = []
        var promptShown = false
        var pending: [InboxOffer] = []
        try global.pages("/v1/inbox", ["items": "0"], as: InboxOffer.self) { page, _ in
            pending += page.filter { $0.state == "pending" }
        }
        print(
            pending.isEmpty
                ? "Waiting for offers (Ctrl-C to stop)…"
                : "\(pending.count) offer(s) wait for a decision; new ones will be shown as they arrive (Ctrl-C to stop)."
        )

        func perform(_ actions: [OfferPrompts.Action]) {
            for action in actions {
                switch action {
                case .ask(let o):
                    print("\(o.id.prefix(8)): \(o.question) [y/n] ", terminator: "")
                    promptShown = true
                case .askAgain(let o, let said):
                    print("\(said)\n\(o.id.prefix(8)): \(o.question) [y/n] ", terminator: "")
                    promptShown = true
                case .dropped(let id, let why):
                    print("\n\(id.prefix(8)): \(why); nothing to answer")
                    promptShown = false
                case .decide(let id, let accept):
                    promptShown = false
                    do {
                        let r = try global.fetch(
                            OfferDecision.self, "/v1/inbox/\(id)/\(accept ? "accept" : "reject")", method: "POST"
                        ).value
                        print("\(id.prefix(8)): \(r.message)")
                        if accept { watched.insert(id) }
                    } catch {
                        print("\(id.prefix(8)): \(error)")
                    }
                case .stopAsking:
                    print("\(promptShown ? "\n" : "")(standard input ended: offers stay in the inbox from now on)")
                    promptShown = false
                case .list(let o):
                    print("\(o.id.prefix(8)): \(o.question) (waiting; `locafoto accept \(o.id.prefix(8))`)")
                }
            }
            flushStandardOutput()
        }
        /// A line of its own while a question is shown: the question is shown again after it.
        func say(_ line: String) {
            if promptShown { print("") }
            print(line)
            if promptShown, let o = prompts.current { print("\(o.id.prefix(8)): \(o.question) [y/n] ", terminator: "") }
        }

        for o in pending {
            perform(
                prompts.arrived(
                    .init(
                        id: o.id,
                        question: Self.question(o.itemCount, o.totalBytes, o.sender.name, o.sender.fingerprint))))
        }
        flushStandardOutput()
        loop: while true {
            switch inputs.next() {
            case .line(let line): perform(prompts.answered(line))
            case .inputEnded: perform(prompts.inputEnded())
            case .streamEnded: break loop
            case .failed(let error): throw error
            case .event(let e):
                guard let id = e.offer else { continue }
                let short = String(id.prefix(8))
                switch e.kind {
                case .offerReceived where e.state == "pending":
                    let question = Self.question(
                        e.items ?? 0, e.totalBytes ?? 0, e.peer?.name ?? "?", e.peer?.fingerprint ?? "")
                    perform(prompts.arrived(.init(id: id, question: question)))
                case .offerReceived:
                    watched.insert(id)
                    say(
                        "\(short): receiving \(Self.photos(e.items ?? 0)) (\(Format.bytes(e.totalBytes ?? 0))) from \(e.peer?.name ?? "?") (trusted)"
                    )
                case .itemImported where watched.contains(id):
                    say(
                        "\(short): "
                            + (e.state == "duplicate"
                                ? "skipped \(e.name ?? "") (already in the vault)"
                                : "\(e.state ?? "imported") \(e.name ?? "")"))
                case .offerFinished where watched.contains(id):
                    watched.remove(id)
                    say("\(short): \(e.state ?? "ended")\(e.message.map { " (\($0))" } ?? "")")
                case .offerDecided, .offerFinished:
                    let how = e.state ?? "decided"
                    let why =
                        e.kind == .offerDecided
                        ? "\(how) elsewhere (the web app, a notification or another terminal)"
                        : "\(how)\(e.message.map { " (\($0))" } ?? "")"
                    let actions = prompts.ended(id: id, why: why)
                    if actions.isEmpty, e.kind == .offerDecided, !watched.contains(id), how != "accepted" {
                        say("\(short): \(how)\(e.message.map { " (\($0))" } ?? "")")
                    }
                    if e.kind == .offerDecided, how == "accepted", !actions.isEmpty { watched.insert(id) }
                    perform(actions)
                default:
                    break
                }
                flushStandardOutput()
            }
        }
        if promptShown { print("") }
        print("The agent stopped; no more offers will arrive.")
    }

    static func photos(_ n: Int) -> String { n == 1 ? "1 photo" : "\(n) photos" }

    /// `Accept 12 photos (38.0 MiB) from bob [GJOFGBI]?`
    static func question(_ count: Int, _ size: Int64, _ name: String, _ fingerprint: String) -> String {
        "Accept \(photos(count)) (\(Format.bytes(size))) from \(name) [\(SenderLabel.short(fingerprint))]?"
    }
}

/// What `receive` waits for: an event from the agent or a line typed, in arrival order.
private final class WatchInputs: @unchecked Sendable {
    enum Input {
        case event(ControlEvent)
        case line(String)
        case inputEnded, streamEnded
        case failed(any Error)
    }
    private let condition = NSCondition()
    private var queue: [Input] = []

    func push(_ input: Input) {
        condition.withLock {
            queue.append(input)
            condition.signal()
        }
    }

    func next() -> Input {
        condition.withLock {
            while queue.isEmpty { condition.wait() }
            return queue.removeFirst()
        }
    }
}
