import LocafotoClock
import Synchronization

/// When the vault was last used through the control API, and whether a long call (an import
/// job, a photo streamed in) is using it right now: what "idle" means for `agent --auto-lock`.
/// Status calls, events and the background indexer do not count: a tray icon polling `status`
/// must not keep the vault open.
package final class VaultActivity: Sendable {
    private struct State {
        var lastUse: ContinuousClock.Instant
        var busy = 0
    }
    private let state: Mutex<State>
    private let clock: any AgentClock

    package init(clock: any AgentClock) {
        self.clock = clock
        state = Mutex(State(lastUse: clock.now))
    }

    /// A call used the vault now.
    package func touch() {
        let now = clock.now
        state.withLock { $0.lastUse = max($0.lastUse, now) }
    }

    /// A call that uses the vault for a while (an import job) starts; `end` when it is over.
    package func begin() { state.withLock { $0.busy += 1 } }

    package func end() {
        let now = clock.now
        state.withLock {
            $0.busy = max(0, $0.busy - 1)
            $0.lastUse = max($0.lastUse, now)
        }
    }

    package var snapshot: (lastUse: ContinuousClock.Instant, busy: Bool) {
        state.withLock { ($0.lastUse, $0.busy > 0) }
    }
}
