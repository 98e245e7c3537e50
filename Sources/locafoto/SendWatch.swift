import Foundation

/// Follows the transfers of one `send` until each has ended (or a relay holds it): one thread
/// per transfer long-polls the agent (it answers when the state changes, see
/// `GET /v1/transfers/{id}?after=N&wait=S`), and the calling thread shows what changed. On a
/// terminal, Ctrl-C asks whether to cancel; elsewhere it stops waiting and the agent carries on.
final class SendWatch: @unchecked Sendable {
    private let global: GlobalOptions
    private let ids: [String]
    private let tty: Bool
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var latest: [String: [String: Any]]
    private var failure: (any Error)?
    private var prompting = false
    private var changed = false

    init(global: GlobalOptions, started: [[String: Any]]) {
        self.global = global
        ids = started.map { $0["id"] as? String ?? "" }
        latest = Dictionary(uniqueKeysWithValues: started.map { ($0["id"] as? String ?? "", $0) })
        tty = isatty(STDERR_FILENO) == 1 && !global.json
    }

    /// Marks a snapshot still `offered` after a wait (local to the CLI, never printed).
    static let stillOffered = "_stillOffered"

    static func isOver(_ t: [String: Any]) -> Bool {
        t["finishedAt"] != nil || t["state"] as? String == "held"  // a relay holds them: its receipt comes later
    }

    /// Waits until every transfer has ended; returns their last snapshots in the order started.
    func run() throws -> [[String: Any]] {
        let interrupt = interactiveInterrupt()
        defer { interrupt?.cancel() }
        for id in ids { Thread.detachNewThread { self.follow(id) } }
        var shown: [String: String] = [:]  // the state last reported per transfer
        var toldWaiting: Set<String> = []
        var toldOffered: Set<String> = []  // transfers whose "Waiting for … to accept" was shown
        var progressShown = false
        condition.lock()
        defer { condition.unlock() }
        while true {
            while !changed && failure == nil { condition.wait() }
            changed = false
            if let failure { throw failure }
            if prompting { continue }
            let all = ids.compactMap { latest[$0] }
            if !global.json {
                for t in all {
                    let id = t["id"] as? String ?? ""
                    let state = t["state"] as? String ?? ""
                    var lines: [String] = []
                    // The peer is known but not online this moment: say that send waits for it.
                    if !toldWaiting.contains(id), let m = t["message"] as? String, m.contains("waiting up to") {
                        lines.append(m.prefix(1).uppercased() + m.dropFirst() + "…")
                        toldWaiting.insert(id)
                    }
                    if state != shown[id] {
                        // `offered` is told only once it lasted (a peer that trusts us accepts at once).
                        if state == "offered" {
                            guard t[Self.stillOffered] != nil else { continue }
                            lines.append("Waiting for \(t["peer"] ?? "the peer") to accept offer \(id.prefix(8))…")
                            toldOffered.insert(id)
                        }
                        if state == "sending", toldOffered.remove(id) != nil { lines.append("\(t["peer"] ?? "The peer") accepted.") }
                        if state == "interrupted" {
                            let why = t["message"] as? String ?? "interrupted"
                            lines.append("\(why). Still waiting; Ctrl-C to cancel or stop waiting (see `locafoto transfers`).")
                        }
                        if ids.count > 1, Self.isOver(t) {
                            let peer = "\(t["peer"] ?? "?")", message = t["message"] as? String ?? state
                            lines.append(message.contains(peer) ? message : "\(peer): \(message)")
                        }
                        shown[id] = state
                    }
                    if !lines.isEmpty {
                        if progressShown { writeStderr("\n") }
                        progressShown = false
                        writeStderr(lines.joined(separator: "\n") + "\n")
                    }
                }
                if tty, let line = progressLine(all) {
                    writeStderr("\r" + line)
                    progressShown = true
                }
            }
            if all.count == ids.count, all.allSatisfy(Self.isOver) {
                if progressShown { writeStderr("\n") }
                return all
            }
        }
    }

    /// "Sending: 42%  12 MiB of 30 MiB" for one transfer; one short part per peer for several.
    private func progressLine(_ all: [[String: Any]]) -> String? {
        let sending = all.filter { $0["state"] as? String == "sending" }
        guard !sending.isEmpty else { return nil }
        func percent(_ t: [String: Any]) -> Int {
            let sent = Format.int64(t["bytesSent"]), total = max(Format.int64(t["totalBytes"]), 1)
            return Int(sent * 100 / total)
        }
        if ids.count == 1, let t = sending.first {
            let sent = Format.int64(t["bytesSent"]), total = Format.int64(t["totalBytes"])
            return String(format: "Sending: %3d%%  %@ of %@", percent(t), Format.bytes(sent), Format.bytes(total))
        }
        let parts = all.map { t -> String in
            let state = t["state"] as? String ?? ""
            return "\(t["peer"] ?? "?") " + (state == "sending" ? "\(percent(t))%" : state)
        }
        return "Sending: " + parts.joined(separator: " · ") + "   "
    }

    /// Long-polls one transfer until it is over; a redraw of progress 4 times a second while it
    /// sends on a terminal, nothing else polls.
    private func follow(_ id: String) {
        var t = condition.withLock { latest[id] ?? [:] }
        var offerSeen = false
        do {
            while !Self.isOver(t) {
                let phase = t["phase"] as? Int ?? 0
                let state = t["state"] as? String
                // The first wait on an offer is short, to tell a decision pending from one at once.
                let wait = state == "offered" && !offerSeen ? "0.5" : tty && state == "sending" ? "0.25" : "30"
                if state == "offered" { offerSeen = true }
                t = try global.object("GET", "/v1/transfers/\(id)?after=\(phase)&wait=\(wait)")
                if t["state"] as? String == "offered" && offerSeen { t[Self.stillOffered] = true }
                let snapshot = t
                condition.withLock {
                    latest[id] = snapshot
                    changed = true
                    condition.broadcast()
                }
            }
        } catch {
            condition.withLock {
                failure = failure ?? error
                condition.broadcast()
            }
        }
    }

    /// On a terminal, Ctrl-C asks whether to cancel the transfers still running; "no" goes on
    /// waiting, a second Ctrl-C at the question leaves them to the agent. Nil elsewhere (Ctrl-C
    /// then ends `send` and the agent carries on, as before).
    private func interactiveInterrupt() -> (any DispatchSourceSignal)? {
        guard tty, isatty(STDIN_FILENO) == 1 else { return nil }
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in
            let running = condition.withLock { () -> [[String: Any]]? in
                guard !prompting else { return nil }
                prompting = true
                return ids.compactMap { latest[$0] }.filter { !Self.isOver($0) }
            }
            guard let running else {
                // Ctrl-C again at the question: stop waiting; the agent keeps the transfers.
                writeStderr("\nStopped waiting; the agent carries on (`locafoto transfers`, `locafoto cancel ID`).\n")
                exit(130)
            }
            let names = running.map { "\($0["peer"] ?? "?")" }.joined(separator: ", ")
            writeStderr("\nCancel the transfer to \(names)? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            if answer == "y" || answer == "yes" {
                for t in running {
                    do {
                        _ = try global.object("POST", "/v1/transfers/\(t["id"] as? String ?? "")/cancel")
                    } catch {
                        writeStderr("cannot cancel the transfer to \(t["peer"] ?? "?"): \(error)\n")
                    }
                }
            } else {
                writeStderr("Still sending.\n")
            }
            condition.withLock {
                prompting = false
                changed = true
                condition.broadcast()
            }
        }
        source.resume()
        return source
    }
}
