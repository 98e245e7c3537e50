import LocafotoNode
import Synchronization

/// Bytes of request bodies held at once over every connection of LocalSend's port. Without it,
/// 20 parallel 15 MiB bodies took 358 MiB: each body now reserves what it may hold before a byte
/// of it is read, and a request over the budget is refused at once (503), not queued.
package final class BodyBudget: Sendable {
    package let limit: Int
    private let held = Mutex(0)

    package init(limit: Int) { self.limit = limit }

    /// Reserves `bytes`; false when that would pass the budget.
    package func take(_ bytes: Int) -> Bool {
        held.withLock { h in
            guard bytes <= limit - h else { return false }
            h += bytes
            return true
        }
    }

    package func give(_ bytes: Int) { held.withLock { $0 -= bytes } }

    package var inUse: Int { held.withLock { $0 } }
}

/// A number of turns (uploads running at once): `take` waits for one, `give` hands it back.
/// A task waiting is not reading its body, so what it holds is its connection's buffers only.
package final class Turns: Sendable {
    package let limit: Int
    private let running = Mutex(0)
    private let freed = Waiters()

    package init(limit: Int) { self.limit = max(1, limit) }

    /// Waits for a turn; false when the task was cancelled first (no turn taken).
    package func take() async -> Bool {
        while true {
            let taken = running.withLock { r in
                guard r < limit else { return false }
                r += 1
                return true
            }
            if taken { return true }
            if Task.isCancelled { return false }
            await freed.wait { self.running.withLock { $0 < self.limit } }
        }
    }

    package func give() {
        running.withLock { $0 -= 1 }
        freed.wakeAll()
    }

    package var inUse: Int { running.withLock { $0 } }
}
