import LocafotoClock

/// Keeps a session under `--limit-rate` by sleeping when it runs ahead of the allowed rate.
package struct SendPacer {
    package let bytesPerSecond: Int64?
    private var sent: Int64 = 0
    private let clock: any AgentClock
    private let started: ContinuousClock.Instant

    package init(bytesPerSecond: Int64?, clock: any AgentClock) {
        self.bytesPerSecond = bytesPerSecond
        self.clock = clock
        started = clock.now
    }

    package mutating func account(_ n: Int) async throws {
        guard let rate = bytesPerSecond, rate > 0 else { return }
        sent += Int64(n)
        let due = Duration.seconds(Double(sent) / Double(rate))
        let elapsed = clock.now - started
        if due > elapsed { try await clock.sleep(for: due - elapsed) }
    }
}
