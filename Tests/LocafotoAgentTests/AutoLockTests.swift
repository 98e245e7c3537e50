import LocafotoClock
import LocafotoDesktop
import LocafotoTestSupport
import Testing

@testable import LocafotoAgent
@testable import LocafotoNode

/// `agent --auto-lock`: the idle rule is decided on made-up instants (no real time passes, no
/// sleep), and the activity it reads is what the control API and import jobs record.
@Suite("Auto-lock")
struct AutoLockTests {
    let clock = ManualClock()
    var t0: ContinuousClock.Instant { clock.now }
    let timeout = Duration.seconds(900)

    @Test("locks once the timeout has passed since the last use, not before")
    func locksAfterTheTimeout() {
        let early = IdleLockRule.decide(
            now: t0 + .seconds(899), lastUse: t0, busy: false, transferring: false, timeout: timeout)
        #expect(early == .checkAt(t0 + timeout))
        let due = IdleLockRule.decide(
            now: t0 + timeout, lastUse: t0, busy: false, transferring: false, timeout: timeout)
        #expect(due == .lockNow)
    }

    @Test("a use restarts the idle time")
    func useRestarts() {
        let start = t0
        let activity = VaultActivity(clock: clock)
        clock.advance(by: .seconds(600))
        activity.touch()
        let use = activity.snapshot
        let d = IdleLockRule.decide(
            now: start + .seconds(1000), lastUse: use.lastUse, busy: use.busy, transferring: false, timeout: timeout)
        #expect(d == .checkAt(start + .seconds(1500)))
    }

    @Test("an import job or a transfer under way keeps the vault open however long it lasts")
    func busyKeepsOpen() {
        let start = t0
        let activity = VaultActivity(clock: clock)
        activity.touch()
        activity.begin()
        let later = start + .seconds(10_000)
        let busy = IdleLockRule.decide(
            now: later, lastUse: activity.snapshot.lastUse, busy: activity.snapshot.busy, transferring: false,
            timeout: timeout)
        #expect(busy == .checkAt(later + timeout))
        let moving = IdleLockRule.decide(now: later, lastUse: start, busy: false, transferring: true, timeout: timeout)
        #expect(moving == .checkAt(later + timeout))
        // The job's end is a use: a whole timeout from there.
        clock.advance(by: .seconds(10_000))
        activity.end()
        let after = IdleLockRule.decide(
            now: later + .seconds(1), lastUse: activity.snapshot.lastUse, busy: activity.snapshot.busy,
            transferring: false, timeout: timeout)
        #expect(after == .checkAt(later + timeout))
    }

    @Test("the last use is the latest touch or end, by the activity's clock")
    func lastUseFollowsTheClock() {
        let activity = VaultActivity(clock: clock)
        let start = t0
        #expect(activity.snapshot.lastUse == start)  // made now: the agent's start counts as a use
        clock.advance(by: .seconds(100))
        activity.touch()
        #expect(activity.snapshot.lastUse == start + .seconds(100))
        activity.begin()
        clock.advance(by: .seconds(50))
        activity.end()
        #expect(activity.snapshot == (start + .seconds(150), false))
    }

    @Test("logind session paths are encoded as sd_bus_path_encode does")
    func sessionPaths() {
        #expect(LogindWatcher.sessionPath(id: "2") == "/org/freedesktop/login1/session/_32")
        #expect(LogindWatcher.sessionPath(id: "c7") == "/org/freedesktop/login1/session/c7")
        #expect(LogindWatcher.sessionPath(id: "12") == "/org/freedesktop/login1/session/_312")
        #expect(LogindWatcher.sessionPath(id: "a-b") == "/org/freedesktop/login1/session/a_2db")
    }
}
