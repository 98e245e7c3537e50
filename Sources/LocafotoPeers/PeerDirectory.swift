import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoDiscovery
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoSession
import LocafotoWire
import Synchronization

/// One address where a peer was resolved over mDNS.
public struct PeerEndpoint: Codable, Sendable, Hashable {
    public var address: String
    public var port: UInt16
    public var family: String
    package var instanceName: String
    package var interfaceIndex: Int32

    /// HOST:PORT as a user writes it (`[IPv6]:PORT`), which `StaticAddress(parsing:)` reads back.
    package var hostPort: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }
}

/// A peer as discovery sees it right now.
public struct OnlinePeer: Sendable {
    public var fingerprint: Fingerprint
    public var name: String
    public var endpoints: [PeerEndpoint]
    public var lastSeen: Date
}

/// Peers currently online, keyed by the fingerprint in their TXT record (or proven by a probe).
/// The fingerprint is only a claim until a handshake proves it (the session checks it). The
/// bookkeeping is `PeerTable`'s (its rules are there); this class makes it shared, stamps events
/// with the time, and wakes those waiting for a peer to come online or to show other addresses.
public final class PeerDirectory: Sendable {
    /// What a waiter is woken with: the peer as the directory shows it then (nil: offline).
    package struct Sighting: Sendable {
        var peer: OnlinePeer?
    }
    private struct Waiter {
        var fingerprint: Fingerprint
        /// Whether the peer as shown now (nil: offline) ends the wait.
        var until: @Sendable (OnlinePeer?) -> Bool
        var continuation: CheckedContinuation<Sighting?, Never>
    }
    private struct State {
        var table: PeerTable
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state: Mutex<State>
    /// Woken when a wait starts (`untilWaiting`).
    private let waitStarted = Waiters()
    package let clock: any AgentClock
    /// Where peers appearing and leaving are announced.
    private let events: EventHub?

    /// `clock`: the time stamped on inputs and answers, and the one waits are bounded on.
    public init(own: Fingerprint, events: EventHub? = nil, clock: any AgentClock) {
        self.state = Mutex(State(table: PeerTable(own: own)))
        self.clock = clock
        self.events = events
    }

    public func apply(_ event: DiscoveryEvent) {
        change { $0.apply(event, at: $1) }
    }

    /// A peer proven by a handshake at a configured address (no mDNS involved).
    package func applyStatic(peer: PeerIdentity, endpoint: PeerEndpoint) {
        change { $0.probeSucceeded(peer.fingerprint, name: peer.name, at: endpoint, now: $1) }
    }

    /// Nothing answered at a configured address (a probe or a connection failed there).
    package func removeStatic(endpoint: PeerEndpoint) {
        change { $0.probeFailed(at: endpoint, now: $1) }
    }

    public var online: [OnlinePeer] {
        let now = clock.date
        return state.withLock { $0.table.online(at: now) }
    }

    public func online(_ fp: Fingerprint) -> OnlinePeer? {
        let now = clock.date
        return state.withLock { $0.table.online(fp, at: now) }
    }

    /// Peers that were online within `PeerTable.recentWindow` but are not now (no endpoints).
    package var recentlySeen: [OnlinePeer] {
        let now = clock.date
        return state.withLock { $0.table.recentlySeen(at: now) }
    }

    /// Addresses reached by a probe that has not failed since (to be probed again).
    package var probedEndpoints: [PeerEndpoint] {
        state.withLock { $0.table.probedEndpoints }
    }

    /// Advertisements ignored because their TXT record could not be read.
    package var ignoredAdvertisements: Int {
        state.withLock { $0.table.ignoredAdvertisements }
    }

    /// How many `waitUntilOnline` and `waitForEndpoints` calls are waiting for a change (a
    /// synchronisation point for tests).
    package var waiting: Int {
        state.withLock { $0.waiters.count }
    }

    /// Returns once `count` calls wait on the directory (tests move on when the code under test
    /// waits, instead of looking now and then).
    package func untilWaiting(atLeast count: Int) async {
        await waitStarted.wait(unless: { [self] in waiting >= count })
    }

    /// The peer as soon as it is online (at once if it is), or nil after `timeout` or when the
    /// task is cancelled. Woken by the directory's changes, not by polling.
    package func waitUntilOnline(_ fp: Fingerprint, timeout: Duration) async -> OnlinePeer? {
        await wait(for: fp, timeout: timeout) { $0 != nil }?.peer
    }

    /// The peer's addresses as soon as they are others than `endpoints` (at once if they are
    /// already; empty: it went offline), or nil after `timeout` or when the task is cancelled.
    /// A send whose every address failed waits here for the peer to announce another one.
    package func waitForEndpoints(of fp: Fingerprint, otherThan endpoints: [PeerEndpoint], timeout: Duration) async
        -> [PeerEndpoint]?
    {
        let known = Set(endpoints)
        return await wait(for: fp, timeout: timeout) { Set($0?.endpoints ?? []) != known }.map {
            $0.peer?.endpoints ?? []
        }
    }

    /// The peer as soon as `until` holds for it (at once if it does), or nil after `timeout` or
    /// when the task is cancelled.
    private func wait(for fp: Fingerprint, timeout: Duration, until: @escaping @Sendable (OnlinePeer?) -> Bool) async
        -> Sighting?
    {
        let now = online(fp)
        if until(now) { return Sighting(peer: now) }
        guard timeout > .zero else { return nil }
        return await withTaskGroup(of: Sighting?.self) { group in
            group.addTask { await self.next(fp, until: until) }
            group.addTask {
                try? await self.clock.sleep(for: timeout)  // the bound, not a poll
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func next(_ fp: Fingerprint, until: @escaping @Sendable (OnlinePeer?) -> Bool) async -> Sighting? {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Sighting?, Never>) in
                let now = clock.date
                let ready: Sighting?? = state.withLock { s in
                    if Task.isCancelled { return .some(nil) }
                    let peer = s.table.online(fp, at: now)
                    if until(peer) { return .some(Sighting(peer: peer)) }
                    s.waiters[id] = Waiter(fingerprint: fp, until: until, continuation: c)
                    return .none
                }
                if case .some(let sighting) = ready {
                    c.resume(returning: sighting)
                } else {
                    waitStarted.wakeAll()
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }

    /// Applies one input and resumes the waiters whose condition holds now.
    private func change(_ body: (inout PeerTable, Date) -> Void) {
        let now = clock.date
        var appeared: [OnlinePeer] = []
        var left: [OnlinePeer] = []
        let woken: [(CheckedContinuation<Sighting?, Never>, Sighting)] = state.withLock { s in
            let before = events == nil ? [] : s.table.online(at: now)
            body(&s.table, now)
            if events != nil {
                let after = s.table.online(at: now)
                let was = Set(before.map(\.fingerprint))
                let isNow = Set(after.map(\.fingerprint))
                appeared = after.filter { !was.contains($0.fingerprint) }
                left = before.filter { !isNow.contains($0.fingerprint) }
            }
            guard !s.waiters.isEmpty else { return [] }
            var woken: [(CheckedContinuation<Sighting?, Never>, Sighting)] = []
            for (id, w) in s.waiters {
                let peer = s.table.online(w.fingerprint, at: now)
                guard w.until(peer) else { continue }
                woken.append((w.continuation, Sighting(peer: peer)))
                s.waiters[id] = nil
            }
            return woken
        }
        for (c, sighting) in woken { c.resume(returning: sighting) }
        func peer(_ p: OnlinePeer) -> EventPeer { EventPeer(name: p.name, fingerprint: p.fingerprint.description) }
        for p in appeared { events?.publish(.peerAppeared(peer(p))) }
        for p in left { events?.publish(.peerLeft(peer(p))) }
    }

    package static func displayName(_ txt: String?, fallback: String) -> String {
        DisplayName.sanitize(txt?.isEmpty == false ? txt! : fallback, fallback: DisplayName.sanitize(fallback))
    }
}

/// The result of naming a peer on the command line.
package struct PeerChoice: Sendable {
    package var fingerprint: Fingerprint
    package var name: String
    package var endpoints: [PeerEndpoint]
    package var known: PeerRecord?
}

package enum PeerResolver {
    /// Finds the one peer meant by `query`: a display name (case-insensitive) or a fingerprint
    /// prefix (at least 4 characters). Ambiguity is an error that lists the candidates; a name
    /// that belongs to a known peer but now comes with another key is refused. `recent`: peers
    /// offline now but seen lately (`PeerDirectory.recentlySeen`), matched only when no online or
    /// known peer does (after `forget`, or for a peer never met that is restarting).
    package static func resolve(_ query: String, online: [OnlinePeer], known: [PeerRecord], recent: [OnlinePeer] = [])
        throws
        -> PeerChoice
    {
        let q = query.trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty else { throw AgentError(.invalidRequest, "name a peer by display name or fingerprint") }
        var byFP: [Fingerprint: PeerChoice] = [:]
        let knownByFP = Dictionary(
            known.compactMap { k in (try? Fingerprint(parsing: k.fingerprint)).map { ($0, k) } },
            uniquingKeysWith: { a, _ in a })
        let isPrefix = Fingerprint.normalise(q).count >= 4
        for p in online
        where p.name.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && p.fingerprint.matches(prefix: q)) {
            byFP[p.fingerprint] = PeerChoice(
                fingerprint: p.fingerprint, name: p.name, endpoints: p.endpoints, known: knownByFP[p.fingerprint])
        }
        for (fp, k) in knownByFP
        where byFP[fp] == nil
            && (k.name.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && fp.matches(prefix: q)))
        {
            byFP[fp] = PeerChoice(fingerprint: fp, name: k.name, endpoints: [], known: k)
        }
        // Only when nothing online or known matches: a peer merely seen never makes a name ambiguous.
        let onlyRecent = byFP.isEmpty
        for p in recent
        where onlyRecent
            && (p.name.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && p.fingerprint.matches(prefix: q)))
        {
            byFP[p.fingerprint] = PeerChoice(fingerprint: p.fingerprint, name: p.name, endpoints: [], known: nil)
        }
        let matches = byFP.values.sorted { $0.fingerprint < $1.fingerprint }
        if matches.isEmpty {
            throw AgentError(
                .notFound, "no peer named '\(q)' is visible; run `locafoto peers` to see who is on the network")
        }
        if matches.count > 1 {
            let online = matches.filter { !$0.endpoints.isEmpty }
            let knownNamed = matches.filter {
                $0.known != nil && $0.known!.name.caseInsensitiveCompare(q) == .orderedSame
            }
            // A known peer is offline and an unknown one now uses its name: the loud refusal.
            if online.count == 1, online[0].known == nil, let k = knownNamed.first, k.endpoints.isEmpty {
                throw AgentError(
                    .identityMismatch,
                    "REFUSED: '\(q)' is known as \(k.fingerprint), but the peer now answering to that name presents another key (\(online[0].fingerprint)). It may be an impostor. If \(q) really has a new key, verify it and send to the full fingerprint, or run `locafoto forget \(k.fingerprint)`."
                )
            }
            let list = matches.map { "  \($0.name)  \($0.fingerprint)\($0.endpoints.isEmpty ? " (offline)" : "")" }
                .joined(separator: "\n")
            throw AgentError(.ambiguous, "'\(q)' matches several peers; name one by fingerprint:\n\(list)")
        }
        return matches[0]
    }
}
