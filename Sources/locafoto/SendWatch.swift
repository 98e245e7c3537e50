import Foundation
import LocafotoControl

/// Follows the transfers of one `send` until each has ended (or a relay holds it), on the
/// agent's event stream (subscribed before the send started, so nothing is missed): a change of
/// state fetches the transfer's snapshot, progress events move the progress line, and the
/// calling thread shows what changed. On a terminal, Ctrl-C asks whether to cancel; elsewhere
/// it stops waiting and the agent carries on.
final class SendWatch: @unchecked Sendable {
    private let global: GlobalOptions
    private let ids: [String]
    private let tty: Bool
    private let events: EventReader
    private let started = Date()
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var latest: [String: [String: Any]]
    private var rates: [String: Double] = [:]
    private var sendingName: [String: String] = [:]
    private var failure: (any Error)?
    private var prompting = false
    private var changed = false

    init(global: GlobalOptions, started: [[String: Any]], events: EventReader) {
        self.global = global
        self.events = events
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
        Thread.detachNewThread { self.follow() }
        // Transfers that changed before the stream was read, or that ended at once.
        for id in ids { refresh(id) }
        var shown: [String: String] = [:]  // the state last reported per transfer
        var toldWaiting: Set<String> = []
        var toldOffered: Set<String> = []  // transfers whose "Waiting for … to accept" was shown
        var progressShown = false
        var shownMessage: [String: String] = [:]
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
                    // Long work before the photos move (hashing, waiting for a peer) says what it is.
                    if let m = t["message"] as? String, m.hasPrefix("computing"), shownMessage[id] != m {
                        lines.append(m.prefix(1).uppercased() + m.dropFirst() + "…")
                    }
                    shownMessage[id] = t["message"] as? String
                    if !lines.isEmpty {
                        if progressShown { clearStatusLine() }
                        progressShown = false
                        writeStderr(lines.joined(separator: "\n") + "\n")
                    }
                }
                if tty, let line = progressLine(all) {
                    writeStatusLine(line)
                    progressShown = true
                }
            }
            if all.count == ids.count, all.allSatisfy(Self.isOver) {
                if progressShown { clearStatusLine() }
                events.close()
                return all
            }
        }
    }

    /// `Sending photo.jpg  [#####·····]  12.0 MiB / 30.0 MiB  4.2 MiB/s  ETA 5s` for one transfer;
    /// one short part per peer for several.
    private func progressLine(_ all: [[String: Any]]) -> String? {
        let sending = all.filter { $0["state"] as? String == "sending" }
        guard !sending.isEmpty else { return nil }
        func percent(_ t: [String: Any]) -> Int {
            let sent = Format.int64(t["bytesSent"]), total = max(Format.int64(t["totalBytes"]), 1)
            return Int(sent * 100 / total)
        }
        if ids.count == 1, let t = sending.first {
            let id = t["id"] as? String ?? ""
            let sent = Format.int64(t["bytesSent"]), total = Format.int64(t["totalBytes"])
            let name = sendingName[id].map { " " + $0 } ?? ""
            return "Sending\(name)  " + Format.progress(bytes: sent, of: total, rate: rates[id])
        }
        let parts = all.map { t -> String in
            let state = t["state"] as? String ?? ""
            return "\(t["peer"] ?? "?") " + (state == "sending" ? "\(percent(t))%" : state)
        }
        return "Sending: " + parts.joined(separator: " · ")
    }

    /// The summary after the transfers: how long it took and at what average rate.
    func summary(_ ended: [[String: Any]]) -> String? {
        let sent = ended.reduce(Int64(0)) { $0 + Format.int64($1["bytesSent"]) }
        guard sent > 0 else { return nil }
        let elapsed = Date().timeIntervalSince(started)
        return "Sent \(Format.bytes(sent)) in \(Format.duration(elapsed))" + (elapsed > 0 ? " (\(Format.bytes(Int64(Double(sent) / elapsed)))/s)" : "")
    }

    /// Reads the event stream: a change of state or message fetches the snapshot, progress
    /// moves the bytes. The stream ending before every transfer has is an error (the agent
    /// stopped); the agent keeps what it was doing.
    private func follow() {
        let mine = Set(ids)
        do {
            while let e = try events.next() {
                switch e.kind {
                case .missed:
                    for id in ids { refresh(id) }
                case .transferState:
                    guard let id = e.transfer, mine.contains(id) else { continue }
                    refresh(id)
                    // `offered` is told only once it lasted (a peer that trusts us accepts at once).
                    if e.state == "offered" {
                        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { [self] in
                            condition.withLock {
                                guard latest[id]?["state"] as? String == "offered" else { return }
                                latest[id]?[Self.stillOffered] = true
                                changed = true
                                condition.broadcast()
                            }
                        }
                    }
                case .transferProgress:
                    guard let id = e.transfer, mine.contains(id) else { continue }
                    condition.withLock {
                        if let bytes = e.bytes { latest[id]?["bytesSent"] = bytes }
                        if let r = e.rate { rates[id] = r }
                        if let n = e.name { sendingName[id] = n }
                        changed = true
                        condition.broadcast()
                    }
                default:
                    break
                }
            }
            throw CLIError("the agent stopped before the transfer ended; it resumes when the agent runs again (`locafoto transfers`)")
        } catch {
            condition.withLock {
                if !ids.allSatisfy({ latest[$0].map(Self.isOver) ?? false }) { failure = failure ?? error }
                changed = true
                condition.broadcast()
            }
        }
    }

    /// Fetches a transfer's snapshot (its items and message) after a change.
    private func refresh(_ id: String) {
        do {
            var t = try global.object("GET", "/v1/transfers/\(id)")
            condition.withLock {
                if latest[id]?[Self.stillOffered] != nil, t["state"] as? String == "offered" { t[Self.stillOffered] = true }
                latest[id] = t
                changed = true
                condition.broadcast()
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
