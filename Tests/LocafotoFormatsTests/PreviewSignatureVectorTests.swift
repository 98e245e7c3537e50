import Foundation
import LocafotoCrypto
import LocafotoFormats
import Testing

// protocol/vectors/relay-signatures.json "previewSignatures", written by scripts/gen-vectors-relay.py
// with PyNaCl from formats.md "Preview signature" (never with this code).

struct PreviewSignatureVectorFile: Decodable, Sendable {
    struct Preview: Decodable, Sendable {
        let item: Int
        let size: Int
        let hash: String
    }
    struct Case: Decodable, Sendable {
        let name, offer, senderPublicKey, signerSeed, recipientPublicKey: String
        let previews: [Preview]
        let signingInput, signature: String
        let valid: Bool
    }
    let previewSignatureDomain: String
    let previewSignatures: [Case]
}

@Suite("Protocol vectors (relay-signatures.json: preview signatures)")
struct PreviewSignatureVectorTests {
    typealias S = FormatsTestSupport
    static let file =
        (try? S.vectors(PreviewSignatureVectorFile.self, "relay-signatures.json"))
        ?? PreviewSignatureVectorFile(previewSignatureDomain: "", previewSignatures: [])

    @Test func fileIsThere() throws {
        let f = try S.vectors(PreviewSignatureVectorFile.self, "relay-signatures.json")
        #expect(f.previewSignatureDomain == Hex.encode(Array("LOCAFOTO-PREVIEW-SIG-V1".utf8) + [0]))
        #expect(f.previewSignatures.contains { $0.valid } && f.previewSignatures.contains { !$0.valid })
    }

    @Test(arguments: file.previewSignatures.map(\.name))
    func previewSignature(_ name: String) throws {
        let v = try #require(Self.file.previewSignatures.first { $0.name == name })
        let sender = try SigningPublicKey(bytes: try S.hex(v.senderPublicKey))
        let recipient = try SigningPublicKey(bytes: try S.hex(v.recipientPublicKey))
        let previews: [PreviewSignature.Preview] = try v.previews.map {
            (index: $0.item, size: $0.size, hash: try S.hex($0.hash))
        }
        let input = PreviewSignature.signingInput(
            offerID: v.offer, sender: sender, recipient: recipient, previews: previews)
        #expect(Hex.encode(input) == v.signingInput)
        let signature = try S.hex(v.signature)
        #expect(
            PreviewSignature.verify(
                signature, offerID: v.offer, sender: sender, recipient: recipient, previews: previews) == v.valid)
        if v.valid {
            let signer = try S.key(seedHex: v.signerSeed)
            #expect(
                PreviewSignature.sign(offerID: v.offer, sender: signer, recipient: recipient, previews: previews)
                    == signature)
            // Another recipient, or another offer id, does not verify.
            #expect(
                !PreviewSignature.verify(
                    signature, offerID: v.offer, sender: sender, recipient: sender, previews: previews))
            #expect(
                !PreviewSignature.verify(
                    signature, offerID: "x" + v.offer.dropFirst(), sender: sender, recipient: recipient,
                    previews: previews))
        }
    }
}
