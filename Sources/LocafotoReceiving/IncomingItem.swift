import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoSession
import LocafotoWire

/// A received photo that passed every check: signature, AEAD tag, content hash, content type.
package struct VerifiedItem: Sendable {
    package var header: BundleHeader
    package var spoolPath: String
    /// The sniffed image type; nil for a `.lfs` item.
    package var contentType: ContentType?
    /// For a `.lfs` item: the key name in its header.
    package var lfsKeyName: String?
    package var contentHash: [UInt8]
    package var photoKey: SecretBytes
    /// A JPEG's head up to its start of scan (`JPEGHead`): what the media indexer reads for
    /// its facts instead of decrypting the whole photo again. Plaintext: zeroed once used.
    package var head: PhotoHead?
}

/// Receives one item of an accepted offer. The ciphertext goes to a spool file laid out as a
/// LOCA file (64 placeholder bytes, ciphertext, tag) so the vault can adopt it without a copy;
/// each piece is also decrypted into a buffer of its own to sniff the plaintext and hash it (on
/// the `BackgroundHasher` thread, which zeroes and frees it); plaintext is never written anywhere.
/// Nothing counts until `finish` has verified signature and tag.
package final class IncomingItem {
    package let start: ItemStart
    package let offered: OfferItem
    private let opener: BundleOpener
    private let file: SpoolFile
    private let hasher = BackgroundHasher()
    /// The first plaintext bytes: enough to sniff the type (or read a `.lfs` header) and, for a
    /// JPEG, up to `jpegHeadLimit` for its head.
    private var prefix: [UInt8] = []
    private let prefixLimit: Int
    private var received: Int64 = 0

    /// How much of a JPEG is kept for its head: EXIF is at most 64 KiB, and the other segments
    /// before the scan (tables, ICC profile, XMP) of camera and phone photos fit in the rest.
    /// A JPEG whose scan starts later is read whole by the indexer, as any other photo.
    package static let jpegHeadLimit = 256 << 10

    package init(start: ItemStart, offered: OfferItem, identity: Identity, sender: PeerIdentity, spoolDirectory: String)
        throws
    {
        guard let alg = AEADAlgorithm(name: start.algorithm), alg == .chacha20poly1305 else {
            throw WireError(
                .decryptFailed,
                "item algorithm \(PeerText.quoted(start.algorithm)) cannot be streamed; use chacha20-poly1305")
        }
        guard BundleHeader.isCanonicalUUID(start.photo) else {
            throw WireError(.protocolViolation, "photo id is not a lowercase UUID")
        }
        // The user accepted the names shown in the offer; the photo may not arrive under another.
        if let name = start.metadata.name, name != offered.name {
            throw WireError(
                .protocolViolation,
                "item \(start.item) is named \(PeerText.quoted(name)) but was offered as '\(offered.name)'")
        }
        do {
            try start.metadata.validate()
            opener = try BundleOpener(
                algorithm: alg, iv: start.iv.bytes, encryptedKey: start.encryptedKey.bytes,
                recipientPublicKey: identity.publicKey, recipient: identity.signingKey)
        } catch let e as FormatError {
            throw WireError.itemStart(e)
        }
        self.start = start
        self.offered = offered
        prefixLimit = offered.kind == ContentType.jpeg.rawValue ? Self.jpegHeadLimit : LFSFile.headerLength
        // At its full size at once: a growing array would leave plaintext in the blocks it frees.
        prefix.reserveCapacity(prefixLimit)
        let path = SpoolFile.partPath(in: spoolDirectory, offer: start.offer, item: start.item)
        guard start.offset > 0 else {
            file = try SpoolFile(path: path)
            try file.write([UInt8](repeating: 0, count: LOCAHeader.length), at: 0)
            return
        }
        // Resuming: the ciphertext before `offset` is already spooled. It is read back and run
        // through the same decryption and hash as fresh data, so the final checks (tag, hash,
        // content type) cover every byte exactly as for an uninterrupted transfer.
        file = try SpoolFile(path: path, truncate: false)
        let end = Int64(LOCAHeader.length) + start.offset
        guard file.size >= end else {
            file.discard()
            throw WireError(
                .protocolViolation,
                "item \(start.item) resumes at \(start.offset) but only \(max(0, file.size - Int64(LOCAHeader.length))) bytes are held"
            )
        }
        try file.truncate(to: end)
        var position = Int64(LOCAHeader.length)
        var buffer = [UInt8](repeating: 0, count: WireProtocol.chunkLength)
        defer { secureZero(&buffer) }
        while position < end {
            let n = try buffer.withUnsafeMutableBytes { b in
                try file.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: b[..<Int(min(Int64(b.count), end - position))]),
                    at: position)
            }
            guard n > 0 else {
                throw WireError(.storageFailed, "the spooled part of item \(start.item) cannot be read back")
            }
            absorb(buffer[..<n])
            position += Int64(n)
        }
    }

    /// The ciphertext bytes held so far (what a later session may resume from).
    package var receivedBytes: Int64 { received }

    /// Runs ciphertext through decryption (into a buffer the hasher then owns), the content
    /// hash and the prefix kept for sniffing.
    private func absorb(_ ciphertext: ArraySlice<UInt8>) {
        guard !ciphertext.isEmpty else { return }
        let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: ciphertext.count, alignment: 16)
        ciphertext.withUnsafeBytes { plain.copyMemory(from: $0) }
        opener.decrypt(plain)
        if prefix.count < prefixLimit {
            prefix += plain.prefix(prefixLimit - prefix.count)
        }
        hasher.consume(plain)
        received += Int64(ciphertext.count)
    }

    package func append(_ data: [UInt8]) throws {
        try data.withUnsafeBytes { try file.write($0, at: Int64(LOCAHeader.length) + received) }
        absorb(data[...])
    }

    /// Verifies everything and returns the item ready for the vault.
    package func finish(_ end: ItemEnd, sender: PeerIdentity, recipient: Identity) throws -> VerifiedItem {
        let header = BundleHeader(
            photoID: start.photo, algorithm: .chacha20poly1305, iv: start.iv.bytes,
            encryptedKey: start.encryptedKey.bytes,
            authTag: end.authTag.bytes, metadata: start.metadata, sender: sender.publicKey,
            recipient: recipient.publicKey,
            signature: end.signature.bytes)
        let photoKey: SecretBytes
        do {
            photoKey = try opener.finish(header: header)
        } catch let e as FormatError {
            throw WireError.itemEnd(e)
        }
        let hash = hasher.finalize()
        // No hash in the offer (cap late-hash): the tag and the signature over it vouch for
        // every byte, as for a `.locaphoto` file, and the hash computed here is the photo's.
        guard offered.hash.map({ Hex.encode(hash) == $0 }) ?? true else {
            throw WireError(.hashMismatch, "'\(offered.name)' does not match the content hash in the offer")
        }
        var type: ContentType?
        var keyName: String?
        if offered.kind == ItemKind.lfs {
            guard received >= Int64(LFSFile.overhead), let name = try? LFSFile.keyName(of: prefix) else {
                throw WireError(.unsupportedContent, "'\(offered.name)' was offered as a .lfs file but is not one")
            }
            keyName = name
        } else {
            type = ContentType.sniff(prefix)
            guard let sniffed = type else {
                throw WireError(
                    .unsupportedContent,
                    "'\(offered.name)' is not a supported image (JPEG, PNG, HEIC/HEIF, AVIF, WebP, GIF, TIFF)")
            }
            // The user accepted what the offer said (messages.md OFFER `kind`): a photo of
            // another type is refused, as any item that is not what was offered.
            guard sniffed.rawValue == offered.kind else {
                throw WireError(
                    .unsupportedContent,
                    "'\(offered.name)' was offered as \(PeerText.quoted(offered.kind)) but is \(sniffed.rawValue)")
            }
        }
        var head: PhotoHead?
        if type == .jpeg, let n = JPEGHead.headerLength(of: prefix) {
            head = PhotoHead(Array(prefix[..<n]))
        }
        secureZero(&prefix)
        try file.write(end.authTag.bytes, at: Int64(LOCAHeader.length) + received)
        // Not fsynced here: the vault fsyncs the file when it adopts it, and the queue path
        // (locked vault) syncs before it records the item.
        file.keep()
        return VerifiedItem(
            header: header, spoolPath: file.path, contentType: type, lfsKeyName: keyName, contentHash: hash,
            photoKey: photoKey, head: head)
    }

    package func discard() {
        secureZero(&prefix)
        file.discard()
    }

    /// The session broke: keep what arrived, flushed, for a later session to resume from.
    package func suspend() {
        secureZero(&prefix)
        try? file.sync()
        file.keep()
    }
}
