import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoRelay
import LocafotoSession
import LocafotoWire

/// The ciphertext of one item being sent, wherever it comes from: sealed on the fly from a
/// photo (`SealingItem`: direct sends and deposits at a relay) or read back as a relay stored it
/// (`StoredCiphertext`: a relay's deliveries). `stream` sends either the same way.
package protocol OutgoingItem {
    var index: Int { get }
    /// Ciphertext bytes (the photo's size: the bundle stream adds no bytes, its tag is in ITEM_END).
    var size: Int64 { get }
    /// ITEM_START for a session starting at `offset`.
    func start(at offset: Int64) -> ItemStart
    /// Makes the next `next` return the ciphertext from `offset` on.
    mutating func skip(to offset: Int64) throws
    /// The next ciphertext bytes, into `buffer`; 0 at the end.
    mutating func next(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// ITEM_END, once every byte was produced.
    mutating func end() throws -> ItemEnd
    func close()
}

extension OutgoingItem {
    /// The one item streamer of every role that sends items (direct sends, relay deposits, a
    /// relay's deliveries): ITEM_START, the item's ciphertext from `offset` in ITEM_DATA pieces,
    /// ITEM_END. `sent` is told each piece's length (and may throw to stop).
    package mutating func stream(
        from offset: Int64, writer: inout SecureWriter, pacer: inout SendPacer, sent: ((Int) throws -> Void)? = nil
    ) async throws {
        defer { close() }
        try await writer.send(.itemStart(start(at: offset)))
        try skip(to: offset)
        var buffer = [UInt8](repeating: 0, count: WireProtocol.chunkLength)
        var position = offset
        while position < size {
            let want = Int(min(Int64(buffer.count), size - position))
            let n = try buffer.withUnsafeMutableBytes {
                try next(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]))
            }
            guard n > 0 else {
                throw AgentError(
                    .io, "item \(index) ends after \(position) of \(size) bytes; it changed while being sent")
            }
            try await writer.sendItemData(item: UInt32(index), offset: UInt64(position), bytes: buffer[..<n])
            position += Int64(n)
            try sent?(n)
            try await pacer.account(n)
        }
        try await writer.send(.itemEnd(end()))
    }
}

/// A photo of this node's plan, encrypted for the recipient as it is read (from its file, or
/// from memory for transformed and vault photos).
package struct SealingItem: OutgoingItem {
    package let index: Int
    package let offer: String
    private let planned: PlannedItem
    private let sealer: BundleSealer
    private let metadata: BundleMetadata
    private let file: PhotoFileReader?
    private var produced: Int64 = 0

    package init(_ planned: PlannedItem, index: Int, offer: String, sender: Identity, recipient: SigningPublicKey)
        throws
    {
        self.index = index
        self.offer = offer
        self.planned = planned
        sealer = try BundleSealer(
            photoID: planned.photoID, sender: sender.signingKey, recipient: recipient,
            key: try planned.photoKey(identity: sender),
            iv: planned.iv, encryptedKey: planned.encryptedKey!)
        metadata = BundleMetadata(originalSize: planned.size, format: planned.kind.uppercased(), name: planned.name)
        file = planned.data == nil ? try PhotoFileReader(path: planned.path ?? "") : nil
    }

    package var size: Int64 { planned.size }

    package func start(at offset: Int64) -> ItemStart {
        ItemStart(
            offer: offer, item: index, photo: planned.photoID, algorithm: AEADAlgorithm.chacha20poly1305.name,
            iv: sealer.iv,
            encryptedKey: sealer.encryptedKey, offset: offset, metadata: metadata)
    }

    /// The bytes before `offset` are read and encrypted all the same (the tag covers the whole
    /// ciphertext), only not sent: the receiver holds them.
    package mutating func skip(to offset: Int64) throws {
        guard produced < offset else { return }
        var buffer = [UInt8](repeating: 0, count: WireProtocol.chunkLength)
        defer { secureZero(&buffer) }
        while produced < offset {
            let want = Int(min(Int64(buffer.count), offset - produced))
            let n = try buffer.withUnsafeMutableBytes {
                try next(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]))
            }
            guard n > 0 else {
                throw AgentError(.io, "'\(planned.name)' is shorter than the \(offset) bytes to resume from")
            }
        }
    }

    package mutating func next(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let want = Int(min(Int64(buffer.count), size - produced))
        guard want > 0 else { return 0 }
        let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[..<want])
        let n: Int
        if let file {
            n = try file.read(into: slice)
        } else {
            let start = Int(produced)
            planned.data!.withUnsafeBytes {
                slice.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<start + want]))
            }
            n = want
        }
        sealer.encrypt(UnsafeMutableRawBufferPointer(rebasing: buffer[..<n]))
        produced += Int64(n)
        return n
    }

    package mutating func end() throws -> ItemEnd {
        let header = try sealer.finish(metadata: metadata)
        return ItemEnd(offer: offer, item: index, authTag: header.authTag, signature: header.signature)
    }

    package func close() { file?.close() }
}

/// An item as a relay stored it: the sender's ITEM_START and ITEM_END around the stored
/// ciphertext. The relay adds nothing of its own.
package struct StoredCiphertext: OutgoingItem {
    package let stored: StoredItem
    private var reader: CiphertextReader?

    package init(_ stored: StoredItem) { self.stored = stored }

    package var index: Int { stored.index }
    package var size: Int64 { stored.ciphertextSize }

    package func start(at offset: Int64) -> ItemStart {
        var start = stored.start
        start.offset = offset
        return start
    }

    package mutating func skip(to offset: Int64) throws {
        reader?.close()
        reader = try stored.openCiphertext(at: offset)
    }

    package mutating func next(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if reader == nil { reader = try stored.openCiphertext(at: 0) }
        return try reader!.read(into: buffer)
    }

    package mutating func end() throws -> ItemEnd { stored.end }

    package func close() { reader?.close() }
}
