import Foundation
import LocafotoClock
import LocafotoControlServer
import LocafotoDesktop
import LocafotoNode
import LocafotoVault
import Logging
import ServiceLifecycle
import Synchronization

/// The idle rule, apart from any clock so that it is tested with made-up instants: lock once
/// `timeout` has passed since the last use, unless a call or a transfer is under way (a
/// transfer's end counts as a use: `AutoLockService` touches the activity when it sees one).
enum IdleLockRule {
    enum Decision: Equatable {
        case lockNow
        /// Look again at this instant (the earliest the vault can have been idle long enough).
        case checkAt(ContinuousClock.Instant)
    }

    static func decide(
        now: ContinuousClock.Instant, lastUse: ContinuousClock.Instant, busy: Bool, transferring: Bool,
        timeout: Duration
    ) -> Decision {
        // Busy: nothing can lock before a whole timeout after the work ends.
        if busy || transferring { return .checkAt(now + timeout) }
        let due = lastUse + timeout
        return now >= due ? .lockNow : .checkAt(due)
    }
}

/// Locks the vault when it has been idle for `agent --auto-lock`, when the machine is about to
/// sleep (logind `PrepareForSleep(true)`) and when the user's session is locked (logind
/// `Session.Lock`), so that a laptop closed or left with its screen locked keeps no master key
/// in memory. What arrives while locked waits sealed in the spool, as after `locafoto lock`.
struct AutoLockService: Service {
    /// `agent --auto-lock`: nil, never when idle.
    let idle: Duration?
    /// `agent --lock-on-sleep`: follow logind's sleep and session lock.
    let followLogind: Bool
    let vaults: VaultHandle
    /// Calls of the control API, the uses that restart the idle time.
    let vaultActivity: VaultActivity
    /// A transfer's end is a use too.
    let transferActivity: TransferActivity
    /// Locks as `locafoto lock` does (and says why in the event).
    let vaultControl: VaultController
    let clock: any AgentClock
    let logger: Logger

    func run() async throws {
        guard idle != nil || followLogind else {
            try? await gracefulShutdown()
            return
        }
        var watcher: LogindWatcher?
        if followLogind {
            do {
                let w = try LogindWatcher.system()
                watcher = w
                let session = w.sessionPath.map { "session \($0)" } ?? "any session (XDG_SESSION_ID is not set)"
                logger.info(
                    "the vault locks when the machine sleeps or the screen of \(session) locks (logind on the system bus)"
                )
            } catch {
                logger.notice(
                    "the vault does not lock on sleep or screen lock: \(error). `locafoto lock` locks it; `agent --auto-lock` locks it when idle"
                )
            }
        }
        let logind = watcher
        defer { logind?.stop() }
        if let idle { logger.info("the vault locks after \(Self.text(idle)) without use (agent --auto-lock)") }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if let logind {
                    group.addTask {
                        for await signal in logind.signals {
                            switch signal {
                            case .prepareForSleep(true): lock("the machine is going to sleep")
                            case .prepareForSleep(false): break
                            case .sessionLock: lock("the session was locked")
                            }
                        }
                        if !Task.isCancelled {
                            logger.notice(
                                "the system bus went away: the vault no longer locks on sleep or screen lock until the agent restarts"
                            )
                        }
                    }
                }
                if let idle {
                    group.addTask { await idleLoop(idle) }
                }
            }
        }
        // The bus may go away before the agent stops; a service that returns early would stop
        // the agent, so this one waits for the shutdown.
        try? await gracefulShutdown()
    }

    private func idleLoop(_ timeout: Duration) async {
        while !Task.isCancelled {
            if transferActivity.isActive {
                // The end of a transfer is a use: the idle time counts from there.
                await transferActivity.whenIdle()
                vaultActivity.touch()
                continue
            }
            let now = clock.now
            let use = vaultActivity.snapshot
            let unlocked = (try? vaults.vault())?.isUnlocked ?? false
            switch IdleLockRule.decide(
                now: now, lastUse: use.lastUse, busy: use.busy, transferring: false, timeout: timeout)
            {
            case .lockNow where unlocked:
                lock("idle for \(Self.text(timeout))")
                try? await clock.sleep(for: timeout)
            case .lockNow:
                try? await clock.sleep(for: timeout)
            case .checkAt(let at):
                try? await clock.sleep(until: at)
            }
        }
    }

    private func lock(_ why: String) {
        guard let v = try? vaults.vault(), v.isUnlocked else { return }
        do {
            try vaultControl.lock(reason: why)
        } catch {
            logger.error("could not lock the vault (\(why)): \(error)")
        }
    }

    static func text(_ d: Duration) -> String {
        let s = d.components.seconds
        if s % 3600 == 0 { return "\(s / 3600) h" }
        if s % 60 == 0 { return "\(s / 60) min" }
        return "\(s) s"
    }
}
