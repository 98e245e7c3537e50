import Foundation
import Testing

@testable import LocafotoAgent
@testable import LocafotoPeers
@testable import LocafotoSending
@testable import LocafotoTransfers

/// The pacing of resume attempts (protocol/messages.md "Resume", When), on made-up instants.
@Suite("Resume back-off")
struct ResumeRetryTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let here = [PeerEndpoint(address: "127.0.0.1", port: 4000, family: "ipv4", instanceName: "bob", interfaceIndex: 1)]
    let there = [PeerEndpoint(address: "127.0.0.1", port: 4001, family: "ipv4", instanceName: "bob", interfaceIndex: 1)]

    @Test("the wait doubles from 2·base after each failure, up to 60·base")
    func schedule() {
        let waits = (1...8).map { ResumeRetry.delay(afterFailures: $0, base: .seconds(5)) }
        #expect(waits == [10, 20, 40, 80, 160, 300, 300, 300].map { Duration.seconds($0) })
        #expect(ResumeRetry.delay(afterFailures: 1000, base: .seconds(5)) == .seconds(300))
    }

    @Test("after failures at one address, the next attempt waits; other addresses are tried at once")
    func failuresBackOff() {
        var r = ResumeRetry()
        #expect(r.isDue(now: t0, endpoints: here), "a first attempt needs no wait")
        for n in 1...3 {
            r.attempting(here)
            r.failed(now: t0, base: .seconds(5))
            let wait = Double(5 << n)
            #expect(!r.isDue(now: t0.addingTimeInterval(wait - 1), endpoints: here))
            #expect(r.isDue(now: t0.addingTimeInterval(wait), endpoints: here))
            #expect(r.isDue(now: t0, endpoints: there), "a peer announced elsewhere is tried at once")
            #expect(r.isDue(now: t0, endpoints: here + there), "also when it keeps an address that failed")
            #expect(!r.isDue(now: t0, endpoints: []), "fewer of the same addresses is no news")
        }
        #expect(r.failures == 3)
    }

    @Test("an attempt that reached the peer's offer starts the count again")
    func reachingThePeerResets() {
        var r = ResumeRetry()
        r.attempting(here)
        r.failed(now: t0, base: .seconds(5))
        r.failed(now: t0, base: .seconds(5))
        r.reachedPeer()
        #expect(r == ResumeRetry())
        #expect(r.isDue(now: t0, endpoints: here))
    }
}
