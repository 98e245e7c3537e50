import Foundation
import LocafotoCrypto
import LocafotoFormats
import Testing

// protocol/vectors/relay-signatures.json, written by scripts/gen-vectors-relay.py with PyNaCl from
// formats.md (never with this code). The wire messages of that file are checked by the wire tests.

struct RelaySignatureVectorFile: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        let id, name, kind: String
        let size: Int64
        let hash: String
    }
    struct OfferCase: Decodable, Sendable {
        let name, offer, senderPublicKey, signerSeed, recipientPublicKey: String
        let totalItems: Int
        let totalBytes: Int64
        let items: [Item]
        let signingInput, signature: String
        let valid: Bool
    }
    struct ReceiptCase: Decodable, Sendable {
        let name, offer, senderPublicKey, signerSeed, recipientPublicKey, decision: String
        let signingInput, signature: String
        let valid: Bool
    }
    let offerSignatureDomain: String
    let decisionReceiptDomain: String
    let offerSignatures: [OfferCase]
    let decisionReceipts: [ReceiptCase]
}

@Suite("Protocol vectors (relay-signatures.json: signatures)")
struct RelaySignatureVectorTests {
    typealias S = FormatsTestSupport
    // A missing or unreadable file leaves the parameterized tests empty and fails the first test.
    static let file =
        (try? S.vectors(RelaySignatureVectorFile.self, "relay-signatures.json"))
        ?? RelaySignatureVectorFile(
            offerSignatureDomain: "", decisionReceiptDomain: "", offerSignatures: [], decisionReceipts: [])

    static func publicKey(_ hex: String) throws -> SigningPublicKey { try SigningPublicKey(bytes: try S.hex(hex)) }

    @Test func fileIsThere() throws {
        let f = try S.vectors(RelaySignatureVectorFile.self, "relay-signatures.json")
        #expect(f.offerSignatureDomain == Hex.encode(Array("LOCAFOTO-OFFER-SIG-V1".utf8) + [0]))
        #expect(f.decisionReceiptDomain == Hex.encode(Array("LOCAFOTO-DECISION-SIG-V1".utf8) + [0]))
        #expect(f.offerSignatures.contains { $0.valid } && f.offerSignatures.contains { !$0.valid })
        #expect(f.decisionReceipts.contains { $0.valid } && f.decisionReceipts.contains { !$0.valid })
    }

    /// Same signing input, same verdict, and (Ed25519 being deterministic) the same signature
    /// when Swift signs with the vector's seed.
    @Test(arguments: file.offerSignatures.map(\.name))
    func offerSignature(_ name: String) throws {
        let v = try #require(Self.file.offerSignatures.first { $0.name == name })
        let sender = try Self.publicKey(v.senderPublicKey)
        let recipient = try Self.publicKey(v.recipientPublicKey)
        let items: [OfferSignature.Item] = try v.items.map {
            (id: $0.id, name: $0.name, kind: $0.kind, size: $0.size, hash: try S.hex($0.hash))
        }
        let input = OfferSignature.signingInput(
            offerID: v.offer, sender: sender, recipient: recipient, totalItems: v.totalItems, totalBytes: v.totalBytes,
            items: items)
        #expect(Hex.encode(input) == v.signingInput)
        let signature = try S.hex(v.signature)
        #expect(
            OfferSignature.verify(
                signature, offerID: v.offer, sender: sender, recipient: recipient, totalItems: v.totalItems,
                totalBytes: v.totalBytes,
                items: items) == v.valid)
        if v.valid {
            let signer = try S.key(seedHex: v.signerSeed)
            #expect(signer.publicKey == sender)
            let ours = OfferSignature.sign(
                offerID: v.offer, sender: signer, recipient: recipient, totalItems: v.totalItems,
                totalBytes: v.totalBytes, items: items)
            #expect(ours == signature)
        }
    }

    @Test(arguments: file.decisionReceipts.map(\.name))
    func decisionReceipt(_ name: String) throws {
        let v = try #require(Self.file.decisionReceipts.first { $0.name == name })
        let sender = try Self.publicKey(v.senderPublicKey)
        let recipient = try Self.publicKey(v.recipientPublicKey)
        let input = DecisionReceipt.signingInput(
            offerID: v.offer, sender: sender, recipient: recipient, decision: v.decision)
        #expect(Hex.encode(input) == v.signingInput)
        let signature = try S.hex(v.signature)
        #expect(
            DecisionReceipt.verify(
                signature, offerID: v.offer, sender: sender, recipient: recipient, decision: v.decision) == v.valid)
        if v.valid {
            let signer = try S.key(seedHex: v.signerSeed)
            #expect(
                DecisionReceipt.sign(offerID: v.offer, sender: sender, recipient: signer, decision: v.decision)
                    == signature)
        }
    }
}
