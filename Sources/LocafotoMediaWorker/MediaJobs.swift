import LocafotoMedia

/// Where the agent's photo decoding runs: in worker processes (the hidden command
/// `media-worker`; what the agent does), or in the calling process (tests, tools). Either way the
/// same `MediaJob` is done.
public struct MediaJobs: Sendable {
    public let workers: MediaWorkers?

    public static var inProcess: MediaJobs { MediaJobs(workers: nil) }

    public init(workers: MediaWorkers?) { self.workers = workers }

    /// Blocks the calling thread: call it from blocking work.
    public func perform(_ request: MediaRequest, body: [UInt8] = []) throws -> MediaResult {
        if let workers { return try workers.perform(request, body: body) }
        let (reply, out) = MediaJob.perform(request, body: body)
        return MediaResult(reply, out)
    }
}
