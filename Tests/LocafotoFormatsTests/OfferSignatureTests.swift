import LocafotoCrypto
import LocafotoFormats
import Testing

@Suite("Offer signature and decision receipt")
struct OfferSignatureTests {
    typealias S = FormatsTestSupport

    static let alice = S.key(seed: 0xA1)
    static let bob = S.key(seed: 0xB0)
    static let carol = S.key(seed: 0xC0)
    static let offerID = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6"
    static let items: [OfferSignature.Item] = [
        (
            id: "00000001-0000-4000-8000-000000000000", name: "IMG_0001.jpg", kind: "jpeg", size: 1000,
            hash: [UInt8](repeating: 0x11, count: 32)
        ),
        (
            id: "00000001-0000-4000-8000-000000000001", name: "Été 🌊.heic", kind: "heic", size: 0,
            hash: [UInt8](repeating: 0x22, count: 32)
        ),
    ]

    struct Offer {
        var id = OfferSignatureTests.offerID
        var sender = OfferSignatureTests.alice.publicKey
        var recipient = OfferSignatureTests.bob.publicKey
        var totalItems = 2
        var totalBytes: Int64 = 1000
        var items = OfferSignatureTests.items

        func verify(_ sig: [UInt8]) -> Bool {
            OfferSignature.verify(
                sig, offerID: id, sender: sender, recipient: recipient, totalItems: totalItems, totalBytes: totalBytes,
                items: items)
        }
    }

    static func sign(_ o: Offer = Offer(), by key: SigningKey = alice) -> [UInt8] {
        OfferSignature.sign(
            offerID: o.id, sender: key, recipient: o.recipient, totalItems: o.totalItems, totalBytes: o.totalBytes,
            items: o.items)
    }

    /// The layout, written out by hand from formats.md.
    @Test func offerSigningInputLayout() {
        func field(_ b: [UInt8]) -> [UInt8] { [0, 0, UInt8(b.count >> 8), UInt8(b.count & 0xff)] + b }
        func u64(_ v: UInt64) -> [UInt8] {
            field((0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) })
        }
        var expected = Array("LOCAFOTO-OFFER-SIG-V1".utf8) + [0]
        expected +=
            field(Array(Self.offerID.utf8)) + field(Self.alice.publicKey.bytes) + field(Self.bob.publicKey.bytes)
        expected += u64(2) + u64(1000)
        for i in Self.items {
            expected +=
                field(Array(i.id.utf8)) + field(Array(i.name.utf8)) + field(Array(i.kind.utf8)) + u64(UInt64(i.size))
                + field(i.hash)
        }
        let o = Offer()
        let input = OfferSignature.signingInput(
            offerID: o.id, sender: o.sender, recipient: o.recipient, totalItems: o.totalItems, totalBytes: o.totalBytes,
            items: o.items)
        #expect(input == expected)
        #expect(Array(input.prefix(22)) == Array("LOCAFOTO-OFFER-SIG-V1\0".utf8))
    }

    @Test func signAndVerify() {
        let sig = Self.sign()
        #expect(sig.count == 64)
        #expect(Offer().verify(sig))
        #expect(Self.sign() == sig)  // Ed25519 is deterministic
    }

    @Test func anyChangeBreaksTheOfferSignature() {
        let sig = Self.sign()
        var variants: [(String, Offer)] = []
        func add(_ name: String, _ change: (inout Offer) -> Void) {
            var o = Offer()
            change(&o)
            variants.append((name, o))
        }
        add("offer id") { $0.id = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f7" }
        add("sender") { $0.sender = Self.carol.publicKey }
        add("recipient") { $0.recipient = Self.carol.publicKey }
        add("totalItems") { $0.totalItems = 3 }
        add("totalBytes") { $0.totalBytes = 1001 }
        add("item id") { $0.items[0].id = "00000001-0000-4000-8000-000000000009" }
        add("item name") { $0.items[1].name = "Ete.heic" }
        add("item kind") { $0.items[0].kind = "png" }
        add("item size") { $0.items[0].size = 999 }
        add("item hash") { $0.items[1].hash[31] ^= 1 }
        add("item order") { $0.items.swapAt(0, 1) }
        add("item dropped") { $0.items.removeLast() }
        add("item added") { $0.items.append($0.items[0]) }
        // Fields cannot bleed into each other: moving a byte from name to kind changes the input.
        add("field boundary") {
            $0.items[0].name = "IMG_0001.jp"
            $0.items[0].kind = "gjpeg"
        }
        for (name, o) in variants {
            #expect(!o.verify(sig), "\(name)")
        }
        var bad = sig
        bad[63] ^= 0x80
        #expect(!Offer().verify(bad))
        #expect(!Offer().verify(Array(sig.prefix(63))))
        #expect(!Offer().verify([]))
        // Signed by someone else than the claimed sender.
        #expect(!Offer().verify(Self.sign(by: Self.carol)))
    }

    @Test func hostileNumbersDoNotTrap() {
        var o = Offer()
        o.totalItems = -1
        o.totalBytes = .min
        o.items[0].size = -5
        #expect(!o.verify(Self.sign()))
        #expect(o.verify(Self.sign(o)))
    }

    // MARK: decision receipt

    @Test func receiptSigningInputLayout() {
        func field(_ b: [UInt8]) -> [UInt8] { [0, 0, UInt8(b.count >> 8), UInt8(b.count & 0xff)] + b }
        let expected =
            Array("LOCAFOTO-DECISION-SIG-V1".utf8) + [0] + field(Array(Self.offerID.utf8))
            + field(Self.alice.publicKey.bytes)
            + field(Self.bob.publicKey.bytes) + field(Array("accepted".utf8))
        #expect(
            DecisionReceipt.signingInput(
                offerID: Self.offerID, sender: Self.alice.publicKey, recipient: Self.bob.publicKey, decision: "accepted"
            )
                == expected)
    }

    @Test func receiptSignAndVerify() {
        let sig = DecisionReceipt.sign(
            offerID: Self.offerID, sender: Self.alice.publicKey, recipient: Self.bob, decision: "accepted")
        func verify(
            _ s: [UInt8] = sig, id: String = Self.offerID, sender: SigningPublicKey = Self.alice.publicKey,
            recipient: SigningPublicKey = Self.bob.publicKey,
            decision: String = "accepted"
        ) -> Bool {
            DecisionReceipt.verify(s, offerID: id, sender: sender, recipient: recipient, decision: decision)
        }
        #expect(verify())
        #expect(!verify(id: "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f7"))
        #expect(!verify(sender: Self.carol.publicKey))
        #expect(!verify(recipient: Self.carol.publicKey))
        for d in ["rejected", "expired", "Accepted", ""] { #expect(!verify(decision: d), "\(d)") }
        var bad = sig
        bad[0] ^= 1
        #expect(!verify(bad))
        // A relay cannot make one up: signed by the relay (carol), it fails for bob.
        let forged = DecisionReceipt.sign(
            offerID: Self.offerID, sender: Self.alice.publicKey, recipient: Self.carol, decision: "accepted")
        #expect(!verify(forged))
        // The two signatures are domain-separated: an offer signature never passes as a receipt.
        #expect(!verify(Self.sign()))
    }
}
