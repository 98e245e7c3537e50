import Foundation
import LocafotoCrypto
import LocafotoWire
import Testing

// protocol/vectors/wire-messages.json, written by scripts/gen-vectors.py from messages.md
// with Python's json module (never with this code).

struct WireVectorFile: Decodable, Sendable {
    struct Vector: Decodable, Sendable {
        let name: String
        let type: String
        let hex: String
        let fields: [String: JSONValue]
        let canonical: String
        /// Decodes, but the item fails at the receiver's checks with this code (an ITEM_END
        /// whose authTag or signature has the wrong length: messages.md ITEM_END "Limits").
        let itemFails: String?
    }
    struct Invalid: Decodable, Sendable {
        let name: String
        let hex: String
        let error: String
    }
    struct Hello: Decodable, Sendable {
        let name: String
        let hex: String
        let fields: [String: JSONValue]
        let canonical: String
    }
    struct Frame: Decodable, Sendable {
        let payload: String
        let frame: String
    }
    let maxMessageLength: Int
    let vectors: [Vector]
    let invalid: [Invalid]
    let hello: [Hello]
    let frames: [Frame]
}

@Suite("Protocol vectors (wire-messages.json)")
struct WireVectorTests {
    typealias S = WireTestSupport
    // A missing or unreadable file leaves the parameterized tests empty and fails the first test.
    static let file =
        (try? S.vectors(WireVectorFile.self, "wire-messages.json"))
        ?? WireVectorFile(maxMessageLength: 0, vectors: [], invalid: [], hello: [], frames: [])

    @Test func fileCoversEveryMessageType() throws {
        _ = try S.vectors(WireVectorFile.self, "wire-messages.json")
        #expect(Self.file.maxMessageLength == WireProtocol.maxMessageLength)
        let types = Set(Self.file.vectors.map(\.type))
        // The relay messages (issue 4) have their vectors in relay-signatures.json (RelayVectorTests).
        let relayKinds: Set<WireMessage.Kind> = [.collect, .queue, .receipts]
        #expect(types == Set(WireMessage.Kind.allCases.filter { !relayKinds.contains($0) }.map(\.protocolName)))
        #expect(Self.file.invalid.count >= 30)
    }

    /// Decodes the peer's spelling, compares every field, and checks that our encoding is the
    /// canonical one and decodes to the same message.
    @Test(arguments: file.vectors.map(\.name))
    func decodeVector(_ name: String) throws {
        let v = try #require(Self.file.vectors.first { $0.name == name })
        let bytes = try S.hex(v.hex)
        let message = try WireMessage.decode(bytes)
        #expect(message.kind.protocolName == v.type)
        #expect(bytes.first == message.kind.rawValue)
        #expect(fields(of: message) == v.fields, "decoded \(JSONValue.object(fields(of: message)))")

        let encoded = try message.encoded()
        #expect(
            Hex.encode(encoded) == v.canonical, "our encoding: \(String(decoding: encoded.dropFirst(), as: UTF8.self))")
        #expect(try WireMessage.decode(encoded) == message)
        #expect(try WireMessage.decode(try S.hex(v.canonical)) == message)
        // Stable: encode(decode(encode(m))) == encode(m).
        #expect(try WireMessage.decode(encoded).encoded() == encoded)
    }

    /// A wrong-length `authTag` or `signature` is no decoding error (the session goes on): these
    /// decode to an ITEM_END (and round-trip, `decodeVector`); the receiver's item check fails
    /// them with the code named (LocafotoAgentTests, ItemEndVectorTests).
    @Test func itemFailVectorsDecode() throws {
        let failing = Self.file.vectors.filter { $0.itemFails != nil }
        #expect(failing.count >= 2)
        for v in failing {
            guard case .itemEnd(let end) = try WireMessage.decode(try S.hex(v.hex)) else {
                Issue.record("\(v.name): not an ITEM_END")
                continue
            }
            #expect(end.authTag.bytes.count != 16 || end.signature.bytes.count != 64, "\(v.name)")
            #expect(
                WireErrorCode.allCases.contains { $0.name == v.itemFails },
                "\(v.name): unknown code \(v.itemFails ?? "")")
        }
    }

    @Test(arguments: file.invalid.map(\.name))
    func invalidVector(_ name: String) throws {
        let v = try #require(Self.file.invalid.first { $0.name == name })
        let bytes = try S.hex(v.hex)
        #expect(S.outcome { _ = try WireMessage.decode(bytes) } == v.error, "\(v.name)")
    }

    @Test(arguments: file.hello.map(\.name))
    func helloVector(_ name: String) throws {
        let v = try #require(Self.file.hello.first { $0.name == name })
        for hex in [v.hex, v.canonical] {
            let hello = try JSONDecoder().decode(Hello.self, from: Data(try S.hex(hex)))
            let got: [String: JSONValue] = [
                "v": .integer(hello.v), "ed25519": .string(Hex.encode(hello.ed25519.bytes)),
                "name": .string(hello.name),
                "caps": .array(hello.caps.map { .string($0) }),
            ]
            #expect(got == v.fields)
            let again = try JSONDecoder().decode(Hello.self, from: try JSONEncoder().encode(hello))
            #expect(again == hello)
        }
    }

    @Test func frameVectors() throws {
        for f in Self.file.frames {
            let payload = try S.hex(f.payload)
            let frame = try S.hex(f.frame)
            #expect(try Framing.frame(payload) == frame)
            var parser = FrameParser()
            parser.append(frame)
            #expect(try parser.next() == payload)
            #expect(try parser.next() == nil)
            #expect(parser.pendingCount == 0)
        }
    }
}
