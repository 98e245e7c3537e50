import Foundation
import LocafotoFormats
import LocafotoTestSupport
import LocafotoWire
import Testing

@Suite("Wire messages")
struct MessageTests {
    typealias S = WireTestSupport

    static let metadata = BundleMetadata(
        originalSize: 3_145_728, captureDate: "2025-11-15T10:30:00Z", width: 4032, height: 3024, format: "JPEG",
        name: "IMG_0001.jpg")

    /// One message of each kind (exhaustive: a new kind fails to compile here).
    static func sample(_ kind: WireMessage.Kind) -> [WireMessage] {
        let id = S.offerID
        switch kind {
        case .offer:
            return [
                .offer(S.offer([S.item(0), S.item(1, size: 0, name: "Été 🌊 \"x\" \\ y.heic", kind: "heic")])),
                .offer(Offer(offer: id, items: [], more: true, totalItems: 300, totalBytes: 1 << 40)),
                .offer(
                    Offer(
                        offer: id, items: [S.item(0)], more: false, totalItems: 1, totalBytes: 1000, to: Array(0..<32),
                        from: OfferSender(ed25519: Array(32..<64), name: "alice"), signature: Array(64..<128))),
            ]
        case .decision:
            return [
                .decision(Decision(offer: id, decision: .accepted)),
                .decision(Decision(offer: id, decision: .rejected, code: .refusedByPolicy, message: "off")),
                .decision(Decision(offer: id, decision: .expired, code: .expired)),
                .decision(
                    Decision(
                        offer: id, decision: .accepted, resume: [ResumePoint(item: 2, offset: 1_048_576)],
                        completed: [
                            CompletedItem(item: 0, status: .imported, photo: S.uuid(9)),
                            CompletedItem(item: 1, status: .queued),
                        ],
                        receipt: Array(0..<64))),
            ]
        case .itemStart:
            return [
                .itemStart(
                    ItemStart(
                        offer: id, item: 0, photo: S.uuid(9), algorithm: "chacha20-poly1305", iv: Array(0..<12),
                        encryptedKey: Array(repeating: 0xAB, count: 80), offset: 0, metadata: metadata)),
                .itemStart(
                    ItemStart(
                        offer: id, item: 9999, photo: S.uuid(10), algorithm: "chacha20-poly1305", iv: [],
                        encryptedKey: [],
                        offset: 0, metadata: BundleMetadata(originalSize: 0, format: "PNG"))),
            ]
        case .itemData:
            return [
                .itemData(ItemData(item: 0, offset: 0, data: [])),
                .itemData(ItemData(item: 7, offset: 65_024, data: Array(0..<255))),
                .itemData(ItemData(item: .max, offset: .max, data: [1])),
                .itemData(
                    ItemData(item: 1, offset: 1, data: [UInt8](repeating: 0x5A, count: WireProtocol.chunkLength))),
            ]
        case .itemEnd:
            return [.itemEnd(ItemEnd(offer: id, item: 3, authTag: Array(0..<16), signature: Array(100..<164)))]
        case .itemResult:
            return [
                .itemResult(ItemResult(offer: id, item: 0, status: .imported, photo: S.uuid(9))),
                .itemResult(ItemResult(offer: id, item: 1, status: .queued)),
                .itemResult(ItemResult(offer: id, item: 2, status: .failed, code: .hashMismatch, message: "hash")),
                .itemResult(ItemResult(offer: id, item: 3, status: .held)),
                .itemResult(
                    ItemResult(
                        offer: id, item: 4, status: .imported, message: "already in the vault", photo: S.uuid(9),
                        duplicate: true)),
            ]
        case .error:
            return [
                .error(ErrorBody(code: .protocolViolation, message: "bad", offer: id)),
                .error(ErrorBody(code: .internalError, message: "")),
            ]
        case .ping: return [.ping]
        case .pong: return [.pong]
        case .done: return [.done(Done(offer: id))]
        case .collect: return [.collect(Collect(want: .offers)), .collect(Collect(want: .receipts))]
        case .queue: return [.queue(Queue(offers: 0)), .queue(Queue(offers: 3))]
        case .receipts: return RelayMessageTests.receiptsSamples
        case .preview:
            return [
                .preview(Preview(item: 0, sealed: [])),
                .preview(Preview(item: .max, sealed: [UInt8](repeating: 0xA5, count: PreviewImage.maxBytes + 48))),
            ]
        }
    }

    @Test(arguments: WireMessage.Kind.allCases)
    func roundTrip(_ kind: WireMessage.Kind) throws {
        for m in Self.sample(kind) {
            #expect(m.kind == kind)
            let bytes = try m.encoded()
            #expect(bytes.first == kind.rawValue)
            #expect(bytes.count <= WireProtocol.maxMessageLength)
            #expect(try WireMessage.decode(bytes) == m)
            #expect(try WireMessage.decode(bytes[...]) == m)  // any collection
            #expect(try WireMessage.decode(bytes).encoded() == bytes)
        }
    }

    @Test func kindNumbers() throws {
        #expect(WireMessage.Kind.allCases.map(\.rawValue) == Array(1...14))
        #expect(try WireMessage.ping.encoded() == [0x08])
        #expect(try WireMessage.pong.encoded() == [0x09])
    }

    @Test func itemDataLayout() throws {
        let m = WireMessage.itemData(ItemData(item: 0x0102_0304, offset: 0x0506_0708_090A_0B0C, data: [0xEE, 0xFF]))
        let b = try m.encoded()
        #expect(b == [0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xEE, 0xFF])
        #expect(WireMessage.itemDataHeader(item: 0x0102_0304, offset: 0x0506_0708_090A_0B0C) + [0xEE, 0xFF] == b)
        #expect(WireMessage.itemDataHeader(item: 0, offset: 0).count == ItemData.headerLength)
    }

    @Test func itemDataSizeLimits() throws {
        let maxData = WireProtocol.maxMessageLength - ItemData.headerLength
        #expect(maxData == 65_506)
        #expect(WireProtocol.chunkLength <= maxData)
        let biggest = WireMessage.itemData(ItemData(item: 0, offset: 0, data: [UInt8](repeating: 1, count: maxData)))
        let b = try biggest.encoded()
        #expect(b.count == WireProtocol.maxMessageLength)
        #expect(try WireMessage.decode(b) == biggest)
        let tooBig = WireMessage.itemData(ItemData(item: 0, offset: 0, data: [UInt8](repeating: 1, count: maxData + 1)))
        #expect(S.outcome { _ = try tooBig.encoded() } == "too_large")
        #expect(S.outcome { _ = try WireMessage.decode(b + [0]) } == "too_large")
    }

    @Test func previewLayout() throws {
        let m = WireMessage.preview(Preview(item: 0x0102_0304, sealed: [0xEE, 0xFF]))
        #expect(try m.encoded() == [0x0E, 1, 2, 3, 4, 0xEE, 0xFF])
        #expect(S.outcome { _ = try WireMessage.decode([0x0E, 0, 0, 0]) } == "protocol_violation")
        #expect(S.outcome { _ = try WireMessage.decode([0x0E]) } == "protocol_violation")
    }

    // MARK: hostile input

    @Test func emptyAndUnknownTypes() {
        #expect(S.outcome { _ = try WireMessage.decode([UInt8]()) } == "protocol_violation")
        for t in [0x00] + Array(0x0F...0xFF) {
            #expect(S.outcome { _ = try WireMessage.decode([UInt8(t)]) } == "protocol_violation", "type \(t)")
            #expect(S.outcome { _ = try WireMessage.decode([UInt8(t)] + Array("{}".utf8)) } == "protocol_violation")
        }
    }

    /// Every prefix of every JSON message is refused (never a crash, always WireError).
    @Test(arguments: WireMessage.Kind.allCases.filter { ![.itemData, .preview, .ping, .pong].contains($0) })
    func everyTruncatedJSONBody(_ kind: WireMessage.Kind) throws {
        for m in Self.sample(kind) {
            let b = try m.encoded()
            for n in 0..<b.count {
                #expect(
                    S.outcome { _ = try WireMessage.decode(b.prefix(n)) } == "protocol_violation", "\(kind) cut at \(n)"
                )
            }
        }
    }

    @Test(
        arguments: [
            (0x01, #"{"offer":"x","items":[],"more":false,"totalItems":"1","totalBytes":0}"#),
            (0x01, #"{"offer":"x","items":{},"more":false,"totalItems":1,"totalBytes":0}"#),
            (0x01, #"{"offer":"x","items":[],"more":"no","totalItems":1,"totalBytes":0}"#),
            (0x01, #"{"offer":null,"items":[],"more":false,"totalItems":1,"totalBytes":0}"#),
            (
                0x01,
                #"{"offer":"x","items":[{"id":"a","name":"b","kind":"jpeg","size":-1.5,"hash":"c"}],"more":false,"totalItems":1,"totalBytes":0}"#
            ),
            (0x01, #"{"offer":"x","items":[7],"more":false,"totalItems":1,"totalBytes":0}"#),
            (0x01, #"{"offer":"x","items":[],"more":false,"totalItems":1,"totalBytes":1e30}"#),
            (0x02, #"{"offer":"x","decision":"ACCEPTED"}"#),
            (0x02, #"{"offer":"x","decision":true}"#),
            (0x02, #"{"offer":"x","decision":"rejected","code":1.5}"#),
            (0x02, #"{"offer":"x","decision":"rejected","message":3}"#),
            (
                0x03,
                #"{"offer":"x","item":"0","photo":"p","algorithm":"a","iv":"","encryptedKey":"","offset":0,"metadata":{"originalSize":0,"format":"PNG"}}"#
            ),
            (
                0x03,
                #"{"offer":"x","item":0,"photo":"p","algorithm":"a","iv":"","encryptedKey":"","offset":0,"metadata":{"originalSize":0}}"#
            ),
            (
                0x03,
                #"{"offer":"x","item":0,"photo":"p","algorithm":"a","iv":"","encryptedKey":"","offset":0,"metadata":[]}"#
            ),
            (
                0x03,
                #"{"offer":"x","item":0,"photo":"p","algorithm":"a","iv":0,"encryptedKey":"","offset":0,"metadata":{"originalSize":0,"format":"PNG"}}"#
            ),
            (0x05, #"{"offer":"x","item":0,"authTag":"AAAA","signature":["AAAA"]}"#),
            (0x06, #"{"offer":"x","item":0,"status":"done"}"#),
            (0x06, #"{"offer":"x","item":0}"#),
            (0x07, #"{"code":1}"#),
            (0x07, #"{"code":"1","message":"m"}"#),
            (0x07, #"{"code":-1,"message":"m"}"#),
            (0x07, #"{"code":65536,"message":"m"}"#),
            (0x0A, #"{"offer":5}"#),
            (0x0A, #"[]"#),
            (0x0A, #""offer""#),
            (0x0A, #"{"offer":"x"} {"offer":"y"}"#),
        ] as [(UInt8, String)])
    func wrongJSONTypes(_ type: UInt8, _ body: String) {
        #expect(S.outcome { _ = try WireMessage.decode([type] + Array(body.utf8)) } == "protocol_violation")
    }

    @Test func unknownFieldsAreIgnored() throws {
        let body = #"{"offer":"x","decision":"accepted","extra":{"nested":[1,2,3]},"code":null}"#
        #expect(
            try WireMessage.decode([0x02] + Array(body.utf8)) == .decision(Decision(offer: "x", decision: .accepted)))
    }

    @Test func itemDataShorterThanItsHeader() throws {
        for n in 0..<12 {
            #expect(
                S.outcome { _ = try WireMessage.decode([0x04] + [UInt8](repeating: 0xFF, count: n)) }
                    == "protocol_violation", "\(n) bytes")
        }
        #expect(
            try WireMessage.decode([0x04] + [UInt8](repeating: 0, count: 12))
                == .itemData(ItemData(item: 0, offset: 0, data: [])))
    }

    @Test func pingAndPongCarryNoBody() {
        for body: [UInt8] in [[0], [0x7B, 0x7D], Array(repeating: 1, count: 1000)] {
            #expect(S.outcome { _ = try WireMessage.decode([0x08] + body) } == "protocol_violation")
            #expect(S.outcome { _ = try WireMessage.decode([0x09] + body) } == "protocol_violation")
        }
    }

    @Test func oversizedMessagesAreRefusedBeforeParsing() {
        for type: UInt8 in [0x01, 0x04, 0x07, 0x08] {
            let big = [type] + [UInt8](repeating: 0x20, count: WireProtocol.maxMessageLength)
            #expect(S.outcome { _ = try WireMessage.decode(big) } == "too_large")
        }
        let hugeError = WireMessage.error(
            ErrorBody(code: .internalError, message: String(repeating: "x", count: 70_000)))
        #expect(S.outcome { _ = try hugeError.encoded() } == "too_large")
        let hugeOffer = WireMessage.offer(
            S.offer((0..<200).map { S.item($0, name: String(repeating: "n", count: 250) + "\($0)") }))
        #expect(S.outcome { _ = try hugeOffer.encoded() } == "too_large")
    }

    /// A JSON body of exactly the maximum length still decodes.
    @Test func largestJSONBody() throws {
        let overhead = try WireMessage.error(ErrorBody(code: .internalError, message: "")).encoded().count
        let m = WireMessage.error(
            ErrorBody(
                code: .internalError, message: String(repeating: "x", count: WireProtocol.maxMessageLength - overhead)))
        let b = try m.encoded()
        #expect(b.count == WireProtocol.maxMessageLength)
        // It decodes; its free text is then cut to the longest peer message kept.
        let kept = WireMessage.error(
            ErrorBody(code: .internalError, message: String(repeating: "x", count: PeerText.maxMessageBytes)))
        #expect(try WireMessage.decode(b) == kept)
    }

    @Test func invalidBase64InBytesFields() throws {
        let good = try WireMessage.itemEnd(
            ItemEnd(offer: "x", item: 0, authTag: Array(0..<16), signature: Array(0..<64))
        ).encoded()
        let text = String(decoding: good.dropFirst(), as: UTF8.self)
        let tag = Data(Array(0..<16) as [UInt8]).base64EncodedString()
        for bad in ["!!!!", "AAA", "AAAAA", "A===", "AA==AA==", " AAAA", "AAAA\\n", "AAE=", "-_-_"] {
            let body = text.replacingOccurrences(of: tag, with: bad)
            let outcome = S.outcome { _ = try WireMessage.decode([0x05] + Array(body.utf8)) }
            if bad == "AAE=" {
                #expect(outcome == "ok")  // valid base64 (2 bytes): lengths are checked by the receiver, not here
            } else {
                #expect(outcome == "protocol_violation", "authTag '\(bad)'")
            }
        }
        // Unpadded base64 is refused (the protocol says: with padding).
        #expect(tag.hasSuffix("=="))
        let unpadded = text.replacingOccurrences(of: tag, with: String(tag.dropLast(2)))
        #expect(S.outcome { _ = try WireMessage.decode([0x05] + Array(unpadded.utf8)) } == "protocol_violation")
    }

    @Test func bytesFieldLengthLimit() throws {
        func itemEnd(signature: String) -> [UInt8] {
            [0x05] + Array(#"{"offer":"x","item":0,"authTag":"AAAA","signature":"\#(signature)"}"#.utf8)
        }
        let atLimit = String(repeating: "A", count: 8192)
        let m = try WireMessage.decode(itemEnd(signature: atLimit))
        guard case .itemEnd(let e) = m else {
            Issue.record("not ITEM_END")
            return
        }
        #expect(e.signature.bytes.count == 6144)
        #expect(S.outcome { _ = try WireMessage.decode(itemEnd(signature: atLimit + "AAAA")) } == "protocol_violation")
    }

    @Test func helloBase64() throws {
        let hello = Hello(ed25519: Array(0..<32), name: "alice", caps: ["x"])
        let data = try JSONEncoder().encode(hello)
        #expect(try JSONDecoder().decode(Hello.self, from: data) == hello)
        #expect(hello.v == WireProtocol.version)
        let bad = Data(#"{"v":1,"ed25519":"not base64","name":"a","caps":[]}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Hello.self, from: bad) }
    }

    /// Random bytes and random corruptions of valid messages: decode throws WireError or
    /// returns a message; it never crashes or leaks another error type.
    @Test func fuzz() throws {
        var rng = S.RNG(2024)
        var valid: [[UInt8]] = []
        for k in WireMessage.Kind.allCases { for m in Self.sample(k) { valid.append(try m.encoded()) } }
        for i in 0..<5000 {
            var b: [UInt8]
            if i % 2 == 0 {
                b = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if !b.isEmpty, i % 4 == 0 { b[0] = UInt8.random(in: 1...13, using: &rng) }
            } else {
                b = valid[Int.random(in: 0..<valid.count, using: &rng)]
                for _ in 0..<Int.random(in: 1...4, using: &rng) where !b.isEmpty {
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: b[Int.random(in: 0..<b.count, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                    case 1: b.removeLast(Int.random(in: 0...min(5, b.count), using: &rng))
                    default:
                        b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
                    }
                }
            }
            let outcome = S.outcome { _ = try WireMessage.decode(b) }
            #expect(outcome == "ok" || outcome == "protocol_violation", "\(outcome) for \(b.prefix(40))")
        }
    }

    // MARK: error codes

    @Test func errorCodes() throws {
        for code in WireErrorCode.allCases {
            #expect(WireErrorCode(wire: code.rawValue) == code)
        }
        #expect(WireErrorCode.allCases.map(\.rawValue) == Array(0...16))
        #expect(Set(WireErrorCode.allCases.map(\.name)).count == WireErrorCode.allCases.count)
        #expect(WireErrorCode.allCases.allSatisfy { $0.name.allSatisfy { $0.isLowercase || $0 == "_" } })
        #expect(WireErrorCode.protocolViolation.description == "protocol_violation (1)")
        for unknown: UInt16 in [17, 18, 100, 999, 65535] {
            #expect(WireErrorCode(wire: unknown) == .unknown)
            let body = #"{"code":\#(unknown),"message":"m"}"#
            #expect(
                try WireMessage.decode([0x07] + Array(body.utf8)) == .error(ErrorBody(code: .unknown, message: "m")))
            let decision = #"{"offer":"o","decision":"rejected","code":\#(unknown)}"#
            #expect(
                try WireMessage.decode([0x02] + Array(decision.utf8))
                    == .decision(Decision(offer: "o", decision: .rejected, code: .unknown)))
            let result = #"{"offer":"o","item":0,"status":"failed","code":\#(unknown)}"#
            #expect(
                try WireMessage.decode([0x06] + Array(result.utf8))
                    == .itemResult(ItemResult(offer: "o", item: 0, status: .failed, code: .unknown)))
        }
        // `duplicate` is absent unless set, so a plain result stays what older peers read;
        // a peer that never heard of it reads `imported`.
        let plain = try WireMessage.itemResult(ItemResult(offer: "o", item: 0, status: .imported, photo: "p")).encoded()
        #expect(!String(decoding: plain.dropFirst(), as: UTF8.self).contains("duplicate"))
        let marked = #"{"offer":"o","item":0,"status":"imported","photo":"p","duplicate":true}"#
        #expect(
            try WireMessage.decode([0x06] + Array(marked.utf8))
                == .itemResult(ItemResult(offer: "o", item: 0, status: .imported, photo: "p", duplicate: true)))
        // Codes travel as numbers.
        let encoded = try WireMessage.error(ErrorBody(code: .identityMismatch, message: "m")).encoded()
        #expect(String(decoding: encoded.dropFirst(), as: UTF8.self) == #"{"code":16,"message":"m"}"#)
        let e = WireError(.tooLarge, "big")
        #expect(e.description == "big [too_large]")
    }
}
