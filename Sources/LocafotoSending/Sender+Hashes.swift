import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoTransfers
import LocafotoWire
import Synchronization

extension Sender {
    /// Fills in the content hash of every planned item that has none yet. A receiver that
    /// announced cap `late-hash` computes the hash itself as the photo arrives, so a direct send
    /// to it reads each file once (while sealing it); an offer to any other peer, and a deposit
    /// at a relay (whose offer signature covers the hashes), needs them first.
    package func ensureHashes(_ t: OutgoingTransfer) async throws {
        guard let plan = t.plan.withLock({ $0 }) else { return }
        let missing = plan.items.indices.filter { plan.items[$0].hash == nil }
        guard !missing.isEmpty else { return }
        let jobs = missing.map { (plan.items[$0].path, plan.items[$0].size, plan.items[$0].stamp, plan.items[$0].name) }
        // Said while it lasts: hashing gigabytes takes seconds, and `send` shows the message.
        let bytes = missing.reduce(Int64(0)) { $0 + plan.items[$1].size }
        t.update { $0.message = "computing content hashes of \(missing.count) photo(s) (\(ByteSize.text(bytes)))" }
        let hashes = try await t.unlessCancelled { try await Self.hashFiles(jobs) }
        t.update { $0.message = nil }
        t.plan.withLock { p in
            for (i, hash) in zip(missing, hashes) { p?.items[i].hash = hash }
        }
        persist(t)
    }

    /// Hashes the files, up to one per core at a time.
    private static func hashFiles(_ jobs: [(path: String?, size: Int64, stamp: FileStamp?, name: String)]) async throws
        -> [[UInt8]]
    {
        try await BlockingWork.map(jobs.count) { i in
            let job = jobs[i]
            guard let path = job.path else {
                // Bytes that lived only in memory (compressed, or from the vault) are hashed when
                // prepared; after an agent restart they are gone.
                throw AgentError(
                    .conflict,
                    "'\(job.name)' was prepared in memory and is gone since the agent restarted; send it again")
            }
            return try PreparedItem.hashFile(path: path, size: job.size, stamp: job.stamp)
        }
    }
}
