import Foundation
import LocafotoCrypto
import LocafotoWire
import Testing

// protocol/vectors/relay-signatures.json, written by scripts/gen-vectors-relay.py with Python's
// json module and PyNaCl (never with this code): the messages added for resume and relay.
// Its signature cases are checked by the formats tests (RelaySignatureVectorTests).

struct RelayVectorFile: Decodable, Sendable {
    struct InvalidOffer: Decodable, Sendable {
        let name: String
        let parts: [String]
        let error: String
    }
    let messages: [WireVectorFile.Vector]
    let invalid: [WireVectorFile.Invalid]
    let invalidOffers: [InvalidOffer]
}

@Suite("Protocol vectors (relay-signatures.json: messages)")
struct RelayVectorTests {
    typealias S = WireTestSupport
    static let file =
        (try? S.vectors(RelayVectorFile.self, "relay-signatures.json"))
        ?? RelayVectorFile(messages: [], invalid: [], invalidOffers: [])

    @Test func fileCoversTheRelayMessages() throws {
        _ = try S.vectors(RelayVectorFile.self, "relay-signatures.json")
        let types = Set(Self.file.messages.map(\.type))
        for kind: WireMessage.Kind in [.collect, .queue, .receipts, .offer, .decision, .itemResult] {
            #expect(types.contains(kind.protocolName), "\(kind)")
        }
        #expect(Self.file.invalid.count >= 10)
        #expect(Self.file.invalidOffers.count >= 5)
    }

    /// As for wire-messages.json: decode the peer's spelling, compare every field, check that our
    /// encoding is the canonical one.
    @Test(arguments: file.messages.map(\.name))
    func message(_ name: String) throws {
        let v = try #require(Self.file.messages.first { $0.name == name })
        let message = try WireMessage.decode(try S.hex(v.hex))
        #expect(message.kind.protocolName == v.type)
        #expect(fields(of: message) == v.fields, "decoded \(JSONValue.object(fields(of: message)))")
        let encoded = try message.encoded()
        #expect(
            Hex.encode(encoded) == v.canonical, "our encoding: \(String(decoding: encoded.dropFirst(), as: UTF8.self))")
        #expect(try WireMessage.decode(encoded) == message)
    }

    @Test(arguments: file.invalid.map(\.name))
    func invalidMessage(_ name: String) throws {
        let v = try #require(Self.file.invalid.first { $0.name == name })
        #expect(S.outcome { _ = try WireMessage.decode(try S.hex(v.hex)) } == v.error)
    }

    @Test(arguments: file.invalidOffers.map(\.name))
    func invalidOffer(_ name: String) throws {
        let v = try #require(Self.file.invalidOffers.first { $0.name == name })
        var assembler = OfferAssembler()
        let outcome = S.outcome {
            for part in v.parts {
                guard case .offer(let o) = try WireMessage.decode(try S.hex(part)) else {
                    throw WireError(.internalError, "not an OFFER")
                }
                _ = try assembler.add(o)
            }
        }
        #expect(outcome == v.error)
    }

    /// The relayed OFFER vectors carry real signatures (by PyNaCl): assembled, they verify.
    @Test func relayedOffersVerify() throws {
        let offers = Self.file.messages.filter { $0.type == "OFFER" }
        #expect(offers.count >= 2)
        for v in offers {
            guard case .offer(let o) = try WireMessage.decode(try S.hex(v.hex)) else { return }
            var assembler = OfferAssembler()
            let assembled = try #require(try assembler.add(o))
            // A delivery names its sender; a deposit was signed by the handshake peer, who is the
            // vectors' alice (the sender of the delivery).
            let alice = try #require(
                offers.compactMap { m -> SigningPublicKey? in
                    guard case .offer(let d) = try? WireMessage.decode(try S.hex(m.hex)), let f = d.from else {
                        return nil
                    }
                    return try? SigningPublicKey(bytes: f.ed25519.bytes)
                }.first)
            #expect(assembled.hasValidSignature(by: assembled.fromKey ?? alice), "\(v.name)")
            var tampered = assembled
            tampered.items[0].name = "x.jpg"
            #expect(!tampered.hasValidSignature(by: assembled.fromKey ?? alice))
        }
    }
}
