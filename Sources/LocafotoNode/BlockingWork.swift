import NIOCore
import NIOPosix

/// File work that blocks (reading, hashing, compressing photos) runs on NIO's thread pool, so
/// that sessions and the control socket keep their share of the cooperative pool.
package enum BlockingWork {
    /// `work(0)`, …, `work(count - 1)` on the thread pool, at most one per core at a time;
    /// the results in index order. The first error ends the whole map.
    package static func map<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) throws -> T) async throws
        -> [T]
    {
        let width = max(1, System.coreCount)
        return try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var out = [T?](repeating: nil, count: count)
            var next = 0
            func start() {
                let i = next
                next += 1
                group.addTask { try await NIOThreadPool.singleton.runIfActive { (i, try work(i)) } }
            }
            while next < min(width, count) { start() }
            while let (i, value) = try await group.next() {
                out[i] = value
                if next < count { start() }
            }
            return out.map { $0! }
        }
    }

    /// One piece of blocking work on the thread pool.
    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
