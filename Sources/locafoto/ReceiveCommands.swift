import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoWire

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
    @Argument(help: "Offer ids (or unique prefixes, 4+ characters).", completion: Completions.pendingOffers) var offers: [String] = []
    @Flag(help: "Accept every offer waiting for a decision.") var all = false
    @Flag(help: "Return once the offers are accepted, without waiting for the photos.") var noWait = false

    func validate() throws {
        guard all != !offers.isEmpty else {
            throw ValidationError(all ? "give offer ids or --all, not both" : "name the offers to accept (ids from `locafoto inbox`), or give --all")
        }
    }

    func run() throws {
        try guarded {
            var ids = offers
            if all {
                var pending: [InboxOffer] = []
                try global.pages("/v1/inbox", ["items": "0"], as: InboxOffer.self) { page, _ in pending += page.filter { $0.state == "pending" } }
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
            if global.json { follow.printJSON(single: !all && offers.count == 1) }
            if let first = failures.first {
                throw ExitCode(first.exitCode)
            }
            if follow.failed { throw ExitCode(ExitStatus.failed) }
        }
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
            !["accepted", "interrupted"].contains(o.state) || !["completed", "interrupted", nil].contains(o.outcome) || !o.failed.isEmpty
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
                    if !json { print("\(e.state == "queued" ? "queued  " : "imported")  \(name)") }
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
            return "\(String((e.offer ?? "").prefix(8))) from \(from): \(e.message ?? "done") in \(Format.duration(elapsed))\(average)"
        case "interrupted":
            return "\(String((e.offer ?? "").prefix(8))) from \(from): interrupted; the photos resume when \(from) reconnects"
        default:
            return "\(String((e.offer ?? "").prefix(8))) from \(from): \(e.state ?? "failed")\(e.message.map { ": \($0)" } ?? "")"
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
        try guarded { try InboxWatch(global: global).run() }
    }
}

/// Watches the inbox: offers waiting now and every new one are asked about on the terminal,
/// `Accept 12 photos (38.0 MiB) from bob [GJOFGBI]? [y/N]`; an accepted offer's photos are
/// followed until imported. With --json, events are printed as JSON lines and nothing is asked.
struct InboxWatch {
    static let discussion = """
        Offers waiting now and each one that arrives are shown with the sender's name and fingerprint, \
        the number of photos and their size, and a question: y accepts and follows the photos until \
        they are imported, anything else rejects. When standard input ends, the command keeps \
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
        var asking = true
        var watched: Set<String> = []
        var pending: [InboxOffer] = []
        try global.pages("/v1/inbox", ["items": "0"], as: InboxOffer.self) { page, _ in pending += page.filter { $0.state == "pending" } }
        print(pending.isEmpty ? "Waiting for offers (Ctrl-C to stop)…" : "\(pending.count) offer(s) wait for a decision; new ones will be shown as they arrive (Ctrl-C to stop).")
        for o in pending {
            ask(id: o.id, count: o.itemCount, size: o.totalBytes, name: o.sender.name, fingerprint: o.sender.fingerprint,
                asking: &asking, watched: &watched)
        }
        fflush(nil)
        while let e = try events.next() {
            guard let id = e.offer else { continue }
            let short = String(id.prefix(8))
            switch e.kind {
            case .offerReceived where e.state == "pending":
                ask(id: id, count: e.items ?? 0, size: e.totalBytes ?? 0, name: e.peer?.name ?? "?", fingerprint: e.peer?.fingerprint ?? "",
                    asking: &asking, watched: &watched)
            case .offerReceived:
                watched.insert(id)
                print("\(short): receiving \(Self.photos(e.items ?? 0)) (\(Format.bytes(e.totalBytes ?? 0))) from \(e.peer?.name ?? "?") (trusted)")
            case .itemImported where watched.contains(id):
                print("\(short): \(e.state ?? "imported") \(e.name ?? "")")
            case .offerFinished where watched.contains(id):
                watched.remove(id)
                print("\(short): \(e.state ?? "ended")\(e.message.map { " (\($0))" } ?? "")")
            case .offerDecided where !watched.contains(id) && e.state != "accepted":
                print("\(short): \(e.state ?? "decided")\(e.message.map { " (\($0))" } ?? "")")
            default:
                break
            }
            fflush(nil)
        }
        print("The agent stopped; no more offers will arrive.")
    }

    static func photos(_ n: Int) -> String { n == 1 ? "1 photo" : "\(n) photos" }

    /// Asks about one offer and answers the agent; after stdin ends, only lists it.
    private func ask(id: String, count: Int, size: Int64, name: String, fingerprint: String, asking: inout Bool, watched: inout Set<String>) {
        let short = String(id.prefix(8))
        let group = fingerprint.split(separator: "-").first.map(String.init) ?? fingerprint
        let question = "Accept \(Self.photos(count)) (\(Format.bytes(size))) from \(name) [\(group)]?"
        guard asking else {
            print("\(short): \(question) (waiting; `locafoto accept \(short)`)")
            return
        }
        print("\(short): \(question) [y/N] ", terminator: "")
        fflush(nil)
        guard let answer = readLine() else {
            asking = false
            print("\n(standard input ended: offers stay in the inbox from now on)")
            return
        }
        let yes = ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        do {
            let r = try global.fetch(OfferDecision.self, "/v1/inbox/\(id)/\(yes ? "accept" : "reject")", method: "POST").value
            print("\(short): \(r.message)")
            if yes { watched.insert(id) }
        } catch {
            print("\(short): \(error)")
        }
    }
}
