import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoTestSupport
import Testing

// protocol/vectors/relay-signatures.json, written by scripts/gen-vectors-relay.py with PyNaCl from
// formats.md "Offer signature", "Decision receipt" and "Preview signature" (never with this code).
// The wire messages of that file are checked by the wire tests.

@Suite("Protocol vectors (relay-signatures.json: signatures)")
struct RelaySignatureVectorTests {
    typealias S = FormatsTestSupport
    static let file = "relay-signatures.json"
    // The parameterized tests' cases, and what `fileIsThere` checks: a file or a key that cannot
    // be read leaves a list empty, and that test fails.
    static let offerSignatures = Vector.entries(file, "offerSignatures")
    static let decisionReceipts = Vector.entries(file, "decisionReceipts")
    static let previewSignatures = Vector.entries(file, "previewSignatures")

    static func publicKey(_ v: Vector) throws -> SigningPublicKey { try SigningPublicKey(bytes: try v.bytes) }

    @Test func fileIsThere() throws {
        let f = try Vector.load(Self.file)
        #expect(try f.offerSignatureDomain.string == Hex.encode(Array("LOCAFOTO-OFFER-SIG-V1".utf8) + [0]))
        #expect(try f.decisionReceiptDomain.string == Hex.encode(Array("LOCAFOTO-DECISION-SIG-V1".utf8) + [0]))
        #expect(try f.previewSignatureDomain.string == Hex.encode(Array("LOCAFOTO-PREVIEW-SIG-V1".utf8) + [0]))
        for cases in [Self.offerSignatures, Self.decisionReceipts, Self.previewSignatures] {
            let verdicts = try cases.map { try $0.valid.bool }
            #expect(verdicts.contains(true) && verdicts.contains(false), "\(cases.first?.path ?? "an empty list")")
        }
    }

    /// What every signature case checks: our signing input is the vector's byte for byte, `verify`
    /// gives the vector's verdict, and for a valid case (Ed25519 being deterministic) signing with
    /// the vector's seed gives the vector's signature. Returns the signature and the verdict.
    @discardableResult
    static func check(
        _ v: Vector, input: [UInt8], verify: ([UInt8]) -> Bool, sign: (SigningKey) -> [UInt8]
    ) throws -> (signature: [UInt8], valid: Bool) {
        #expect(Hex.encode(input) == (try v.signingInput.string))
        let signature = try v.signature.bytes
        let valid = try v.valid.bool
        #expect(verify(signature) == valid)
        if valid {
            #expect(sign(try S.key(seedHex: v.signerSeed.string)) == signature)
        }
        return (signature, valid)
    }

    @Test(arguments: offerSignatures)
    func offerSignature(_ v: Vector) throws {
        let sender = try Self.publicKey(v.senderPublicKey)
        let recipient = try Self.publicKey(v.recipientPublicKey)
        let items: [OfferSignature.Item] = try v.items.elements.map {
            (
                id: try $0["id"].string, name: try $0.name.string, kind: try $0.kind.string, size: try $0.size.int64,
                hash: try $0.hash.bytes
            )
        }
        let (offer, totalItems, totalBytes) = (try v.offer.string, try v.totalItems.int, try v.totalBytes.int64)
        try Self.check(
            v,
            input: OfferSignature.signingInput(
                offerID: offer, sender: sender, recipient: recipient, totalItems: totalItems, totalBytes: totalBytes,
                items: items),
            verify: {
                OfferSignature.verify(
                    $0, offerID: offer, sender: sender, recipient: recipient, totalItems: totalItems,
                    totalBytes: totalBytes, items: items)
            },
            sign: { signer in
                #expect(signer.publicKey == sender)
                return OfferSignature.sign(
                    offerID: offer, sender: signer, recipient: recipient, totalItems: totalItems,
                    totalBytes: totalBytes, items: items)
            })
    }

    /// A decision receipt is signed by the recipient of the offer.
    @Test(arguments: decisionReceipts)
    func decisionReceipt(_ v: Vector) throws {
        let sender = try Self.publicKey(v.senderPublicKey)
        let recipient = try Self.publicKey(v.recipientPublicKey)
        let (offer, decision) = (try v.offer.string, try v.decision.string)
        try Self.check(
            v,
            input: DecisionReceipt.signingInput(
                offerID: offer, sender: sender, recipient: recipient, decision: decision),
            verify: {
                DecisionReceipt.verify($0, offerID: offer, sender: sender, recipient: recipient, decision: decision)
            },
            sign: { DecisionReceipt.sign(offerID: offer, sender: sender, recipient: $0, decision: decision) })
    }

    @Test(arguments: previewSignatures)
    func previewSignature(_ v: Vector) throws {
        let sender = try Self.publicKey(v.senderPublicKey)
        let recipient = try Self.publicKey(v.recipientPublicKey)
        let previews: [PreviewSignature.Preview] = try v.previews.elements.map {
            (index: try $0.item.int, size: try $0.size.int, hash: try $0.hash.bytes)
        }
        let offer = try v.offer.string
        let (signature, valid) = try Self.check(
            v,
            input: PreviewSignature.signingInput(
                offerID: offer, sender: sender, recipient: recipient, previews: previews),
            verify: {
                PreviewSignature.verify($0, offerID: offer, sender: sender, recipient: recipient, previews: previews)
            },
            sign: { PreviewSignature.sign(offerID: offer, sender: $0, recipient: recipient, previews: previews) })
        guard valid else { return }
        // Another recipient, or another offer id, does not verify.
        #expect(
            !PreviewSignature.verify(signature, offerID: offer, sender: sender, recipient: sender, previews: previews))
        #expect(
            !PreviewSignature.verify(
                signature, offerID: "x" + offer.dropFirst(), sender: sender, recipient: recipient, previews: previews))
    }
}
