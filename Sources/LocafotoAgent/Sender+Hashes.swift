import LocafotoWire
import NIOCore
import NIOPosix

extension Sender {
    /// Fills in the content hash of every planned item that has none yet. A receiver that
    /// announced cap `late-hash` computes the hash itself as the photo arrives, so a direct send
    /// to it reads each file once (while sealing it); an offer to any other peer, and a deposit
    /// at a relay (whose offer signature covers the hashes), needs them first.
    func ensureHashes(_ t: OutgoingTransfer) async throws {
        guard let plan = t.plan.withLock({ $0 }) else { return }
        let missing = plan.items.indices.filter { plan.items[$0].hash == nil }
        guard !missing.isEmpty else { return }
        let jobs = missing.map { (plan.items[$0].path, plan.items[$0].size, plan.items[$0].stamp, plan.items[$0].name) }
        let hashes = try await t.unlessCancelled { try await Self.hashFiles(jobs) }
        t.plan.withLock { p in
            for (i, hash) in zip(missing, hashes) { p?.items[i].hash = hash }
        }
        persist(t)
    }

    /// Hashes files on NIO's thread pool (reading blocks), up to one file per core at a time.
    private static func hashFiles(_ jobs: [(path: String?, size: Int64, stamp: FileStamp?, name: String)]) async throws -> [[UInt8]] {
        let width = max(1, System.coreCount)
        return try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            var out = [[UInt8]?](repeating: nil, count: jobs.count)
            var next = 0
            func start() {
                let i = next
                next += 1
                let job = jobs[i]
                group.addTask {
                    guard let path = job.path else {
                        // Bytes that lived only in memory (compressed, or from the vault) are
                        // hashed when prepared; after an agent restart they are gone.
                        throw AgentError(.conflict, "'\(job.name)' was prepared in memory and is gone since the agent restarted; send it again")
                    }
                    let hash = try await NIOThreadPool.singleton.runIfActive {
                        try PreparedItem.hashFile(path: path, size: job.size, stamp: job.stamp)
                    }
                    return (i, hash)
                }
            }
            while next < min(width, jobs.count) { start() }
            while let (i, hash) = try await group.next() {
                out[i] = hash
                if next < jobs.count { start() }
            }
            return out.map { $0! }
        }
    }
}
