import Dispatch
import LocafotoCrypto
import LocafotoInbox
import LocafotoNode

/// The content hash of an item being received, computed on a thread of its own while the
/// receiving task goes on decrypting and spooling the next pieces. BLAKE2b (~1.6 GB/s here)
/// is the slowest pass over each byte; run in line it set the receiver's pace, while a second
/// core often had room. Pieces are hashed in the order given. At most `depth` pieces wait, so
/// memory stays bounded and a hash that falls behind slows the receiver down instead.
package final class BackgroundHasher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "locafoto.content-hash", qos: .userInitiated)
    private let slots: DispatchSemaphore
    /// Only touched on `queue`.
    private var state = ContentHash.hasher()

    package init(depth: Int = 8) {
        slots = DispatchSemaphore(value: depth)
    }

    /// Takes ownership of `plaintext` (allocated by the caller): it is hashed, zeroed and
    /// deallocated on the hashing thread.
    package func consume(_ plaintext: UnsafeMutableRawBufferPointer) {
        slots.wait()
        let piece = SendablePiece(bytes: plaintext)
        queue.async { [self] in
            state.update(UnsafeRawBufferPointer(piece.bytes))
            secureZero(piece.bytes)
            piece.bytes.deallocate()
            slots.signal()
        }
    }

    /// The digest of everything consumed; waits for the pieces still queued.
    package func finalize() -> [UInt8] {
        queue.sync { state.finalize() }
    }
}

/// A buffer handed from the receiving task to the hashing thread, used by one side at a time.
private struct SendablePiece: @unchecked Sendable {
    package let bytes: UnsafeMutableRawBufferPointer
}
