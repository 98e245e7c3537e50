import Foundation
import LocafotoWire
import Testing

/// Issue 8 §2: peer text cannot drive a terminal or forge a log line.
@Suite("Peer text: the refused classes, sanitizing at decode, escaping at display")
struct PeerTextTests {
    typealias S = WireTestSupport

    /// Every class messages.md "Peer text" lists, and what must stay allowed.
    @Test func unsafeClasses() {
        let unsafe: [UInt32] = [
            0x00, 0x07, 0x0A, 0x0D, 0x1B, 0x7F,  // C0, DEL
            0x80, 0x85, 0x9B, 0x9F,  // C1 (NEL, CSI)
            0x2028, 0x2029,  // line and paragraph separators
            0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,  // bidi
            0x00AD, 0x2060, 0xFEFF, 0xE0001,  // other format characters
        ]
        for v in unsafe { #expect(PeerText.isUnsafe(Unicode.Scalar(v)!), "U+\(String(v, radix: 16)) must be refused") }
        let safe: [UInt32] = [0x20, 0x41, 0xE9, 0x4E2D, 0x1F600, 0x200C, 0x200D, 0xE0067, 0xFE0F, 0xA0]
        for v in safe { #expect(!PeerText.isUnsafe(Unicode.Scalar(v)!), "U+\(String(v, radix: 16)) must stay allowed") }
        #expect(PeerText.isClean("Ünïcødé 名前 👨‍👩‍👧 🏴󠁧󠁢󠁳󠁣󠁴󠁿.jpg"))
    }

    @Test func messagesAreMadeSafeAndCut() {
        let attack = "\u{1B}]0;pwned\u{07}\u{1B}[2J\nall photos imported\u{202E}\u{2028}\u{85}\u{9B}31m"
        let m = PeerText.message(attack)
        #expect(PeerText.isClean(m))
        #expect(m == "\u{FFFD}]0;pwned\u{FFFD}\u{FFFD}[2J all photos imported\u{FFFD}  \u{FFFD}31m")
        #expect(PeerText.message(String(repeating: "é", count: 2000)).utf8.count == PeerText.maxMessageBytes)
        // Cut at a character boundary, never inside one.
        #expect(PeerText.message("ab" + String(repeating: "€", count: 400), maxBytes: 10) == "ab€€")
    }

    @Test func escapingShowsWhatWasThere() {
        #expect(PeerText.escaped("plain text") == "plain text")
        #expect(PeerText.escaped("a\u{1B}[2Jb\nc") == "a\\u{1B}[2Jb\\u{A}c")
        #expect(PeerText.escaped("a\nb\u{202E}", keepingNewlines: true) == "a\nb\\u{202E}")
        #expect(PeerText.quoted("x\u{07}" + String(repeating: "y", count: 100)).hasPrefix("'x\\u{7}yyy"))
        #expect(PeerText.quoted(String(repeating: "y", count: 100)).hasSuffix("…'"))
    }

    /// JSON output stays the same JSON value, with the unsafe scalars as \u escapes.
    @Test func jsonEscapingKeepsTheValue() throws {
        let value = ["name": "bidi\u{202E}gpj.exe \u{85}\u{2028} \u{E0001}", "ok": "fine"]
        let raw = String(
            decoding: try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys]),
            as: UTF8.self)
        let safe = PeerText.jsonEscaped(raw)
        #expect(PeerText.isClean(safe.replacingOccurrences(of: "\n", with: "")))
        #expect(safe.contains("\\u202e") && safe.contains("\\udb40\\udc01"))
        let back = try JSONSerialization.jsonObject(with: Data(safe.utf8)) as? [String: String]
        #expect(back == value)
    }

    /// The one place peer messages enter: every free-text field is clean after decoding.
    @Test func decodingSanitizesEveryPeerMessage() throws {
        let attack = "\u{1B}[2J\nforged line\u{202E}"
        let messages: [WireMessage] = [
            .decision(Decision(offer: S.offerID, decision: .rejected, code: .refusedByPolicy, message: attack)),
            .error(ErrorBody(code: .internalError, message: attack)),
            .itemResult(ItemResult(offer: S.offerID, item: 0, status: .failed, code: .hashMismatch, message: attack)),
            .receipts(
                Receipts(
                    receipts: [
                        Receipt(
                            offer: S.offerID, to: Array(repeating: 1, count: 32), state: .delivered,
                            decision: .accepted,
                            items: [ReceiptItem(item: 0, status: .failed, code: .storageFailed, message: attack)],
                            at: "2026-11-24T00:00:00Z")
                    ], more: false)),
        ]
        for m in messages {
            let decoded = try WireMessage.decode(try m.encoded())
            let text: String? =
                switch decoded {
                case .decision(let d): d.message
                case .error(let e): e.message
                case .itemResult(let r): r.message
                case .receipts(let r): r.receipts[0].items[0].message
                default: nil
                }
            #expect(text == PeerText.message(attack), "\(decoded)")
            #expect(PeerText.isClean(text ?? ""))
        }
    }

    /// Names with such characters are refused, as messages.md says of item names.
    @Test(arguments: [
        "bidi\u{202E}gpj.exe", "line\u{2028}sep.jpg", "nel\u{85}.jpg", "csi\u{9B}31m.jpg", "esc\u{1B}.jpg",
        "bom\u{FEFF}.jpg",
    ])
    func offersWithUnsafeNamesAreRefused(name: String) {
        #expect(OfferAssemblerTests.outcome(S.item(0, name: name)) == "protocol_violation")
    }

    @Test func emojiNamesStayAllowed() {
        #expect(OfferAssemblerTests.outcome(S.item(0, name: "family 👨‍👩‍👧 in 🏴󠁧󠁢󠁳󠁣󠁴󠁿.jpg")) == "complete")
    }

    @Test func displayNamesDropEveryUnsafeScalar() {
        #expect(DisplayName.sanitize("ali\u{2028}ce\u{1B}[2J\u{202E}") == "alice[2J")
        #expect(DisplayName.sanitize("\u{2029}\u{85}") == "unnamed")
    }
}
