import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import LocafotoWire
import Testing

/// Previews in the offer (protocol/messages.md "PREVIEW"): what the receiver's state machine
/// allows, what the offer may announce, and the checks on the bytes.
@Suite("Previews")
struct PreviewTests {
    typealias S = WireTestSupport

    static let recipient = try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xB0, count: 32)))
    static let other = try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xC0, count: 32)))

    /// A preview-shaped JPEG (the same layout as the vector's), `width`x`height`.
    static func jpeg(_ width: Int = 24, _ height: Int = 16) -> [UInt8] {
        var b: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        b += [0xFF, 0xDB, 0x00, 0x43, 0x00] + Array(1...64)
        b += [
            0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8),
            UInt8(width & 0xFF), 1, 1, 0x11, 0,
        ]
        b +=
            [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00] + [UInt8](repeating: 0x55, count: 32) + [
                0xFF, 0xD9,
            ]
        return b
    }

    static func info(_ bytes: [UInt8]) -> PreviewInfo {
        PreviewInfo(size: bytes.count, hash: Hex.encode(ContentHash.of(bytes)))
    }

    static func sealed(_ bytes: [UInt8], to key: SigningKey = recipient) throws -> [UInt8] {
        SealedBox.seal(bytes, to: try key.publicKey.agreementKey())
    }

    /// Items 0 and 2 of three announce a preview.
    static func offerWithPreviews() -> Offer {
        var items = (0..<3).map { S.item($0) }
        items[0].preview = info(jpeg())
        items[2].preview = info(jpeg(160, 90))
        return S.offer(items)
    }

    static func preview(_ item: UInt32, _ sealed: [UInt8] = [1, 2, 3]) -> WireMessage {
        .preview(Preview(item: item, sealed: sealed))
    }

    // MARK: the receiver's state machine

    @Test func theOfferIsCompleteAfterItsLastPreview() throws {
        var s = ReceiverSession(acceptsPreviews: true)
        #expect(try s.receive(.offer(Self.offerWithPreviews())) == .none)
        #expect(s.state == .awaitingPreviews(S.offerID))
        #expect(s.offeredPreview(0) == Self.info(Self.jpeg()))
        #expect(s.offeredPreview(1) == nil)
        #expect(try s.receive(.ping) == .reply(.pong))  // keepalive is fine meanwhile
        #expect(try s.receive(Self.preview(0, [9])) == .previewReceived(item: 0, sealed: [9], then: nil))
        guard case .previewReceived(2, [8], let then?) = try s.receive(Self.preview(2, [8])) else {
            Issue.record("the last preview did not complete the offer")
            return
        }
        #expect(then.items.count == 3)
        #expect(s.state == .awaitingDecision(S.offerID))
        // A preview after the offer is complete is out of order.
        #expect(S.outcome { _ = try s.receive(Self.preview(2)) } == "protocol_violation")
    }

    @Test func anOfferWithoutPreviewsIsCompleteAtOnce() throws {
        var s = ReceiverSession(acceptsPreviews: true)
        guard case .offerReceived = try s.receive(.offer(S.offer([S.item(0)]))) else {
            Issue.record("no offer")
            return
        }
    }

    @Test func previewsMustComeInOrderOnceEach() throws {
        for wrong: [UInt32] in [[2], [1], [0, 0], [0, 1], [7]] {
            var s = ReceiverSession(acceptsPreviews: true)
            _ = try s.receive(.offer(Self.offerWithPreviews()))
            let outcome = S.outcome {
                for i in wrong { _ = try s.receive(Self.preview(i)) }
            }
            #expect(outcome == "protocol_violation", "\(wrong)")
        }
        // Before any offer, and items before the previews.
        var early = ReceiverSession(acceptsPreviews: true)
        #expect(S.outcome { _ = try early.receive(Self.preview(0)) } == "protocol_violation")
        var s = ReceiverSession(acceptsPreviews: true)
        _ = try s.receive(.offer(Self.offerWithPreviews()))
        #expect(S.outcome { _ = try s.receive(.done(Done(offer: S.offerID))) } == "protocol_violation")
    }

    // MARK: what an offer may announce

    static func assemble(_ items: [OfferItem], previews: Bool = true, relayed: Bool = false) -> String {
        var a = OfferAssembler(acceptsPreviews: previews)
        var offer = S.offer(items)
        if relayed {
            offer.to = Bytes(Array(repeating: 1, count: 32))
            offer.signature = Bytes(Array(repeating: 2, count: 64))
        }
        return S.outcome { _ = try a.add(offer) }
    }

    @Test func announcedPreviewsAreChecked() {
        func item(_ n: Int, _ p: PreviewInfo?) -> OfferItem {
            var i = S.item(n)
            i.preview = p
            return i
        }
        let good = Self.info(Self.jpeg())
        #expect(Self.assemble([item(0, good)]) == "ok")
        #expect(Self.assemble([item(0, good)], previews: false) == "protocol_violation")  // cap not announced
        // relayed: needs previewSignature
        #expect(Self.assemble([item(0, good)], relayed: true) == "protocol_violation")
        #expect(Self.assemble([item(0, PreviewInfo(size: 0, hash: good.hash))]) == "protocol_violation")
        #expect(
            Self.assemble([item(0, PreviewInfo(size: PreviewImage.maxBytes + 1, hash: good.hash))])
                == "protocol_violation")
        #expect(Self.assemble([item(0, PreviewInfo(size: 10, hash: good.hash.uppercased()))]) == "protocol_violation")
        #expect(Self.assemble([item(0, PreviewInfo(size: 10, hash: "00"))]) == "protocol_violation")
        let many = (0..<(PreviewImage.maxPerOffer + 1)).map { item($0, good) }
        #expect(Self.assemble(Array(many.dropLast())) == "ok")
        #expect(Self.assemble(many) == "protocol_violation")
    }

    /// A relayed offer's previews: `previewSignature` by the sender for the recipient, apart from
    /// the offer signature (a relay may hand the offer on without previews).
    @Test func relayedPreviewsAreVouchedByTheirSignature() throws {
        let alice = try SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xA1, count: 32)))
        var items = [S.item(0), S.item(1)]
        items[1].preview = Self.info(Self.jpeg())
        let signature = try Offer.signature(
            id: S.offerID, items: items, sender: alice, recipient: Self.recipient.publicKey)
        let previewSignature = try #require(
            try Offer.previewSignature(id: S.offerID, items: items, sender: alice, recipient: Self.recipient.publicKey))
        #expect(
            try Offer.previewSignature(
                id: S.offerID, items: [S.item(0)], sender: alice, recipient: Self.recipient.publicKey) == nil)
        func assembled(_ items: [OfferItem], _ ps: [UInt8]?) throws -> AssembledOffer {
            var a = OfferAssembler(acceptsPreviews: true)
            let parts = Offer.parts(
                id: S.offerID, items: items, to: Self.recipient.publicKey.bytes,
                from: OfferSender(ed25519: alice.publicKey.bytes, name: "alice"),
                signature: signature, previewSignature: ps)
            return try #require(try parts.compactMap { try a.add($0) }.first)
        }
        let offer = try assembled(items, previewSignature)
        #expect(offer.hasValidSignature(by: alice.publicKey))
        #expect(offer.previewsAreVouched(by: alice.publicKey))
        #expect(!offer.previewsAreVouched(by: Self.other.publicKey))
        #expect(!offer.previewsAreVouched(by: nil))
        // Another preview in its place: the offer signature still holds, the previews do not.
        var swapped = items
        swapped[1].preview = Self.info(Self.jpeg(30, 30))
        let forged = try assembled(swapped, previewSignature)
        #expect(forged.hasValidSignature(by: alice.publicKey))
        #expect(!forged.previewsAreVouched(by: alice.publicKey))
        // Without previews (a recipient without cap preview) the offer signature verifies alone.
        var plain = items
        plain[1].preview = nil
        let stripped = try assembled(plain, nil)
        #expect(stripped.hasValidSignature(by: alice.publicKey) && stripped.previewsAreVouched(by: nil))
        // Shape: previews without previewSignature, previewSignature without signature or of a wrong length.
        #expect(S.outcome { _ = try assembled(items, nil) } == "protocol_violation")
        #expect(S.outcome { _ = try assembled(items, Array(previewSignature.prefix(63))) } == "protocol_violation")
        var direct = OfferAssembler(acceptsPreviews: true)
        var lone = S.offer(items)
        lone.previewSignature = Bytes(previewSignature)
        #expect(S.outcome { _ = try direct.add(lone) } == "protocol_violation")
    }

    @Test func largeOffersWithPreviewsAreSplitToFitOneMessage() throws {
        let name = String(repeating: "\"é", count: 85)  // 255 bytes, each quote escaped on the wire
        var items = (0..<300).map { S.item($0, name: name) }
        for i in 0..<PreviewImage.maxPerOffer { items[i].preview = Self.info(Self.jpeg()) }
        let parts = Offer.parts(id: S.offerID, items: items)
        #expect(parts.flatMap(\.items) == items)
        for part in parts {
            #expect(try WireMessage.offer(part).encoded().count <= WireProtocol.maxMessageLength)
        }
        var s = ReceiverSession(acceptsPreviews: true)
        for part in parts { _ = try s.receive(.offer(part)) }
        #expect(s.state == .awaitingPreviews(S.offerID))
    }

    // MARK: the bytes

    /// What opening a preview comes to: "ok" (or what `body` says), a format error's code, or
    /// "crypto CODE" for a box that does not open.
    static func outcome(_ body: () throws -> String) -> String {
        do {
            return try body()
        } catch let e as FormatError {
            return e.code.description
        } catch let e as CryptoError {
            return "crypto \(e.code)"
        } catch {
            return "unexpected \(error)"
        }
    }

    static func check(_ sealed: [UInt8], _ announced: PreviewInfo) -> String {
        outcome {
            let jpeg = try PreviewCheck.open(sealed, announced: announced, with: recipient.agreementKey())
            return jpeg.count == announced.size ? "ok" : "wrong length"
        }
    }

    @Test func aGoodPreviewOpens() throws {
        let jpeg = Self.jpeg()
        #expect(Self.check(try Self.sealed(jpeg), Self.info(jpeg)) == "ok")
    }

    @Test func hostilePreviewsAreDropped() throws {
        let jpeg = Self.jpeg()
        let good = try Self.sealed(jpeg)
        // Wrong hash, wrong announced length, sealed to someone else, altered, truncated.
        #expect(Self.check(good, PreviewInfo(size: jpeg.count, hash: S.hash(1))) == "sizeMismatch")
        #expect(Self.check(good, PreviewInfo(size: jpeg.count + 1, hash: Self.info(jpeg).hash)) == "sizeMismatch")
        #expect(Self.check(try Self.sealed(jpeg, to: Self.other), Self.info(jpeg)).hasPrefix("crypto"))
        var altered = good
        altered[60] ^= 1
        #expect(Self.check(altered, Self.info(jpeg)).hasPrefix("crypto"))
        #expect(Self.check(Array(good.dropLast()), Self.info(jpeg)) == "sizeMismatch")
        #expect(Self.check([], Self.info(jpeg)) == "sizeMismatch")
        // Hash and length right, content not a preview: not a JPEG, too large a picture, too many bytes.
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 40)
        #expect(Self.check(try Self.sealed(png), Self.info(png)) == "unsupportedContent")
        let huge = Self.jpeg(4000, 3000)
        #expect(Self.check(try Self.sealed(huge), Self.info(huge)) == "tooLarge")
        let long = [UInt8](repeating: 0xFF, count: PreviewImage.maxBytes + 1)
        #expect(Self.check(try Self.sealed(long), Self.info(long)).hasPrefix("crypto"))  // over the box's bound
    }

    /// A late preview (cap `late-preview`) announced no length or hash: the box and the JPEG are
    /// all there is to check, with the same outcomes.
    static func checkLate(_ sealed: [UInt8]) -> String {
        outcome {
            _ = try PreviewCheck.openLate(sealed, with: recipient.agreementKey())
            return "ok"
        }
    }

    @Test func hostileLatePreviewsAreDropped() throws {
        let good = try Self.sealed(Self.jpeg())
        #expect(Self.checkLate(good) == "ok")
        var altered = good
        altered[60] ^= 1
        #expect(Self.checkLate(altered).hasPrefix("crypto"))
        #expect(Self.checkLate(try Self.sealed(Self.jpeg(), to: Self.other)).hasPrefix("crypto"))
        #expect(Self.checkLate(Array(good.dropLast())).hasPrefix("crypto"))
        #expect(Self.checkLate([7]).hasPrefix("crypto"))
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 40)
        #expect(Self.checkLate(try Self.sealed(png)) == "unsupportedContent")
        #expect(Self.checkLate(try Self.sealed(Self.jpeg(4000, 3000))) == "tooLarge")
        #expect(
            Self.checkLate(try Self.sealed([UInt8](repeating: 0xFF, count: PreviewImage.maxBytes + 1))).hasPrefix(
                "crypto"))
    }

    // MARK: vectors (protocol/vectors/wire-messages.json "previews")

    @Test func vectorsOpenWithTheRecipientsKey() throws {
        let previews = try Vector.load("wire-messages.json").previews.elements
        #expect(!previews.isEmpty)
        for v in previews {
            let key = try SigningKey(seed: SecretBytes(copying: try v.recipientSeed.bytes))
            let announced = try v.announced.decoded(as: PreviewInfo.self)
            let jpeg = try PreviewCheck.open(try v.sealed.bytes, announced: announced, with: key.agreementKey())
            #expect(jpeg.unsafeCopy() == (try v.jpeg.bytes), "\(v.testDescription)")
            #expect(
                try PreviewImage.validate(try v.jpeg.bytes) == .init(width: try v.width.int, height: try v.height.int))
            let otherKey = try Self.other.agreementKey()
            #expect(throws: (any Error).self) {
                try PreviewCheck.open(try v.sealed.bytes, announced: announced, with: otherKey)
            }
        }
    }
}
