import Foundation

/// The time every timer of a node reads: pings, deadlines, pacing, resume back-off, offer
/// expiry, upload lifetime, auto-lock. The agent is given one (`SystemClock` in a running
/// node); a test gives a clock it moves itself, so that a 30-minute lifetime is tested by
/// moving the clock 30 minutes rather than by waiting or by shrinking the lifetime.
///
/// Two readings, because they answer different questions: `now` for durations and deadlines
/// (monotonic: a wall-clock change never fires or stalls a timer), `date` for what is stored
/// or shown (an offer's expiry in the store, a receipt's time). Both move together.
public protocol AgentClock: Sendable {
    /// The instant for durations and deadlines; never goes back.
    var now: ContinuousClock.Instant { get }
    /// Wall time, for what is stored or shown.
    var date: Date { get }
    /// Returns once this clock reaches `deadline` (at once when it has); throws
    /// `CancellationError` when the waiting task is cancelled first.
    func sleep(until deadline: ContinuousClock.Instant) async throws
}

extension AgentClock {
    /// Returns once `duration` has passed on this clock.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The machine's time: `ContinuousClock` (which counts while the machine sleeps, so an offer
/// expires on time across a suspend) and the system's wall clock.
public struct SystemClock: AgentClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public var date: Date { Date() }
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: deadline, clock: .continuous)
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
