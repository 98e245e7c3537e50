import Synchronization

/// Whether photo bytes are moving in or out of this node right now (a sender streaming items,
/// a receiver taking them). The media indexer waits while they are: it decrypts every new photo
/// to read its EXIF and make a thumbnail, and on a 2-core machine that pass took a third of the
/// receiving agent's CPU in the middle of the transfer it was indexing.
package final class TransferActivity: Sendable {
    package init() {}

    private let active = Mutex(0)
    private let waiters = Waiters()

    package var isActive: Bool { active.withLock { $0 > 0 } }

    package func begin() {
        active.withLock { $0 += 1 }
    }

    package func end() {
        let idle = active.withLock { n -> Bool in
            precondition(n > 0, "TransferActivity.end without begin")
            n -= 1
            return n == 0
        }
        if idle { waiters.wakeAll() }
    }

    /// Returns when no transfer is moving bytes (at once if none is), or when the task is
    /// cancelled (shutdown must not wait for a send to finish).
    package func whenIdle() async {
        await waiters.wait(unless: { [self] in active.withLock { $0 == 0 } })
    }
}
