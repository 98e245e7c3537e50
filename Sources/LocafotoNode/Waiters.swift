import Synchronization

/// Tasks waiting for something to change, woken all at once. Its users (a transfer's next
/// phase, the end of all transfers) share the two races it closes: a change between checking and
/// registering, and a cancellation that comes before registering.
package final class Waiters: Sendable {
    package init() {}

    private struct State {
        var next = 0
        var all: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// Tasks waiting right now.
    package var count: Int { state.withLock { $0.all.count } }

    /// Returns at once if `ready()`, else when `wakeAll()` runs or the task is cancelled.
    /// `ready` is evaluated under this object's lock, and whatever makes it true calls
    /// `wakeAll()` afterwards, so a change cannot slip between the check and the wait.
    package func wait(unless ready: @Sendable () -> Bool) async {
        let key = state.withLock { s -> Int in
            s.next += 1
            return s.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s in
                    // The cancellation flag is set before the handler runs: a cancel that came
                    // before this registration is seen here.
                    if ready() || Task.isCancelled { return true }
                    s.all[key] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.all.removeValue(forKey: key) }?.resume()
        }
    }

    package func wakeAll() {
        let woken = state.withLock { s in
            defer { s.all.removeAll() }
            return Array(s.all.values)
        }
        for c in woken { c.resume() }
    }
}
