import Foundation
import LocafotoCrypto
import LocafotoTestSupport
import LocafotoWire
import Testing

// protocol/vectors/wire-messages.json, written by scripts/gen-vectors.py from messages.md with
// Python's json module, and the messages added for resume and relay in relay-signatures.json,
// written by scripts/gen-vectors-relay.py with Python's json module and PyNaCl (never with this
// code). The signature cases of relay-signatures.json are checked by the formats tests
// (RelaySignatureVectorTests).

@Suite("Protocol vectors (wire-messages.json, relay-signatures.json: messages)")
struct WireVectorTests {
    typealias S = WireTestSupport
    static let file = "wire-messages.json"
    static let relayFile = "relay-signatures.json"
    // The parameterized tests' cases, and what the first two tests count: a file or a key that
    // cannot be read leaves a list empty, and those tests fail.
    static let messages = Vector.entries(file, "vectors")
    static let invalid = Vector.entries(file, "invalid")
    static let hellos = Vector.entries(file, "hello")
    static let relayMessages = Vector.entries(relayFile, "messages")
    static let relayInvalid = Vector.entries(relayFile, "invalid")
    static let invalidOffers = Vector.entries(relayFile, "invalidOffers")

    @Test func fileCoversEveryMessageType() throws {
        #expect(try Vector.load(Self.file).maxMessageLength.int == WireProtocol.maxMessageLength)
        let types = Set(try Self.messages.map { try $0.type.string })
        // The relay messages (issue 4) have their vectors in relay-signatures.json (relayFileCoversTheRelayMessages).
        let relayKinds: Set<WireMessage.Kind> = [.collect, .queue, .receipts]
        #expect(types == Set(WireMessage.Kind.allCases.filter { !relayKinds.contains($0) }.map(\.protocolName)))
        #expect(Self.invalid.count >= 30)
        #expect(Self.hellos.count >= 2)
    }

    @Test func relayFileCoversTheRelayMessages() throws {
        let types = Set(try Self.relayMessages.map { try $0.type.string })
        for kind: WireMessage.Kind in [.collect, .queue, .receipts, .offer, .decision, .itemResult] {
            #expect(types.contains(kind.protocolName), "\(kind)")
        }
        #expect(Self.relayInvalid.count >= 10)
        #expect(Self.invalidOffers.count >= 5)
    }

    /// Decodes the peer's spelling, compares every field, and checks that our encoding is the
    /// canonical one and decodes to the same message.
    @Test(arguments: messages + relayMessages)
    func decodeVector(_ v: Vector) throws {
        let bytes = try v.hex.bytes
        let message = try WireMessage.decode(bytes)
        #expect(message.kind.protocolName == (try v.type.string))
        #expect(bytes.first == message.kind.rawValue)
        #expect(fields(of: message) == (try v.fields.object), "decoded \(JSONValue.object(fields(of: message)))")

        let encoded = try message.encoded()
        #expect(
            Hex.encode(encoded) == (try v.canonical.string),
            "our encoding: \(String(decoding: encoded.dropFirst(), as: UTF8.self))")
        #expect(try WireMessage.decode(encoded) == message)
        #expect(try WireMessage.decode(try v.canonical.bytes) == message)
        // Stable: encode(decode(encode(m))) == encode(m).
        #expect(try WireMessage.decode(encoded).encoded() == encoded)
    }

    /// A wrong-length `authTag` or `signature` is no decoding error (the session goes on): these
    /// decode to an ITEM_END (and round-trip, `decodeVector`); the receiver's item check fails
    /// them with the code named (LocafotoAgentTests, ItemEndVectorTests).
    @Test func itemFailVectorsDecode() throws {
        let failing = Self.messages.filter { $0.itemFails.ifPresent != nil }
        #expect(failing.count >= 2)
        for v in failing {
            guard case .itemEnd(let end) = try WireMessage.decode(try v.hex.bytes) else {
                Issue.record("\(v.testDescription): not an ITEM_END")
                continue
            }
            #expect(end.authTag.bytes.count != 16 || end.signature.bytes.count != 64, "\(v.testDescription)")
            let code = try v.itemFails.string
            #expect(WireErrorCode.allCases.contains { $0.name == code }, "\(v.testDescription): unknown code \(code)")
        }
    }

    @Test(arguments: invalid + relayInvalid)
    func invalidVector(_ v: Vector) throws {
        let bytes = try v.hex.bytes
        #expect(S.outcome { _ = try WireMessage.decode(bytes) } == (try v.error.string))
    }

    @Test(arguments: hellos)
    func helloVector(_ v: Vector) throws {
        for hex in [v.hex, v.canonical] {
            let hello = try JSONDecoder().decode(Hello.self, from: Data(try hex.bytes))
            let got: [String: JSONValue] = [
                "v": .integer(hello.v), "ed25519": .string(Hex.encode(hello.ed25519.bytes)),
                "name": .string(hello.name),
                "caps": .array(hello.caps.map { .string($0) }),
            ]
            #expect(got == (try v.fields.object))
            let again = try JSONDecoder().decode(Hello.self, from: try JSONEncoder().encode(hello))
            #expect(again == hello)
        }
    }

    @Test func frameVectors() throws {
        for f in try Vector.load(Self.file).frames.elements {
            let payload = try f.payload.bytes
            let frame = try f.frame.bytes
            #expect(try Framing.frame(payload) == frame)
            var parser = FrameParser()
            parser.append(frame)
            #expect(try parser.next() == payload)
            #expect(try parser.next() == nil)
            #expect(parser.pendingCount == 0)
        }
    }

    @Test(arguments: invalidOffers)
    func invalidOffer(_ v: Vector) throws {
        var assembler = OfferAssembler()
        let outcome = S.outcome {
            for part in try v.parts.elements {
                guard case .offer(let o) = try WireMessage.decode(try part.bytes) else {
                    throw WireError(.internalError, "not an OFFER")
                }
                _ = try assembler.add(o)
            }
        }
        #expect(outcome == (try v.error.string))
    }

    /// The relayed OFFER vectors carry real signatures (by PyNaCl): assembled, they verify.
    @Test func relayedOffersVerify() throws {
        let offers = Self.relayMessages.filter { (try? $0.type.string) == "OFFER" }
        #expect(offers.count >= 2)
        for v in offers {
            guard case .offer(let o) = try WireMessage.decode(try v.hex.bytes) else { return }
            var assembler = OfferAssembler()
            let assembled = try #require(try assembler.add(o))
            // A delivery names its sender; a deposit was signed by the handshake peer, who is the
            // vectors' alice (the sender of the delivery).
            let alice = try #require(
                offers.compactMap { m -> SigningPublicKey? in
                    guard case .offer(let d) = try? WireMessage.decode(try m.hex.bytes), let f = d.from else {
                        return nil
                    }
                    return try? SigningPublicKey(bytes: f.ed25519.bytes)
                }.first)
            #expect(assembled.hasValidSignature(by: assembled.fromKey ?? alice), "\(v.testDescription)")
            var tampered = assembled
            tampered.items[0].name = "x.jpg"
            #expect(!tampered.hasValidSignature(by: assembled.fromKey ?? alice))
        }
    }
}
