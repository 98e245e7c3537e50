import Foundation
import LocafotoClock
import LocafotoNode
import LocafotoPeers

/// Pacing of the attempts to resume one interrupted transfer (protocol/messages.md "Resume",
/// When). An attempt that ends before its OFFER went out (nobody answers, the handshake fails)
/// is a failure; after n failures in a row the next attempt waits `base`·2ⁿ, at most `base`·60
/// (with the agent's 5 s: 10 s, 20 s, 40 s, … 5 min). A peer that announces addresses other than
/// those that failed is tried at once (it came back, perhaps on another port), and an attempt that
/// reached the offer starts the count again.
package struct ResumeRetry: Sendable, Equatable {
    private(set) var failures = 0
    private(set) var notBefore: Date?
    /// The addresses the last attempt was made at.
    private(set) var tried: Set<PeerEndpoint> = []

    package static let maxFactor = 60

    package static func delay(afterFailures n: Int, base: Duration) -> Duration {
        let factor = n >= 6 ? maxFactor : min(1 << n, maxFactor)
        return base * factor
    }

    package mutating func attempting(_ endpoints: [PeerEndpoint]) {
        tried = Set(endpoints)
    }

    package mutating func failed(now: Date, base: Duration) {
        failures += 1
        notBefore = now.addingTimeInterval(Self.delay(afterFailures: failures, base: base).seconds)
    }

    package mutating func reachedPeer() {
        self = ResumeRetry()
    }

    /// Whether an attempt may start now, with the peer announced at `endpoints`: at once if
    /// one of them is not among those that failed.
    package func isDue(now: Date, endpoints: [PeerEndpoint]) -> Bool {
        guard let notBefore, now < notBefore else { return true }
        return !Set(endpoints).isSubset(of: tried)
    }
}
