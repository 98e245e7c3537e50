import Testing
@testable import LocafotoAgent
import LocafotoDesktop

/// `agent --auto-lock`: the idle rule is decided on made-up instants (no real time passes, no
/// sleep), and the activity it reads is what the control API and import jobs record.
@Suite("Auto-lock")
struct AutoLockTests {
    let t0 = ContinuousClock.now
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
        let activity = VaultActivity()
        activity.touch(t0 + .seconds(600))
        let use = activity.snapshot
        let d = IdleLockRule.decide(
            now: t0 + .seconds(1000), lastUse: use.lastUse, busy: use.busy, transferring: false, timeout: timeout)
        #expect(d == .checkAt(t0 + .seconds(1500)))
    }

    @Test("an import job or a transfer under way keeps the vault open however long it lasts")
    func busyKeepsOpen() {
        let activity = VaultActivity()
        activity.touch(t0)
        activity.begin()
        let later = t0 + .seconds(10_000)
        let busy = IdleLockRule.decide(
            now: later, lastUse: activity.snapshot.lastUse, busy: activity.snapshot.busy, transferring: false,
            timeout: timeout)
        #expect(busy == .checkAt(later + timeout))
        let moving = IdleLockRule.decide(now: later, lastUse: t0, busy: false, transferring: true, timeout: timeout)
        #expect(moving == .checkAt(later + timeout))
        // The job's end is a use: a whole timeout from there.
        activity.end(later)
        let after = IdleLockRule.decide(
            now: later + .seconds(1), lastUse: activity.snapshot.lastUse, busy: activity.snapshot.busy,
            transferring: false, timeout: timeout)
        #expect(after == .checkAt(later + timeout))
    }

    @Test("an older use does not move the last use back")
    func usesOnlyMoveForward() {
        let activity = VaultActivity()
        activity.touch(t0 + .seconds(100))
        activity.touch(t0 + .seconds(50))
        #expect(activity.snapshot.lastUse == t0 + .seconds(100))
    }

    @Test("logind session paths are encoded as sd_bus_path_encode does")
    func sessionPaths() {
        #expect(LogindWatcher.sessionPath(id: "2") == "/org/freedesktop/login1/session/_32")
        #expect(LogindWatcher.sessionPath(id: "c7") == "/org/freedesktop/login1/session/c7")
        #expect(LogindWatcher.sessionPath(id: "12") == "/org/freedesktop/login1/session/_312")
        #expect(LogindWatcher.sessionPath(id: "a-b") == "/org/freedesktop/login1/session/a_2db")
    }
}
