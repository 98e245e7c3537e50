import Testing

@testable import LocafotoAgent
@testable import LocafotoNode

/// The media indexer waits while photo bytes move. Every wait here ends on an event; a broken
/// wake-up shows as a hang, not as a timing-dependent failure.
@Suite("Transfer activity")
struct TransferActivityTests {
    @Test("with no transfer, whenIdle returns at once")
    func idleReturnsAtOnce() async {
        let a = TransferActivity()
        #expect(!a.isActive)
        await a.whenIdle()
    }

    @Test("whenIdle waits for the last of several transfers to end")
    func waitsForTheLastTransfer() async {
        let a = TransferActivity()
        a.begin()
        a.begin()
        let waiting = Task {
            await a.whenIdle()
            return a.isActive
        }
        a.end()
        #expect(a.isActive)
        a.end()
        #expect(await waiting.value == false)
    }

    @Test("a cancelled wait ends while a transfer still runs")
    func cancelledWaitEnds() async {
        let a = TransferActivity()
        a.begin()
        let waiting = Task {
            await a.whenIdle()
            return a.isActive
        }
        waiting.cancel()
        #expect(await waiting.value == true)
        a.end()
    }
}
