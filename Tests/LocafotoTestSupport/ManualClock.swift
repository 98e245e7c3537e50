import Foundation
import LocafotoClock
import Synchronization

/// A clock that only moves when a test moves it (`advance`). Sleepers wake when it passes
/// their deadline, in deadline order; a test waits until the code under test sleeps on it
/// (`sleepers(atLeast:)`) before moving it, so nothing depends on how fast the machine is.
public final class ManualClock: AgentClock {
    private struct Sleeper {
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var offset: Duration = .zero
        var sleepers: [UInt64: Sleeper] = [:]
        var next: UInt64 = 0
        /// Tests waiting for a number of sleepers.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func wakeWatchers() {
            let ready = watchers.filter { $0.count <= sleepers.count }
            watchers.removeAll { $0.count <= sleepers.count }
            for watcher in ready { watcher.continuation.resume() }
        }
    }
    private let state = Mutex(State())
    private let startInstant = ContinuousClock.now
    private let startDate: Date

    /// - Parameter date: the wall time it starts at.
    public init(date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        startDate = date
    }

    public var now: ContinuousClock.Instant { startInstant + state.withLock { $0.offset } }
    public var date: Date { startDate.addingTimeInterval(state.withLock { $0.offset }.seconds) }

    /// Tasks sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let key = state.withLock { s in
            s.next += 1
            return s.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                state.withLock { s in
                    if Task.isCancelled { return c.resume(throwing: CancellationError()) }
                    if startInstant + s.offset >= deadline { return c.resume() }
                    s.sleepers[key] = Sleeper(deadline: deadline, continuation: c)
                    s.wakeWatchers()
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: key) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock by `duration` and wakes every sleeper whose deadline it reached.
    public func advance(by duration: Duration) {
        let due = state.withLock { s in
            s.offset += duration
            let reached = startInstant + s.offset
            let due = s.sleepers.filter { $0.value.deadline <= reached }.sorted {
                $0.value.deadline < $1.value.deadline
            }
            for (key, _) in due { s.sleepers.removeValue(forKey: key) }
            return due.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on this clock.
    public func sleepers(atLeast count: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            state.withLock { s in
                if s.sleepers.count >= count { return c.resume() }
                s.watchers.append((count, c))
            }
        }
    }
}
