import LocafotoCrypto
import LocafotoInbox
import LocafotoNode
import Synchronization

/// The plaintext head of a received photo, zeroed when the last reference goes.
package final class PhotoHead: @unchecked Sendable {
    package private(set) var bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit { secureZero(&bytes) }
}

/// Heads of photos just received (`IncomingItem`), kept until the media indexer reads their
/// facts from them: it then sends a media worker ~60 KiB instead of decrypting and piping the
/// whole photo. In memory only, never written; bounded in bytes. A head that does not fit, or
/// one lost when the agent stops, only means that photo is read whole, as any other.
package final class MediaHeads: Sendable {
    /// About 100 camera JPEGs' heads.
    package static let maxBytes = 8 << 20

    private struct Held {
        var heads: [String: PhotoHead] = [:]
        var bytes = 0
    }

    private let held = Mutex(Held())
    private let limit: Int

    package init(maxBytes: Int = MediaHeads.maxBytes) { limit = maxBytes }

    /// Keeps `head` for photo `id`; false (and dropped) when it would exceed the bound.
    @discardableResult
    package func keep(_ head: PhotoHead, for id: String) -> Bool {
        held.withLock { h in
            guard h.heads[id] == nil, h.bytes + head.bytes.count <= limit else { return false }
            h.heads[id] = head
            h.bytes += head.bytes.count
            return true
        }
    }

    /// The head of photo `id`, handed over once.
    package func take(_ id: String) -> PhotoHead? {
        held.withLock { h in
            guard let head = h.heads.removeValue(forKey: id) else { return nil }
            h.bytes -= head.bytes.count
            return head
        }
    }

    /// Drops every head (the vault was locked: the indexer will not run before the unlock).
    package func removeAll() {
        held.withLock { $0 = Held() }
    }

    package var count: Int { held.withLock { $0.heads.count } }
}
