import Foundation
import LocafotoControl
import Synchronization

/// Follows the transfers of one `send` until each has ended (or a relay holds it), on the
/// agent's event stream (subscribed before the send started, so nothing is missed): a change of
/// state or message comes with the event, progress events move the progress line, the end
/// fetches the transfer's last snapshot (its items), and the calling thread shows what changed. On a terminal, Ctrl-C asks whether to cancel; elsewhere
/// it stops waiting and the agent carries on.
final class SendWatch: @unchecked Sendable {
    private let global: GlobalOptions
    private let ids: [String]
    private let tty: Bool
    private let events: EventReader
    private let started = Date()
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var latest: [String: TransferSnapshot]
    /// Transfers whose `offered` lasted (told only then: a peer that trusts us accepts at once).
    private var stillOffered: Set<String> = []
    private var rates: [String: Double] = [:]
    private var sendingName: [String: String] = [:]
    /// The photo being sent, counted from 1, per transfer.
    private var sendingIndex: [String: Int] = [:]
    /// Photos per transfer, from the events (the first snapshot may predate the list).
    private var itemCount: [String: Int] = [:]
    /// When the photos started to move (first seen `sending`) and when the last transfer ended:
    /// the summary's rate covers that span only, not the wait for the peer's decision.
    private var movingSince: Date?
    private var endedAt: Date?
    /// When the offer went out (first seen `offered`): the wait from there is the peer's decision.
    private var offeredAt: Date?
    private var failure: (any Error)?
    private var prompting = false
    /// The snapshots as started: shown once before any event.
    private var changed = true

    init(global: GlobalOptions, started: [TransferSnapshot], events: EventReader) {
        self.global = global
        self.events = events
        ids = started.map(\.id)
        latest = Dictionary(started.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        tty = isatty(STDERR_FILENO) == 1 && !global.json
    }

    /// Waits until every transfer has ended; returns their last snapshots in the order started.
    /// The stream was subscribed before the send, so every change after `started` is an event:
    /// nothing is fetched until a transfer is over (a tiny send makes no extra request).
    func run() throws -> [TransferSnapshot] {
        let interrupt = interactiveInterrupt()
        defer { interrupt?.cancel() }
        Thread.detachNewThread { self.follow() }
        // Transfers that ended before `send` returned their id.
        for id in ids where latest[id]?.isOver == true { refresh(id) }
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
                    let id = t.id
                    let state = t.state.rawValue
                    var lines: [String] = []
                    // The peer is known but not online this moment: say that send waits for it.
                    if !toldWaiting.contains(id), let m = t.message, m.contains("waiting up to") {
                        lines.append(m.prefix(1).uppercased() + m.dropFirst() + "…")
                        toldWaiting.insert(id)
                    }
                    if state != shown[id] {
                        // `offered` is told only once it lasted (a peer that trusts us accepts at once).
                        if t.state == .offered {
                            guard stillOffered.contains(id) else { continue }
                            lines.append("Waiting for \(t.peer.name) to accept offer \(id.prefix(8))…")
                            toldOffered.insert(id)
                        }
                        if t.state == .sending, toldOffered.remove(id) != nil {
                            lines.append("\(t.peer.name) accepted.")
                        }
                        if t.state == .interrupted {
                            let why = t.message ?? "interrupted"
                            lines.append(
                                "\(why). Still waiting; Ctrl-C to cancel or stop waiting (see `locafoto transfers`).")
                        }
                        if ids.count > 1, t.isOver {
                            let message = t.message ?? state
                            lines.append(message.contains(t.peer.name) ? message : "\(t.peer.name): \(message)")
                        }
                        shown[id] = state
                    }
                    // Long work before the photos move (hashing, waiting for a peer) says what it is.
                    if let m = t.message, m.hasPrefix("computing"), shownMessage[id] != m {
                        lines.append(m.prefix(1).uppercased() + m.dropFirst() + "…")
                    }
                    shownMessage[id] = t.message
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
            if all.count == ids.count, all.allSatisfy(\.isOver) {
                endedAt = endedAt ?? Date()
                if progressShown { clearStatusLine() }
                events.close()
                return all
            }
        }
    }

    /// `Sending photo.jpg  [#####·····]  12.0 MiB / 30.0 MiB  4.2 MiB/s  ETA 5s` for one transfer;
    /// one short part per peer for several.
    private func progressLine(_ all: [TransferSnapshot]) -> String? {
        let sending = all.filter { $0.state == .sending }
        // Before the offer: what the agent is doing, from the first snapshot on (reading the
        // photos' heads and previews, then finding and reaching the peer).
        if sending.isEmpty, ids.count == 1, let t = all.first {
            switch t.state {
            case .preparing:
                let count = max(t.items.count, itemCount[t.id] ?? 0)
                return count == 0 ? "Preparing the photos…" : "Preparing \(count) photos…"
            case .connecting: return "Connecting to \(t.peer.name.isEmpty ? "the peer" : t.peer.name)…"
            default: return nil
            }
        }
        guard !sending.isEmpty else { return nil }
        if ids.count == 1, let t = sending.first {
            var name = sendingName[t.id].map { " " + $0 } ?? ""
            let count = max(t.items.count, itemCount[t.id] ?? 0)
            if count > 1, let n = sendingIndex[t.id] { name += " (\(n) of \(count))" }
            return "Sending\(name)  " + Format.progress(bytes: t.sentBytes, of: t.totalBytes, rate: rates[t.id])
        }
        let parts = all.map { t -> String in
            t.peer.name + " "
                + (t.state == .sending ? "\(t.sentBytes * 100 / max(t.totalBytes, 1))%" : t.state.rawValue)
        }
        return "Sending: " + parts.joined(separator: " · ")
    }

    /// The summary after the transfers: the bytes, how long they took to move and at what
    /// average rate (from the first `sending` to the end), then the whole time when waiting for
    /// the peer's decision made it longer: `Sent 24.2 MiB in 0.4s (60.5 MiB/s); 22s in all,
    /// waiting for bob to accept`.
    func summary(_ ended: [TransferSnapshot]) -> String? {
        let sent = ended.reduce(Int64(0)) { $0 + $1.sentBytes }
        guard sent > 0 else { return nil }
        let (since, offered, end) = condition.withLock { (movingSince, offeredAt, endedAt ?? Date()) }
        return Self.summary(
            bytes: sent, started: started, offered: offered, moving: since ?? started, ended: end,
            peers: ended.map(\.peer.name))
    }

    static func summary(bytes: Int64, started: Date, offered: Date?, moving: Date, ended: Date, peers: [String])
        -> String
    {
        let moved = max(0, ended.timeIntervalSince(moving))
        var line = "Sent \(Format.bytes(bytes)) in \(Format.duration(moved))"
        if moved > 0 { line += " (\(Format.bytes(Int64(Double(bytes) / moved)))/s)" }
        // The whole time, when waiting made a visible part of it; and what was waited for, when
        // it was the peer's decision (from the offer to the first byte).
        if moving.timeIntervalSince(started) >= 1 {
            line += "; \(Format.duration(ended.timeIntervalSince(started))) in all"
            if let offered, moving.timeIntervalSince(offered) >= 1 {
                line += ", waiting for \(peers.count == 1 ? peers[0] : "the peers") to accept"
            }
        }
        return line
    }

    /// Reads the event stream: a change of state or message, and progress, update the snapshot;
    /// the end of a transfer fetches its last snapshot (items and times). The stream ending before every transfer has is an error (the agent
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
                    guard let state = e.state.flatMap(TransferSnapshot.State.init(rawValue:)), !state.isFinal,
                        state != .held
                    else {
                        refresh(id)  // over (or a state this CLI does not know): the whole snapshot
                        continue
                    }
                    condition.withLock {
                        latest[id]?.state = state
                        latest[id]?.message = e.message
                        // The first snapshot was taken while the photos were still being
                        // read: the total comes with the events.
                        if let total = e.totalBytes, total > 0 { latest[id]?.totalBytes = total }
                        if let n = e.items, n > 0 { itemCount[id] = n }
                        if state == .sending, movingSince == nil { movingSince = Date() }
                        if state == .offered, offeredAt == nil { offeredAt = Date() }
                        // The peer as resolved (the answer to `send` has it as typed).
                        if let peer = e.peer {
                            latest[id]?.peer = peer
                        }
                        if let bytes = e.bytes { latest[id]?.sentBytes = bytes }
                        changed = true
                        condition.broadcast()
                    }
                    // `offered` is told only once it lasted (a peer that trusts us accepts at once).
                    if state == .offered {
                        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { [self] in
                            condition.withLock {
                                guard latest[id]?.state == .offered else { return }
                                stillOffered.insert(id)
                                changed = true
                                condition.broadcast()
                            }
                        }
                    }
                case .transferProgress:
                    guard let id = e.transfer, mine.contains(id) else { continue }
                    condition.withLock {
                        if let bytes = e.bytes { latest[id]?.sentBytes = bytes }
                        if let total = e.totalBytes, total > 0 { latest[id]?.totalBytes = total }
                        if let r = e.bytesPerSecond { rates[id] = r }
                        if let n = e.name { sendingName[id] = n }
                        if let i = e.item { sendingIndex[id] = i + 1 }
                        if movingSince == nil { movingSince = Date() }
                        changed = true
                        condition.broadcast()
                    }
                default:
                    break
                }
            }
            throw CLIError(
                "the agent stopped before the transfer ended; it resumes when the agent runs again (`locafoto transfers`)"
            )
        } catch {
            condition.withLock {
                if !ids.allSatisfy({ latest[$0]?.isOver ?? false }) { failure = failure ?? error }
                changed = true
                condition.broadcast()
            }
        }
    }

    /// Fetches a transfer's whole snapshot (its items and times).
    private func refresh(_ id: String) {
        do {
            let t = try global.fetch(TransferSnapshot.self, "/v1/transfers/\(id)").value
            condition.withLock {
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
            let running = condition.withLock { () -> [TransferSnapshot]? in
                guard !prompting else { return nil }
                prompting = true
                return ids.compactMap { latest[$0] }.filter { !$0.isOver }
            }
            guard let running else {
                // Ctrl-C again at the question: stop waiting; the agent keeps the transfers.
                writeStderr("\nStopped waiting; the agent carries on (`locafoto transfers`, `locafoto cancel ID`).\n")
                exit(130)
            }
            let names = running.map(\.peer.name).joined(separator: ", ")
            writeStderr("\nCancel the transfer to \(names)? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            if answer == "y" || answer == "yes" {
                for t in running {
                    do {
                        _ = try global.fetch(TransferSnapshot.self, "/v1/transfers/\(t.id)/cancel", method: "POST")
                    } catch {
                        writeStderr("cannot cancel the transfer to \(t.peer.name): \(error)\n")
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
