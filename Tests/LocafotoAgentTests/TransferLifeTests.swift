import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import Synchronization
import Testing

@testable import LocafotoSending
@testable import LocafotoTransfers

/// The rules of a transfer's life, as a value: no agent, no lock, no clock.
@Suite("A transfer's life")
struct TransferLifeTests {
    static func fresh() -> TransferLife {
        TransferLife(
            TransferSnapshot(
                id: "t", peer: PeerRef(name: "bob", fingerprint: nil), state: .preparing, items: [], sentBytes: 0,
                totalBytes: 100, startedAt: Date(timeIntervalSince1970: 0)))
    }

    static func kinds(_ actions: [TransferLife.Action]) -> [String] {
        actions.map {
            switch $0 {
            case .wakeWaiters: "wake"
            case .announceState: "state"
            case .announceProgress: "progress"
            case .letGoOfBytes(let tell): "letGo(\(tell.count))"
            case .beforeEnd: "beforeEnd"
            case .ended: "ended"
            }
        }
    }

    @Test("a change of state or message is a new phase, woken and announced; bytes alone are progress")
    func phases() {
        var life = Self.fresh()
        #expect(Self.kinds(life.update { $0.state = .connecting }) == ["wake", "state"])
        #expect(life.snapshot.phase == 1)
        #expect(Self.kinds(life.update { $0.message = "waiting for bob" }) == ["wake", "state"])
        #expect(Self.kinds(life.update { $0.sentBytes = 10 }) == ["progress"])
        #expect(Self.kinds(life.update { $0.sentBytes = 10 }) == [])
        #expect(life.snapshot.phase == 2)
    }

    @Test("the end: bytes let go of and the plan forgotten first, once; then the end, dated, a new phase")
    func end() {
        var life = Self.fresh()
        let told = Mutex(0)
        #expect(!life.whenLetGoOfBytes { told.withLock { $0 += 1 } })
        life.beforeEnding {}
        #expect(Self.kinds(life.ending(in: .done)) == ["letGo(1)", "beforeEnd"])
        #expect(life.letGoIn == .done)
        #expect(life.snapshot.finishedAt == nil, "not visible as ended before its actions ran")
        let at = Date(timeIntervalSince1970: 42)
        #expect(Self.kinds(life.end(.done, "sent", code: nil, at: at)) == ["wake", "state", "ended"])
        #expect(life.snapshot.finishedAt == at && life.snapshot.state == .done && life.snapshot.phase == 1)
        // Let go of once: a later call tells nobody again, and a new waiter runs at once.
        #expect(Self.kinds(life.letGoOfBytes(in: .failed)) == [])
        #expect(life.whenLetGoOfBytes {})
        #expect(life.letGoIn == .done)
    }

    @Test("a relay that holds the photos lets the bytes go before the end; the end then only ends")
    func heldThenEnded() {
        var life = Self.fresh()
        #expect(Self.kinds(life.letGoOfBytes(in: .held)) == ["letGo(0)"])
        #expect(Self.kinds(life.ending(in: .done)) == [])
        #expect(Self.kinds(life.end(.done, nil, code: .peerUnavailable, at: Date())) == ["wake", "state", "ended"])
        #expect(life.snapshot.code == .peerUnavailable)
    }

    @Test("a cancel request is remembered")
    func cancel() {
        var life = Self.fresh()
        #expect(!life.cancelRequested)
        life.requestCancel()
        #expect(life.cancelRequested)
    }

    @Test("interrupted after its offer: the window restarts and the back-off is reset; before it: it backs off")
    func interrupt() {
        var life = Self.fresh()
        let t0 = Date(timeIntervalSince1970: 1000)
        _ = life.update { $0.state = .sending }
        #expect(Self.kinds(life.interrupt("cut", at: t0, resumeBase: .seconds(5))) == ["wake", "state"])
        #expect(life.snapshot.state == .interrupted && life.interruptedAt == t0)
        #expect(life.resumeRetry.isDue(now: t0, endpoints: []))
        // A resume that does not reach its offer keeps the first break and backs off 10 s.
        _ = life.update { $0.state = .connecting }
        let t1 = t0.addingTimeInterval(60)
        _ = life.interrupt("nobody answers", at: t1, resumeBase: .seconds(5))
        #expect(life.interruptedAt == t0, "the resume window runs from the first break")
        #expect(!life.resumeRetry.isDue(now: t1.addingTimeInterval(9), endpoints: []))
        #expect(life.resumeRetry.isDue(now: t1.addingTimeInterval(10), endpoints: []))
        // One that reached its offer again: the window runs from this break, no back-off.
        _ = life.update { $0.state = .sending }
        let t2 = t1.addingTimeInterval(60)
        _ = life.interrupt("cut again", at: t2, resumeBase: .seconds(5))
        #expect(life.interruptedAt == t2 && life.resumeRetry.isDue(now: t2, endpoints: []))
    }
}
