import LocafotoWire
import Testing

/// Issue 10 §2: tables align names with emoji and CJK characters by terminal cells.
@Suite("Terminal cells of text")
struct TerminalCellsTests {
    @Test(arguments: [
        ("IMG_0001.jpg", 12),
        ("", 0),
        ("été", 3),  // precomposed
        ("e\u{301}te\u{301}", 3),  // combining accents take no cell
        ("写真", 4),
        ("한국어", 6),
        ("ｱｲｳ", 3),  // half-width katakana
        ("🌊", 2),
        ("Plage 🌊.heic", 13),
        ("❤", 1),  // text presentation by default
        ("❤️", 2),  // with U+FE0F
        ("👍🏽", 2),  // skin-tone modifier in the same cluster
        ("👩‍👩‍👧", 2),  // ZWJ sequence: one glyph
        ("🇫🇷", 2),  // flag
        ("bob 写真 🌊", 11),
    ])
    func cells(_ text: String, _ expected: Int) {
        #expect(PeerText.cells(text) == expected, "'\(text)'")
    }

    @Test("the escaped form of an unsafe scalar is counted as printed")
    func escapedText() {
        let shown = PeerText.escaped("a\u{1B}b")
        #expect(PeerText.cells(shown) == shown.count)
    }
}
