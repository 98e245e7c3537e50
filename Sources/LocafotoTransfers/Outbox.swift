import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import ServiceLifecycle
import Synchronization

/// The agent's outgoing work — sends, their resumption, a relay's deliveries — run as child
/// tasks of one service in the ServiceGroup (`OutboxService`), not as stray tasks: stopping the
/// agent cancels them, and a cancelled send is left `interrupted` and stored, to resume on the
/// next start. Work submitted before the service runs waits for it.
/// It also keeps the table of this node's outgoing transfers, finished ones for an hour.
package final class Outbox: Sendable {
    package typealias Job = @Sendable () async -> Void
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation
    private let table = Mutex<[String: OutgoingTransfer]>([:])
    /// Where registered transfers announce their changes.
    private let events: EventHub?

    private let clock: any AgentClock

    package init(events: EventHub? = nil, clock: any AgentClock) {
        (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
        self.events = events
        self.clock = clock
    }

    package func submit(_ job: @escaping Job) {
        continuation.yield(job)
    }

    // MARK: transfers

    package func register(_ t: OutgoingTransfer) {
        table.withLock { all in
            // Keep the table small: forget finished transfers older than an hour.
            let cutoff = clock.date.addingTimeInterval(-3600)
            all = all.filter { $0.value.current.finishedAt.map { $0 > cutoff } ?? true }
            all[t.id] = t
        }
        if let events { t.announce(on: events) }
    }

    package func transfer(_ id: String) -> OutgoingTransfer? {
        table.withLock { $0[id] }
    }

    package var transfers: [OutgoingTransfer] {
        table.withLock { Array($0.values) }
    }

    package func transfers(in state: OutgoingTransfer.State) -> [OutgoingTransfer] {
        transfers.filter { $0.current.state == state }
    }

    /// The transfer whose id starts with `prefix` (4+ characters), or an error that says why not.
    package func find(_ prefix: String) throws -> OutgoingTransfer {
        let p = prefix.lowercased()
        guard p.count >= 4 else { throw AgentError(.invalidRequest, "give at least 4 characters of the transfer id") }
        let matches = transfers.filter { $0.id.hasPrefix(p) }
        guard let t = matches.first else {
            throw AgentError(.notFound, "no transfer \(prefix); run `locafoto transfers`")
        }
        guard matches.count == 1 else { throw AgentError(.ambiguous, "transfer id \(prefix) is ambiguous") }
        return t
    }

    // MARK: jobs

    /// Runs submitted jobs, each in a child task, until cancelled; then waits for them to end.
    package func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                group.addTask { await job() }
            }
        }
    }
}

package struct OutboxService: Service {
    package let outbox: Outbox

    package init(outbox: Outbox) { self.outbox = outbox }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await outbox.run() }
    }
}
