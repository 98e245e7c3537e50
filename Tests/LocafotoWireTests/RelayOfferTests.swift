import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import Testing

/// Relayed offers: `to`, `from`, `signature` through the assembler, and the offer signature
/// over assembled offers.
@Suite("Relayed offers")
struct RelayOfferTests {
    typealias S = WireTestSupport
    typealias A = OfferAssemblerTests

    static let alice = try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xA1, count: 32)))
    static let bob = try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xB0, count: 32)))
    static let carol = try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: 0xC0, count: 32)))
    static let sender = OfferSender(ed25519: alice.publicKey.bytes, name: "alice")

    /// A delivery (relay -> bob) of alice's offer, split into parts, correctly signed.
    static func delivery(_ n: Int) throws -> (items: [OfferItem], parts: [Offer]) {
        let items = A.items(n)
        let sig = try Offer.signature(id: S.offerID, items: items, sender: alice, recipient: bob.publicKey)
        return (items, Offer.parts(id: S.offerID, items: items, to: bob.publicKey.bytes, from: sender, signature: sig))
    }

    @Test func partsCarryTheRelayFields() throws {
        let (items, parts) = try Self.delivery(300)
        #expect(parts.count == 3)
        #expect(
            parts.allSatisfy {
                $0.to?.bytes == Self.bob.publicKey.bytes && $0.from == Self.sender && $0.signature?.bytes.count == 64
            })
        for p in parts { #expect(try WireMessage.offer(p).encoded().count <= WireProtocol.maxMessageLength) }
        let (outcomes, offer) = A.feed(parts)
        #expect(outcomes == ["none", "none", "complete"])
        let o = try #require(offer)
        #expect(o.items == items)
        #expect(o.to == Self.bob.publicKey.bytes)
        #expect(o.from == Self.sender)
        #expect(o.fromKey == Self.alice.publicKey)
        #expect(o.signature == parts[0].signature?.bytes)
        #expect(o.hasValidSignature(by: Self.alice.publicKey))
    }

    @Test func directOffersHaveNoRelayFields() throws {
        let o = try #require(A.feed(Offer.parts(id: S.offerID, items: A.items(2))).offer)
        #expect(o.to == nil && o.from == nil && o.signature == nil && o.fromKey == nil)
        #expect(!o.hasValidSignature(by: Self.alice.publicKey))
        // The existing initializer still means "direct".
        #expect(AssembledOffer(id: o.id, items: o.items, totalBytes: o.totalBytes) == o)
    }

    @Test func depositWithoutFrom() throws {
        let items = A.items(1)
        let sig = try Offer.signature(id: S.offerID, items: items, sender: Self.alice, recipient: Self.bob.publicKey)
        let o = try #require(
            A.feed(Offer.parts(id: S.offerID, items: items, to: Self.bob.publicKey.bytes, signature: sig)).offer)
        #expect(o.from == nil)
        #expect(o.hasValidSignature(by: Self.alice.publicKey))  // the handshake peer signed
        #expect(!o.hasValidSignature(by: Self.carol.publicKey))
    }

    /// Any change to what was signed, or a signature by someone else, fails verification.
    @Test func tamperedOffersDoNotVerify() throws {
        let (items, parts) = try Self.delivery(2)
        var o = try #require(A.feed(parts).offer)
        #expect(o.hasValidSignature(by: Self.alice.publicKey))
        #expect(!o.hasValidSignature(by: Self.bob.publicKey))
        var variants: [AssembledOffer] = []
        var v = o
        v.id = S.uuid(42)
        variants.append(v)
        v = o
        v.to = Self.carol.publicKey.bytes  // redirected by the relay
        variants.append(v)
        v = o
        v.items[1].name = "other.jpg"
        variants.append(v)
        v = o
        v.items[0].kind = "png"
        variants.append(v)
        v = o
        v.items[0].hash = S.hash(99)
        variants.append(v)
        v = o
        v.items[0].size += 1
        v.totalBytes += 1
        variants.append(v)
        v = o
        v.items.swapAt(0, 1)
        variants.append(v)
        v = o
        v.items.removeLast()
        v.totalBytes -= items[1].size
        variants.append(v)
        v = o
        v.signature![5] ^= 1
        variants.append(v)
        for (i, t) in variants.enumerated() {
            #expect(!t.hasValidSignature(by: Self.alice.publicKey), "variant \(i)")
        }
        o.signature = nil
        #expect(!o.hasValidSignature(by: Self.alice.publicKey))
    }

    @Test func everyPartMustCarryTheSameRelayFields() throws {
        let (_, parts) = try Self.delivery(200)
        func with(_ change: (inout Offer) -> Void) -> [Offer] {
            var p = parts
            change(&p[1])
            return p
        }
        let cases: [(String, [Offer])] = [
            (
                "no to",
                with {
                    $0.to = nil
                    $0.signature = nil
                    $0.from = nil
                }
            ),
            ("other to", with { $0.to = Bytes(Self.carol.publicKey.bytes) }),
            ("no from", with { $0.from = nil }),
            ("other from key", with { $0.from = OfferSender(ed25519: Self.carol.publicKey.bytes, name: "alice") }),
            ("other from name", with { $0.from?.name = "mallory" }),
            ("other signature", with { $0.signature!.bytes[0] ^= 1 }),
            ("no signature", with { $0.signature = nil }),
        ]
        for (name, p) in cases {
            #expect(A.feed(p).outcomes == ["none", "protocol_violation"], "\(name)")
        }
        // A direct first part may not be continued by a relayed one either.
        var direct = Offer.parts(id: S.offerID, items: A.items(200))
        direct[1].to = parts[1].to
        direct[1].signature = parts[1].signature
        #expect(A.feed(direct).outcomes == ["none", "protocol_violation"])
    }

    @Test func fieldShapes() throws {
        let items = A.items(1)
        let to = Self.bob.publicKey.bytes
        let sig = [UInt8](repeating: 1, count: 64)
        func outcome(to: [UInt8]?, from: OfferSender? = nil, signature: [UInt8]?) -> String {
            A.feed(Offer.parts(id: S.offerID, items: items, to: to, from: from, signature: signature)).outcomes.last!
        }
        #expect(outcome(to: to, signature: sig) == "complete")
        #expect(outcome(to: to, from: Self.sender, signature: sig) == "complete")
        #expect(outcome(to: Array(to.prefix(31)), signature: sig) == "protocol_violation")
        #expect(outcome(to: to + [0], signature: sig) == "protocol_violation")
        #expect(outcome(to: [], signature: sig) == "protocol_violation")
        #expect(outcome(to: to, signature: Array(sig.prefix(63))) == "protocol_violation")
        #expect(outcome(to: to, signature: sig + [0]) == "protocol_violation")
        #expect(
            outcome(to: to, from: OfferSender(ed25519: Array(to.prefix(31)), name: "a"), signature: sig)
                == "protocol_violation")
        #expect(outcome(to: to, signature: nil) == "protocol_violation")  // to without signature
        #expect(outcome(to: nil, signature: sig) == "protocol_violation")  // signature without to
        #expect(outcome(to: nil, from: Self.sender, signature: nil) == "protocol_violation")  // from alone
    }

    @Test func senderNameIsSanitized() throws {
        let items = A.items(1)
        func name(_ raw: String) throws -> String? {
            let parts = Offer.parts(
                id: S.offerID, items: items, to: Self.bob.publicKey.bytes,
                from: OfferSender(ed25519: Self.alice.publicKey.bytes, name: raw),
                signature: [UInt8](repeating: 1, count: 64))
            return A.feed(parts).offer?.from?.name
        }
        #expect(try name("alice") == "alice")
        #expect(try name("\u{1B}[31mevil\u{200F}") == "[31mevil")
        #expect(try name("") == "unnamed")
        #expect(try name(String(repeating: "x", count: 500))?.utf8.count == Hello.maxNameBytes)
    }

    @Test func signatureNeedsValidHashes() {
        var item = S.item(0)
        item.hash = "zz"
        #expect(item.signedItem == nil)
        #expect(
            S.outcome {
                _ = try Offer.signature(id: S.offerID, items: [item], sender: Self.alice, recipient: Self.bob.publicKey)
            }
                == "protocol_violation")
    }

    /// The receiver session passes relayed offers through and still refuses the relay messages.
    @Test func receiverSession() throws {
        let (_, parts) = try Self.delivery(1)
        var s = ReceiverSession()
        guard case .offerReceived(let o) = try s.receive(.offer(parts[0])) else {
            Issue.record("offer not received")
            return
        }
        #expect(o.from == Self.sender)
        let receipt = DecisionReceipt.sign(
            offerID: o.id, sender: Self.alice.publicKey, recipient: Self.bob, decision: "accepted")
        #expect(
            s.decide(.accepted, receipt: receipt)
                == .decision(Decision(offer: o.id, decision: .accepted, receipt: receipt)))
        for m: WireMessage in [
            .collect(Collect(want: .offers)), .queue(Queue(offers: 1)), .receipts(Receipts(receipts: [], more: false)),
        ] {
            for (name, var session) in try ReceiverSessionTests.sessions() {
                #expect(S.outcome { _ = try session.receive(m) } == "protocol_violation", "\(m.kind) in \(name)")
            }
        }
    }
}
