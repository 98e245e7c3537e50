import ServiceLifecycle

/// The agent's outgoing work — sends, their resumption, a relay's deliveries — run as child
/// tasks of one service in the ServiceGroup (`OutboxService`), not as stray tasks: stopping the
/// agent cancels them, and a cancelled send is left `interrupted` and stored, to resume on the
/// next start. Work submitted before the service runs waits for it.
final class Outbox: Sendable {
    typealias Job = @Sendable () async -> Void
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init() {
        (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
    }

    func submit(_ job: @escaping Job) {
        continuation.yield(job)
    }

    /// Runs submitted jobs, each in a child task, until cancelled; then waits for them to end.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                group.addTask { await job() }
            }
        }
    }
}

struct OutboxService: Service {
    let outbox: Outbox

    func run() async throws {
        try? await cancelWhenGracefulShutdown { await outbox.run() }
    }
}
