import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoSession
import LocafotoTestSupport
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoInbox
@testable import LocafotoNode
@testable import LocafotoReceiving

/// protocol/vectors/wire-messages.json vectors with `itemFails` (scripts/gen-vectors.py): ITEM_ENDs
/// that decode, so the session goes on, but whose `authTag` or `signature` has the wrong length
/// (messages.md ITEM_END "Limits"). The receiver's item check (`IncomingItem.finish`, whose error
/// `IncomingReceipt` turns into ITEM_RESULT `failed`) must fail them with the code named.
@Suite("ITEM_END vectors that fail only their item")
struct ItemEndVectorTests {
    static let failing = Vector.entries("wire-messages.json", "vectors").filter { $0.itemFails.ifPresent != nil }

    /// A JPEG sent by `sender` to `recipient` as item 0 of `offer`: what it offers, its ITEM_START,
    /// the ciphertext and the ITEM_END it makes.
    static func sent(to recipient: Identity, by sender: SigningKey, offer: String) throws -> (
        OfferItem, ItemStart, [UInt8], ItemEnd
    ) {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("sample.jpg"))))
        let photo = UUID().uuidString.lowercased()
        let sealer = try BundleSealer(photoID: photo, sender: sender, recipient: recipient.publicKey)
        bytes.withUnsafeMutableBytes { sealer.encrypt($0) }
        let metadata = BundleMetadata(originalSize: Int64(bytes.count), format: "JPEG", name: "sample.jpg")
        let header = try sealer.finish(metadata: metadata)
        let offered = OfferItem(
            id: UUID().uuidString.lowercased(), name: "sample.jpg", kind: "jpeg", size: Int64(bytes.count), hash: nil)
        let start = ItemStart(
            offer: offer, item: 0, photo: photo, algorithm: "chacha20-poly1305", iv: sealer.iv,
            encryptedKey: sealer.encryptedKey,
            offset: 0, metadata: metadata)
        return (
            offered, start, bytes, ItemEnd(offer: offer, item: 0, authTag: header.authTag, signature: header.signature)
        )
    }

    /// Receives the item as the agent does and ends it with `end`: the error code, or "ok".
    static func receive(
        _ sent: (OfferItem, ItemStart, [UInt8], ItemEnd), end: ItemEnd, recipient: Identity, sender: SigningKey,
        spool: String
    ) -> String {
        let peer = PeerIdentity(
            publicKey: sender.publicKey, fingerprint: Fingerprint(publicKey: sender.publicKey), name: "sender", caps: []
        )
        do {
            let item = try IncomingItem(
                start: sent.1, offered: sent.0, identity: recipient, sender: peer, spoolDirectory: spool)
            defer { item.discard() }
            try item.append(sent.2)
            _ = try item.finish(end, sender: peer, recipient: recipient)
            return "ok"
        } catch let e as WireError {
            return e.code.name
        } catch {
            return "\(error)"
        }
    }

    @Test func vectorsArePresent() {
        #expect(Self.failing.count >= 2)
    }

    @Test(arguments: failing)
    func failsTheItem(_ v: Vector) throws {
        let itemFails = try v.itemFails.string
        guard case .itemEnd(let wire) = try WireMessage.decode(try v.hex.bytes) else {
            Issue.record("does not decode to an ITEM_END")
            return
        }
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-itemend-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let recipient = try Identity(signingKey: .generate())
        let sender = SigningKey.generate()

        // The item as sent is received (the check is the length, not the photo).
        let good = try Self.sent(to: recipient, by: sender, offer: UUID().uuidString.lowercased())
        #expect(Self.receive(good, end: good.3, recipient: recipient, sender: sender, spool: spool) == "ok")

        // The vector's ITEM_END as it arrives.
        let item = try Self.sent(to: recipient, by: sender, offer: wire.offer)
        #expect(
            Self.receive(item, end: wire, recipient: recipient, sender: sender, spool: spool) == itemFails)

        // The sender's own tag and signature, cut or padded to the vector's lengths.
        func resized(_ b: [UInt8], _ n: Int) -> [UInt8] {
            n <= b.count ? Array(b.prefix(n)) : b + [UInt8](repeating: 0, count: n - b.count)
        }
        let end = ItemEnd(
            offer: item.3.offer, item: 0, authTag: resized(item.3.authTag.bytes, wire.authTag.bytes.count),
            signature: resized(item.3.signature.bytes, wire.signature.bytes.count))
        #expect(
            Self.receive(item, end: end, recipient: recipient, sender: sender, spool: spool) == itemFails,
            "the sender's values resized")
    }
}
