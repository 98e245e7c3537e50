import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoTransfers
import NIOCore
import Synchronization

/// Photos uploaded for sending (`POST /v1/uploads`, then `POST /v1/send` with `uploads`): a
/// browser can give file contents but not paths. They are held in this process's memory, never
/// written to disk, and sent from there like photos taken from the vault (such a transfer
/// resumes while the agent runs, not after a restart). Each upload is used by one send; one
/// that is not sent within `lifetime` is dropped (`dropWhenDue`, run by the agent). A send holds the bytes it took
/// (`UploadHold`) until its transfers are done with them, and they count against the total
/// until then: they are memory all the same.
package final class UploadStore: Sendable {
    package static let lifetime: Duration = .seconds(30 * 60)
    /// All uploads waiting to be sent, together (1 GiB; less in tests).
    package let maxTotalBytes: Int64
    /// How long an upload waits for its send (`lifetime`; shorter in tests).
    package let uploadLifetime: Duration

    private let clock: any AgentClock

    package init(maxTotalBytes: Int64 = 1 << 30, lifetime: Duration = UploadStore.lifetime, clock: any AgentClock) {
        self.maxTotalBytes = maxTotalBytes
        uploadLifetime = lifetime
        self.clock = clock
    }

    private struct Upload {
        var item: PreparedItem
        var at: ContinuousClock.Instant
    }

    private struct State {
        var waiting: [String: Upload] = [:]
        /// Bytes of uploads still arriving: counted against the total as they arrive, so that
        /// uploads made side by side cannot pass it together.
        var arriving: Int64 = 0
        /// Bytes of uploads taken by sends that still hold them (`UploadHold`): without them, a
        /// client could upload the total, send, upload the total again, and so on.
        var held: Int64 = 0

        mutating func dropExpired(_ lifetime: Duration, now: ContinuousClock.Instant) {
            waiting = waiting.filter { $0.value.at + lifetime > now }
        }

        var total: Int64 { waiting.values.reduce(arriving + held) { $0 + $1.item.size } }
    }

    private let state = Mutex(State())
    /// Woken each time expired uploads were dropped (tests wait on it).
    package let expiries = Waiters()
    /// Woken when an upload starts waiting (`dropWhenDue` waits on it while none does).
    private let added = Waiters()
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Counts `count` more bytes arriving; false when that would pass `maxTotalBytes`.
    package func reserve(_ count: Int64) -> Bool {
        state.withLock { s in
            s.dropExpired(uploadLifetime, now: clock.now)
            guard s.total + count <= maxTotalBytes else { return false }
            s.arriving += count
            return true
        }
    }

    package func release(_ count: Int64) {
        state.withLock { $0.arriving -= count }
    }

    /// An upload arrived whole: its bytes stop arriving and start waiting.
    package func add(_ item: PreparedItem, arrived: Int64) {
        state.withLock { s in
            s.arriving -= arrived
            s.waiting[item.id] = Upload(item: item, at: clock.now)
        }
        added.wakeAll()
    }

    /// Drops each upload when its time is up, whether or not anything else happens meanwhile:
    /// its bytes are memory the agent holds for nobody. Runs until the task is cancelled. An
    /// upload given back (`UploadHold.giveBack`) with less time left than the one waited for
    /// goes at that one's time; it can no longer be taken past its own (`take` checks).
    package func dropWhenDue() async {
        while !Task.isCancelled {
            let next = state.withLock { s in
                s.dropExpired(uploadLifetime, now: clock.now)
                return s.waiting.values.map(\.at).min()
            }
            expiries.wakeAll()
            if let next {
                try? await clock.sleep(until: next + uploadLifetime)
            } else {
                await added.wait(unless: { self.waitingCount > 0 })
            }
        }
    }

    /// Takes the uploads named by `ids` out of the store (all or none) for one send; their bytes
    /// count against the total until the hold ends (`UploadHold`).
    package func take(_ ids: [String]) throws -> UploadHold {
        guard Set(ids).count == ids.count else {
            throw AgentError(.invalidRequest, "an upload is named twice; each is sent once")
        }
        return try state.withLock { s in
            s.dropExpired(uploadLifetime, now: clock.now)
            if let missing = ids.first(where: { s.waiting[$0] == nil }) {
                throw AgentError(
                    .notFound,
                    "no upload \(missing) (uploads wait \(Self.lifetime.components.seconds / 60) minutes to be sent, once)"
                )
            }
            let taken = ids.map { (id: $0, upload: s.waiting.removeValue(forKey: $0)!) }
            let hold = UploadHold(store: self, taken: taken.map { ($0.id, $0.upload.item, $0.upload.at) })
            s.held += hold.bytes
            return hold
        }
    }

    /// A hold ends: its bytes stop counting; `givingBack`: its uploads wait again, each until
    /// the end of the lifetime it had (an expired one is not given back).
    fileprivate func end(_ hold: UploadHold, givingBack: Bool) {
        state.withLock { s in
            s.held -= hold.bytes
            guard givingBack else { return }
            for (id, item, at) in hold.taken where at + uploadLifetime > clock.now {
                s.waiting[id] = Upload(item: item, at: at)
            }
        }
        if givingBack { added.wakeAll() }
    }
}

/// Uploads taken by one send (`UploadStore.take`). Their bytes count against the store's total
/// until the hold ends: `release()` once the send is done with them (every transfer ended, or a
/// relay holds the photos), `giveBack()` when the send failed, so that a retry with the same
/// ids works. Ends once; a hold dropped without ending is released.
package final class UploadHold: Sendable {
    private let store: UploadStore
    fileprivate let taken: [(id: String, item: PreparedItem, at: ContinuousClock.Instant)]
    package let bytes: Int64
    private let ended = Mutex(false)

    package var items: [PreparedItem] { taken.map(\.item) }
    package var isEmpty: Bool { taken.isEmpty }

    fileprivate init(store: UploadStore, taken: [(id: String, item: PreparedItem, at: ContinuousClock.Instant)]) {
        self.store = store
        self.taken = taken
        bytes = taken.reduce(0) { $0 + $1.item.size }
    }

    deinit { end(givingBack: false) }

    package func release() { end(givingBack: false) }

    package func giveBack() { end(givingBack: true) }

    private func end(givingBack: Bool) {
        let first = ended.withLock { e in
            defer { e = true }
            return !e
        }
        if first { store.end(self, givingBack: givingBack) }
    }

    /// Ends the hold once every transfer of the send has let go of the photos' bytes
    /// (`OutgoingTransfer.letGoOfBytes`): given back if they all failed (no such peer, a
    /// preparation error, the peer unreachable, a relay's refusal…: the user retries with the
    /// same ids), released otherwise (a send that was delivered, held by a relay, declined by its
    /// peer or cancelled by the user consumed them).
    package func end(after transfers: [OutgoingTransfer]) {
        for t in transfers {
            t.whenLetGoOfBytes { [self] in
                let ends = transfers.map(\.letGoOfBytesIn)
                guard ends.allSatisfy({ $0 != nil }) else { return }
                if ends.allSatisfy({ $0 == .failed }) { giveBack() } else { release() }
            }
        }
    }
}
