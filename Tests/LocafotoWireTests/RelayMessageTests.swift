import Foundation
import LocafotoWire
import Testing

/// COLLECT, QUEUE and RECEIPTS: encoding, decoding, limits, hostile input.
@Suite("Relay messages")
struct RelayMessageTests {
    typealias S = WireTestSupport

    static let key = [UInt8](0..<32)
    static let receiptSignature = [UInt8](64..<128)

    static let receiptsSamples: [WireMessage] = [
        .receipts(Receipts(receipts: [], more: false)),
        .receipts(
            Receipts(
                receipts: [
                    Receipt(
                        offer: S.offerID, to: key, state: .delivered, decision: .accepted, receipt: receiptSignature,
                        items: [
                            ReceiptItem(item: 0, status: .imported), ReceiptItem(item: 1, status: .queued),
                            ReceiptItem(item: 2, status: .failed, code: .decryptFailed, message: "tag"),
                        ], at: "2026-11-21T10:00:00Z"),
                    Receipt(offer: S.uuid(2), to: key, state: .expired, at: "2026-11-22T00:00:00Z"),
                    Receipt(
                        offer: S.uuid(3), to: key, state: .rejected, decision: .rejected, receipt: receiptSignature,
                        items: [],
                        at: "2026-11-23T00:00:00Z"),
                ], more: true)),
    ]

    @Test func encodings() throws {
        #expect(
            String(decoding: try WireMessage.collect(Collect(want: .offers)).encoded(), as: UTF8.self)
                == "\u{0B}{\"want\":\"offers\"}")
        #expect(
            String(decoding: try WireMessage.collect(Collect(want: .receipts)).encoded(), as: UTF8.self)
                == "\u{0B}{\"want\":\"receipts\"}")
        #expect(
            String(decoding: try WireMessage.queue(Queue(offers: 2)).encoded(), as: UTF8.self) == "\u{0C}{\"offers\":2}"
        )
        let expired = WireMessage.receipts(
            Receipts(receipts: [Receipt(offer: "o", to: Self.key, state: .expired, at: "t")], more: false))
        let b64 = Data(Self.key).base64EncodedString()
        #expect(
            String(decoding: try expired.encoded(), as: UTF8.self)
                == "\u{0D}{\"more\":false,\"receipts\":[{\"at\":\"t\",\"items\":[],\"offer\":\"o\",\"state\":\"expired\",\"to\":\"\(b64)\"}]}"
        )
    }

    /// The design's example (with `null`s) decodes.
    @Test func designExample() throws {
        let b64 = Data(Self.key).base64EncodedString()
        let body = """
            {"receipts": [{"offer": "o", "to": "\(b64)", "state": "expired", "decision": null, "receipt": null,
              "items": [{"item": 0, "status": "failed", "code": 9, "message": "..."}], "at": "2026-11-21T10:00:00Z"}], "more": false}
            """
        let m = try WireMessage.decode([0x0D] + Array(body.utf8))
        #expect(
            m
                == .receipts(
                    Receipts(
                        receipts: [
                            Receipt(
                                offer: "o", to: Self.key, state: .expired,
                                items: [ReceiptItem(item: 0, status: .failed, code: .decryptFailed, message: "...")],
                                at: "2026-11-21T10:00:00Z")
                        ], more: false)))
    }

    @Test func receiptLimits() throws {
        let one = Receipt(offer: "o", to: Self.key, state: .expired, at: "t")
        let atLimit = WireMessage.receipts(
            Receipts(receipts: Array(repeating: one, count: Receipts.maxReceipts), more: true))
        let bytes = try atLimit.encoded()
        #expect(try WireMessage.decode(bytes) == atLimit)
        // One more is refused on both sides.
        let over = Receipts(receipts: Array(repeating: one, count: Receipts.maxReceipts + 1), more: true)
        #expect(S.outcome { _ = try WireMessage.receipts(over).encoded() } == "protocol_violation")
        let overBody = try JSONEncoder().encode(over)
        #expect(S.outcome { _ = try WireMessage.decode([0x0D] + Array(overBody)) } == "protocol_violation")
    }

    @Test func itemsPerReceiptLimit() throws {
        // 10,000 items exceed one message anyway; the count limit is checked before size.
        let many = Receipt(
            offer: "o", to: Self.key, state: .delivered,
            items: (0...Receipt.maxItems).map { ReceiptItem(item: $0, status: .queued) }, at: "t")
        #expect(S.outcome { try many.validate() } == "protocol_violation")
        #expect(
            S.outcome { _ = try WireMessage.receipts(Receipts(receipts: [many], more: false)).encoded() }
                == "protocol_violation")
        var ok = many
        ok.items.removeLast()
        #expect(S.outcome { try ok.validate() } == "ok")
        #expect(
            S.outcome { _ = try WireMessage.receipts(Receipts(receipts: [ok], more: false)).encoded() } == "too_large")
    }

    @Test func receiptFieldLengths() {
        for (to, sig) in [
            (Array(Self.key.prefix(31)), nil), (Self.key + [0], nil),
            (Self.key, Array(Self.receiptSignature.prefix(63))), (Self.key, []),
        ]
            as [([UInt8], [UInt8]?)]
        {
            let r = Receipt(offer: "o", to: to, state: .delivered, decision: .accepted, receipt: sig, at: "t")
            #expect(S.outcome { try r.validate() } == "protocol_violation")
            let body = (try? JSONEncoder().encode(Receipts(receipts: [r], more: false))) ?? Data()
            #expect(S.outcome { _ = try WireMessage.decode([0x0D] + Array(body)) } == "protocol_violation")
        }
    }

    @Test(
        arguments: [
            (0x0B, #"{}"#),
            (0x0B, #"{"want":"photos"}"#),
            (0x0B, #"{"want":"OFFERS"}"#),
            (0x0B, #"{"want":1}"#),
            (0x0B, #"[]"#),
            (0x0C, #"{}"#),
            (0x0C, #"{"offers":"1"}"#),
            (0x0C, #"{"offers":-1}"#),
            (0x0C, #"{"offers":1.5}"#),
            (0x0C, #"{"offers":1e30}"#),
            (0x0D, #"{"receipts":[]}"#),
            (0x0D, #"{"more":false}"#),
            (0x0D, #"{"receipts":{},"more":false}"#),
            (0x0D, #"{"receipts":[7],"more":false}"#),
            (0x0D, #"{"receipts":[{"offer":"o","to":"AAAA","state":"delivered","items":[],"at":"t"}],"more":false}"#),
            (0x0D, #"{"receipts":[{"offer":"o","state":"delivered","items":[],"at":"t"}],"more":false}"#),
            (0x0D, #"{"receipts":[{"offer":"o","to":"!!","state":"delivered","items":[],"at":"t"}],"more":false}"#),
            (
                0x0D,
                #"{"receipts":[{"offer":"o","to":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","state":"lost","items":[],"at":"t"}],"more":false}"#
            ),
            (
                0x0D,
                #"{"receipts":[{"offer":"o","to":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","state":"expired","items":[{"item":0,"status":"gone"}],"at":"t"}],"more":false}"#
            ),
            (
                0x0D,
                #"{"receipts":[{"offer":"o","to":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","state":"expired","items":[],"at":5}],"more":false}"#
            ),
            (
                0x0D,
                #"{"receipts":[{"offer":"o","to":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","state":"expired","decision":"maybe","items":[],"at":"t"}],"more":false}"#
            ),
            (
                0x0D,
                #"{"receipts":[{"offer":"o","to":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","state":"expired","at":"t"}],"more":false}"#
            ),
        ] as [(UInt8, String)])
    func hostileBodies(_ type: UInt8, _ body: String) {
        #expect(S.outcome { _ = try WireMessage.decode([type] + Array(body.utf8)) } == "protocol_violation", "\(body)")
    }

    @Test func validBodiesFromAnotherImplementation() throws {
        // Unknown fields are ignored, key order is free.
        #expect(
            try WireMessage.decode([0x0B] + Array(#"{"x":[1],"want":"receipts"}"#.utf8))
                == .collect(Collect(want: .receipts)))
        #expect(try WireMessage.decode([0x0C] + Array(#"{"offers":0,"later":true}"#.utf8)) == .queue(Queue(offers: 0)))
    }
}
