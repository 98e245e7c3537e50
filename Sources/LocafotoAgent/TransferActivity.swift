import Synchronization

/// Whether photo bytes are moving in or out of this node right now (a sender streaming items,
/// a receiver taking them). The media indexer waits while they are: it decrypts every new photo
/// to read its EXIF and make a thumbnail, and on a 2-core machine that pass took a third of the
/// receiving agent's CPU in the middle of the transfer it was indexing.
final class TransferActivity: Sendable {
    private struct State {
        var active = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    var isActive: Bool { state.withLock { $0.active > 0 } }

    func begin() {
        state.withLock { $0.active += 1 }
    }

    func end() {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            precondition(s.active > 0, "TransferActivity.end without begin")
            s.active -= 1
            guard s.active == 0 else { return [] }
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for c in woken { c.resume() }
    }

    /// Returns when no transfer is moving bytes (at once if none is), or when the task is
    /// cancelled (shutdown must not wait for a send to finish).
    func whenIdle() async {
        let key = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                // The cancellation flag is set before the handler runs: looked at under the lock,
                // a cancel that came before registering is not missed.
                let ready = state.withLock { s in
                    if s.active == 0 || Task.isCancelled { return true }
                    s.waiters[key] = c
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }
}
