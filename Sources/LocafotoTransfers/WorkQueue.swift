import ServiceLifecycle

/// A role's own work — the sender's sends, resumes and withdrawals; the relay's deliveries — run
/// as child tasks of one service in the ServiceGroup (`WorkQueueService`), not as stray tasks:
/// stopping the agent cancels them, and a cancelled send is left `interrupted` and stored, to
/// resume on the next start. Work submitted before the service runs waits for it.
/// Each role owns its queue and alone submits to it: its work never passes through another role
/// or a shared service on its way (docs/architecture.md, "The path of a send").
package final class WorkQueue: Sendable {
    package typealias Job = @Sendable () async -> Void
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    package init() {
        (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
    }

    package func submit(_ job: @escaping Job) {
        continuation.yield(job)
    }

    /// Runs submitted jobs, each in a child task, until cancelled; then waits for them to end.
    package func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                group.addTask { await job() }
            }
        }
    }
}

/// Runs a role's `WorkQueue` in the agent's ServiceGroup until graceful shutdown.
package struct WorkQueueService: Service {
    package let work: WorkQueue

    package init(work: WorkQueue) { self.work = work }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await work.run() }
    }
}
