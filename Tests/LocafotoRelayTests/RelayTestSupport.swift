import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import Testing

@testable import LocafotoRelay

/// A temporary relay directory, removed when the test ends.
final class TempDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/relay-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var relay: String { path + "/relay" }
}

/// One genuine item: sealed to `recipient` and signed by `sender` with the real bundle code.
struct SealedItem {
    var offered: OfferItem
    var start: ItemStart
    var end: ItemEnd
    var ciphertext: [UInt8]
}

enum Relay {
    static func lowerUUID() -> String { UUID().uuidString.lowercased() }

    static func seal(
        offer: String, index: Int, from sender: SigningKey, to recipient: SigningPublicKey, size: Int,
        signedFor signingRecipient: SigningPublicKey? = nil
    ) throws -> SealedItem {
        let name = "IMG_\(index).jpg"
        let photo = lowerUUID()
        let sealer = try BundleSealer(photoID: photo, sender: sender, recipient: signingRecipient ?? recipient)
        var bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        bytes.withUnsafeMutableBytes { sealer.encrypt($0) }
        let metadata = BundleMetadata(originalSize: Int64(size), format: "JPEG", name: name)
        let header = try sealer.finish(metadata: metadata)
        return SealedItem(
            offered: OfferItem(
                id: lowerUUID(), name: name, kind: "jpeg", size: Int64(size), hash: String(repeating: "ab", count: 32)),
            start: ItemStart(
                offer: offer, item: index, photo: photo, algorithm: "chacha20-poly1305", iv: header.iv,
                encryptedKey: header.encryptedKey, offset: 0, metadata: metadata),
            end: ItemEnd(offer: offer, item: index, authTag: header.authTag, signature: header.signature),
            ciphertext: bytes)
    }

    /// An offer of items of the given sizes from `sender` to `recipient`.
    static func offer(
        from sender: SigningKey, to recipient: SigningKey, sizes: [Int], name: String = "alice"
    ) throws -> (DepositOffer, [SealedItem]) {
        let id = lowerUUID()
        let items = try sizes.enumerated().map {
            try seal(offer: id, index: $0.offset, from: sender, to: recipient.publicKey, size: $0.element)
        }
        let offer = DepositOffer(
            offerID: id, senderKey: sender.publicKey.bytes, senderName: name, recipientKey: recipient.publicKey.bytes,
            items: items.map(\.offered), totalBytes: Int64(sizes.reduce(0, +)),
            offerSignature: sender.signature(for: Array(id.utf8)))
        return (offer, items)
    }

    /// Sends one item through the writer in chunks.
    static func send(_ item: SealedItem, to writer: DepositWriter, chunk: Int = 700) throws {
        try writer.begin(index: item.start.item, start: item.start)
        var at = 0
        while at < item.ciphertext.count {
            let n = min(chunk, item.ciphertext.count - at)
            try writer.append(Array(item.ciphertext[at..<at + n]))
            at += n
        }
        try writer.end(item.end)
    }

    /// A complete deposit: offer, every item, commit.
    @discardableResult
    static func deposit(
        _ store: RelayStore, from sender: SigningKey, to recipient: SigningKey, sizes: [Int]
    ) throws -> (DepositOffer, [SealedItem]) {
        let (offer, items) = try offer(from: sender, to: recipient, sizes: sizes)
        let writer = try store.beginDeposit(offer)
        for item in items { try send(item, to: writer) }
        #expect(try writer.commit() == Array(items.indices))
        return (offer, items)
    }

    static func fingerprint(_ key: SigningKey) -> String { Fingerprint(publicKey: key.publicKey).description }

    static func mode(_ path: String) -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { return -1 }
        return Int(st.st_mode & 0o777)
    }

    /// Reads a stored item's ciphertext through the store's reader.
    static func ciphertext(_ item: StoredItem, from offset: Int64 = 0, chunk: Int = 1000) throws -> [UInt8] {
        let reader = try item.openCiphertext(at: offset)
        defer { reader.close() }
        var out: [UInt8] = []
        while true {
            let piece = try reader.read(upTo: chunk)
            if piece.isEmpty { break }
            out += piece
        }
        return out
    }

    /// Expects `body` to throw a `RelayError`; returns it.
    @discardableResult
    static func expectError(_ sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void)
        -> RelayError?
    {
        do {
            try body()
            Issue.record("expected a RelayError", sourceLocation: sourceLocation)
        } catch let e as RelayError {
            return e
        } catch {
            Issue.record("expected a RelayError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
