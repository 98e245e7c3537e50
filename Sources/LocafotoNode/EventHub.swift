import Foundation
import LocafotoClock
import Synchronization

/// The node's events (`NodeEvent`; `GET /v1/events` shows them): every service publishes what
/// happens, every reader of the stream gets it. A reader that falls behind by more than `bufferLimit` events loses
/// the oldest and learns of it (`missed`), so a stalled client never holds the agent's memory.
/// Progress events are thinned to one per `progressInterval` per offer or transfer.
public final class EventHub: Sendable {
    public static let bufferLimit = 1024
    /// At most one progress event per offer or transfer in this time.
    package let progressInterval: Duration

    private struct State {
        var seq = 0
        var readers: [Int: AsyncStream<PublishedEvent>.Continuation] = [:]
        var nextReader = 0
        /// When each offer's or transfer's last progress event went out.
        var lastProgress: [String: (at: ContinuousClock.Instant, bytes: Int64)] = [:]
    }
    private let state = Mutex(State())

    private let clock: any AgentClock

    public init(progressInterval: Duration = .milliseconds(250), clock: any AgentClock = SystemClock()) {
        self.progressInterval = progressInterval
        self.clock = clock
    }

    /// A stream of every event published from now on, which it starts with a `ready` event; it
    /// ends when the task reading it is cancelled or `finishAll` is called.
    public func subscribe() -> AsyncStream<PublishedEvent> {
        subscription().stream
    }

    /// `subscribe`, with a way to end the stream early (after the events it holds): the stream
    /// of a web session ends when the session does.
    package func subscription() -> (stream: AsyncStream<PublishedEvent>, end: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PublishedEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        let id = state.withLock { s in
            s.nextReader += 1
            s.readers[s.nextReader] = continuation
            // Under the lock: no event can come between this one and the subscription.
            continuation.yield(PublishedEvent(seq: s.seq, at: clock.date, event: nil))
            return s.nextReader
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.readers.removeValue(forKey: id) }
        }
        return (stream, { continuation.finish() })
    }

    public func publish(_ happened: NodeEvent) {
        let at = clock.date
        state.withLock { s in
            guard !s.readers.isEmpty else { return }
            s.seq += 1
            let event = PublishedEvent(seq: s.seq, at: at, event: happened)
            for (_, reader) in s.readers {
                // A full buffer drops this event for that reader; the gap in `seq` tells it.
                _ = reader.yield(event)
            }
        }
    }

    /// A progress event for `key` (an offer, a transfer or an import) at `bytes`, unless one
    /// went out within `progressInterval`; its rate comes from the previous one. `final`
    /// progress (the last bytes) always goes out and forgets the key.
    package func progress(
        key: String, bytes: Int64, final: Bool = false, _ event: (NodeEvent.Progress) -> NodeEvent
    ) {
        let now = clock.now
        let rate = state.withLock { s -> Double?? in
            guard !s.readers.isEmpty else { return .none }
            let last = s.lastProgress[key]
            if !final, let last, now - last.at < progressInterval { return .none }
            s.lastProgress[key] = final ? nil : (now, bytes)
            guard let last, bytes >= last.bytes else { return .some(nil) }
            let seconds = (now - last.at).seconds
            return .some(seconds > 0 ? Double(bytes - last.bytes) / seconds : nil)
        }
        guard case .some(let rate) = rate else { return }
        publish(event(NodeEvent.Progress(bytes: bytes, bytesPerSecond: rate)))
    }

    /// Forgets the progress bookkeeping of an offer or transfer that ended.
    package func forget(_ key: String) {
        state.withLock { _ = $0.lastProgress.removeValue(forKey: key) }
    }

    /// Ends every open stream (the agent is stopping).
    public func finishAll() {
        let readers = state.withLock { s in
            defer { s.readers.removeAll() }
            return Array(s.readers.values)
        }
        for r in readers { r.finish() }
    }
}
