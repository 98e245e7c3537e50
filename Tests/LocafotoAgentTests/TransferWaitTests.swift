import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoTestSupport
import Testing

@testable import LocafotoAgent
@testable import LocafotoSending
@testable import LocafotoTransfers

/// `GET /v1/transfers/{id}?after=N&wait=S`: the CLI waits for the next phase of a transfer
/// instead of polling. Every wait here ends on an event or is a one-hour hang guard.
@Suite("Waiting for a transfer's next phase")
struct TransferWaitTests {
    static let guardTime: Duration = .seconds(3600)

    @Test("a change of state wakes a client waiting for the next phase")
    func wakesOnStateChange() async throws {
        let t = OutgoingTransfer(peer: "bob", clock: SystemClock())
        let phase = t.current.phase
        let waiting = Task { await t.snapshot(after: phase, timeout: Self.guardTime) }
        while t.waitingClients == 0 { await Task.yield() }  // registered: the wake path is what runs
        t.update { $0.state = .offered }
        let seen = await waiting.value
        #expect(seen.state == .offered)
        #expect(seen.phase == phase + 1)
        #expect(t.waitingClients == 0)
    }

    @Test("bytes alone do not move the phase; state, message and the end do")
    func phaseCountsChangesNotBytes() {
        let t = OutgoingTransfer(peer: "bob", clock: SystemClock())
        t.update { $0.items = [.init(name: "a.jpg", bytes: 10, status: .sending)] }
        #expect(t.current.phase == 0)
        t.update {
            $0.sentBytes += 5
            $0.items[0].sentBytes = 5
        }
        #expect(t.current.phase == 0)
        t.update { $0.message = "waiting up to 10 s" }
        #expect(t.current.phase == 1)
        t.update { $0.message = "waiting up to 10 s" }
        #expect(t.current.phase == 1)
        t.update { $0.state = .sending }
        #expect(t.current.phase == 2)
        t.finish(.done, "bob imported 1 item(s)")
        #expect(t.current.phase == 3)
        #expect(t.current.finishedAt != nil)
    }

    @Test("a client behind the current phase is answered at once")
    func behindIsAnsweredAtOnce() async {
        let t = OutgoingTransfer(peer: "bob", clock: SystemClock())
        t.update { $0.state = .connecting }
        let seen = await t.snapshot(after: 0, timeout: Self.guardTime)
        #expect(seen.state == .connecting)
        #expect(t.waitingClients == 0)
    }

    @Test("with nothing changing, the answer comes when the wait is over, by the transfer's clock")
    func timeoutAnswers() async {
        let clock = ManualClock()
        let t = OutgoingTransfer(peer: "bob", clock: clock)
        #expect(await t.snapshot(after: 0, timeout: .zero).phase == 0)
        let waiting = Task { await t.snapshot(after: 0, timeout: .seconds(30)) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(29))
        #expect(t.waitingClients == 1, "29 s into a 30 s wait, the client still waits")
        clock.advance(by: .seconds(1))
        let seen = await waiting.value
        #expect(seen.phase == 0)
        #expect(t.waitingClients == 0)
    }

    @Test("a cancelled wait ends and leaves no waiter behind")
    func cancelledWaitEnds() async {
        let t = OutgoingTransfer(peer: "bob", clock: SystemClock())
        let waiting = Task { await t.snapshot(after: 0, timeout: Self.guardTime) }
        while t.waitingClients == 0 { await Task.yield() }
        waiting.cancel()
        let seen = await waiting.value
        #expect(seen.phase == 0)
        #expect(t.waitingClients == 0)
    }
}
