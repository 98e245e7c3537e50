// Test helpers: record a Discovery's events and wait for one with a timeout
// that fails the test with a message instead of hanging.
import Foundation
import LocafotoDiscovery
import LocafotoTestSupport
import Synchronization
import Testing

struct TestFailure: Error, CustomStringConvertible {
    let description: String
}

/// All events of one Discovery, in order, collected by a background task.
final class EventLog: Sendable {
    let label: String
    private let storage: Storage
    private let task: Task<Void, Never>

    /// A wait's deadline has passed (set by its hang guard).
    private final class TimeUp: Sendable {
        let passed = Mutex(false)
    }

    private final class Storage: Sendable {
        let started = ContinuousClock.now
        /// (time since the log was created, event): the times make failures readable.
        let events = Mutex<[(at: Duration, event: DiscoveryEvent)]>([])
        /// Who waits for the next event (or for its hang guard to end the wait).
        let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])

        func append(_ event: DiscoveryEvent) {
            let at = ContinuousClock.now - started
            events.withLock { $0.append((at, event)) }
            wakeAll()
        }

        func wakeAll(marking timeUp: TimeUp? = nil) {
            for waiter in waiters.withLock({ w in
                timeUp?.passed.withLock { $0 = true }
                defer { w.removeAll() }
                return w
            }) { waiter.resume() }
        }

        /// Returns once there are more than `seen` events, or once `timeUp` is set (by
        /// `wakeAll(marking:)`, which sets it under the waiters' lock: a waiter checks it there
        /// too, so the deadline cannot pass unseen between its check and its wait).
        func next(after seen: Int, unless timeUp: TimeUp) async {
            await withCheckedContinuation { waiter in
                let now = waiters.withLock { w in
                    // Checked under the waiters' lock: an append after this check wakes this waiter.
                    guard events.withLock({ $0.count }) <= seen, !timeUp.passed.withLock({ $0 }) else { return true }
                    w.append(waiter)
                    return false
                }
                if now { waiter.resume() }
            }
        }
    }

    init(_ label: String, _ stream: AsyncStream<DiscoveryEvent>) {
        self.label = label
        let storage = Storage()
        self.storage = storage
        task = Task {
            for await event in stream { storage.append(event) }
        }
    }

    var events: [DiscoveryEvent] { storage.events.withLock { $0.map(\.event) } }
    var count: Int { storage.events.withLock { $0.count } }

    /// The last events with their times, for failure messages.
    func transcript(last n: Int = 20) -> String {
        storage.events.withLock { all in
            all.suffix(n).map { entry in
                let (s, atto) = entry.at.components
                return "\n    +" + String(format: "%.3fs", Double(s) + Double(atto) / 1e18) + " \(entry.event)"
            }
            .joined()
        }
    }

    /// Waits until an event at index >= `after` matches, returning its index and
    /// the extracted value. Throws a descriptive failure after `timeout`.
    @discardableResult
    func wait<T>(
        for what: String, after start: Int = 0, timeout: Duration = .seconds(10),
        _ match: (DiscoveryEvent) -> T?
    ) async throws -> (index: Int, value: T) {
        // The hang guard: at the deadline every waiter wakes and finds the time up.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        let storage = self.storage
        let timeUp = TimeUp()
        let guardTask = Task {
            try? await clock.sleep(until: deadline)
            storage.wakeAll(marking: timeUp)
        }
        defer { guardTask.cancel() }
        var checked = start
        while true {
            let all = events
            if checked < all.count {
                for index in checked..<all.count {
                    if let value = match(all[index]) { return (index, value) }
                }
                checked = all.count
            }
            if clock.now >= deadline {
                throw TestFailure(
                    description: "\(label): timed out after \(timeout) waiting for \(what); last events:\(transcript())"
                )
            }
            await storage.next(after: checked, unless: timeUp)
        }
    }

    /// Waits for `.resolved` of the instance `name` satisfying `extra`.
    @discardableResult
    func waitResolved(
        _ name: String, after start: Int = 0, timeout: Duration = .seconds(10),
        where extra: @escaping (DiscoveredService) -> Bool = { _ in true }
    ) async throws -> (index: Int, value: DiscoveredService) {
        try await wait(for: "resolved '\(name)'", after: start, timeout: timeout) { event in
            if case .resolved(let s) = event, s.instanceName == name, extra(s) { return s }
            return nil
        }
    }

    @discardableResult
    func waitPublished(after start: Int = 0, timeout: Duration = .seconds(10)) async throws -> (
        index: Int, value: String
    ) {
        try await wait(for: "published", after: start, timeout: timeout) { event in
            if case .published(let name) = event { return name }
            return nil
        }
    }
}

/// A started Discovery with its event log; `stop()` ends both.
struct Running {
    let discovery: Discovery
    let log: EventLog
    func stop() { discovery.stop() }
}

/// Starts a Discovery and requires the daemon to be reachable: a missing daemon
/// fails the test (it is never skipped) with instructions.
func startRunning(_ label: String, _ ad: ServiceAdvertisement?, serviceType: String = Discovery.defaultServiceType)
    async throws -> Running
{
    let discovery = Discovery(serviceType: serviceType, advertisement: ad)
    let log = EventLog(label, try discovery.start())
    do {
        try await log.wait(for: "daemonRunning", timeout: .seconds(10)) { $0 == .daemonRunning ? () : nil }
    } catch {
        discovery.stop()
        let reason =
            log.events.compactMap { event -> String? in
                if case .daemonUnavailable(let r) = event { return r }
                return nil
            }.last ?? "no event at all"
        throw TestFailure(
            description: "avahi-daemon is not reachable on the D-Bus system bus (\(reason)). "
                + "Start it with `bash scripts/avahi-lo.sh start` before `swift test`.")
    }
    return Running(discovery: discovery, log: log)
}

/// Names unique per test run, so parallel runs and other users of the daemon
/// cannot interfere. Kept short: instance names are limited to 63 bytes.
func uniqueName(_ suffix: String) -> String {
    "lf-\(ProcessInfo.processInfo.processIdentifier)-\(UInt16.random(in: .min ... .max))-\(suffix)"
}

/// A service type nobody else uses, so other Locafoto processes on the same
/// daemon do not show up in these tests.
func uniqueServiceType() -> String {
    "_lft\(UInt16.random(in: .min ... .max))._tcp"
}

/// The repository root.
let packageRoot = Checkout.root
