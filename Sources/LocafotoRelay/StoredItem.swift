import Foundation
import LocafotoFiles
import LocafotoWire

/// One item of a committed deposit, as the relay sends it on: the ITEM_START and ITEM_END it
/// received and the ciphertext in between.
public struct StoredItem: Sendable, Equatable {
    public let index: Int
    public let start: ItemStart
    public let end: ItemEnd
    public let ciphertextPath: String
    public let ciphertextSize: Int64

    /// Reads the ciphertext from `offset` (0, or a resume offset the recipient asked for).
    public func openCiphertext(at offset: Int64 = 0) throws -> CiphertextReader {
        guard (0...ciphertextSize).contains(offset) else {
            throw RelayError(
                .invalidDeposit, .protocolViolation,
                "item \(index) has \(ciphertextSize) bytes; cannot read from offset \(offset)")
        }
        let file = try disk.open(reading: ciphertextPath)
        let size = try file.size()
        guard size == ciphertextSize else {
            throw RelayError(
                .damaged, .storageFailed,
                "\(ciphertextPath) has \(size) bytes, \(ciphertextSize) were stored: the relay's disk or someone changed it"
            )
        }
        return CiphertextReader(file: file, size: size, offset: offset)
    }
}

/// Sequential reads of one item's ciphertext, in chunks of the caller's choosing.
public final class CiphertextReader {
    public let size: Int64
    public private(set) var offset: Int64
    private let file: OpenFile

    init(file: OpenFile, size: Int64, offset: Int64) {
        self.file = file
        self.size = size
        self.offset = offset
    }

    public var remaining: Int64 { size - offset }

    /// Fills `buffer` as far as the item goes; returns the byte count (0 at the end).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let want = Int(min(Int64(buffer.count), remaining))
        guard want > 0 else { return 0 }
        let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
        guard n == want else {
            throw RelayError(
                .damaged, .storageFailed,
                "\(file.path) ended at \(offset + Int64(n)) of \(size) bytes: it was truncated")
        }
        offset += Int64(n)
        return n
    }

    /// The next `count` bytes at most; [] at the end.
    public func read(upTo count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(min(Int64(max(count, 0)), remaining)))
        let n = try out.withUnsafeMutableBytes { try read(into: $0) }
        return Array(out.prefix(n))
    }

    public func close() { file.close() }
}
