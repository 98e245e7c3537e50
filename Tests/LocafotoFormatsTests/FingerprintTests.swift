import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import Testing

@Suite("Fingerprints")
struct FingerprintTests {
    typealias S = FormatsTestSupport
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// Public keys of a few fixed identities (seeds 0x01..0x08 repeated).
    static let keys: [SigningPublicKey] = (1...8).map { S.key(seed: UInt8($0)).publicKey }
    static let fp = Fingerprint(publicKey: keys[0])

    @Test func canonicalShape() {
        for key in Self.keys {
            let fp = Fingerprint(publicKey: key)
            #expect(fp.digest.count == 24)
            #expect(fp.digest.allSatisfy { Self.alphabet.contains($0) })
            let groups = fp.description.split(separator: "-", omittingEmptySubsequences: false)
            #expect(groups.count == 4)
            #expect(groups.allSatisfy { $0.count == 7 })
            #expect(groups.map { $0.prefix(6) }.joined() == fp.digest)
            #expect(fp.description.count == 31)
        }
        #expect(Set(Self.keys.map { Fingerprint(publicKey: $0) }).count == Self.keys.count)
    }

    /// Every spelling a human might type parses to the same fingerprint.
    @Test(
        arguments: [
            { (c: String) in c },
            { $0.lowercased() },
            { $0.replacingOccurrences(of: "-", with: "") },
            { $0.replacingOccurrences(of: "-", with: "").lowercased() },
            { $0.replacingOccurrences(of: "-", with: " ") },
            { $0.replacingOccurrences(of: "-", with: " - ") },
            { "  " + $0 + "  " },
            { "-" + $0 + "-" },
            { $0.replacingOccurrences(of: "-", with: "--") },
            { String($0.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.lowercased()) : $0.element }) },
            {
                String(
                    $0.replacingOccurrences(of: "-", with: "").enumerated().flatMap {
                        $0.offset % 4 == 3 ? [$0.element, " "] : [$0.element]
                    })
            },
            {
                String(
                    $0.replacingOccurrences(of: "-", with: "").enumerated().flatMap {
                        $0.offset % 2 == 1 ? [$0.element, "-"] : [$0.element]
                    })
            },
        ] as [@Sendable (String) -> String])
    func spellings(_ spell: @Sendable (String) -> String) throws {
        for key in Self.keys {
            let fp = Fingerprint(publicKey: key)
            let text = spell(fp.description)
            let parsed = try Fingerprint(parsing: text)
            #expect(parsed == fp, "'\(text)'")
            #expect(parsed.description == fp.description)
        }
    }

    /// Luhn mod 32 catches every single-character substitution: each position of each group,
    /// data or check character, replaced by each of the 31 other characters, in both cases.
    @Test func everySubstitutionInEveryGroupIsRejected() {
        let canonical = Array(Self.fp.description)
        for g in 0..<4 {
            for p in 0..<7 {
                let i = g * 8 + p
                for c in Self.alphabet where c != canonical[i] {
                    var typo = canonical
                    typo[i] = c
                    let text = String(typo)
                    #expect(S.outcome { _ = try Fingerprint(parsing: text) } == "malformed", "'\(text)'")
                    #expect(S.outcome { _ = try Fingerprint(parsing: text.lowercased()) } == "malformed")
                }
            }
        }
    }

    @Test func theErrorNamesTheGroupWithTheTypo() throws {
        var chars = Array(Self.fp.description)
        for g in 0..<4 {
            var typo = chars
            let i = g * 8 + 1
            typo[i] = Self.alphabet[(Self.alphabet.firstIndex(of: typo[i])! + 1) % 32]
            do {
                _ = try Fingerprint(parsing: String(typo))
                Issue.record("typo in group \(g + 1) accepted")
            } catch let e as FormatError {
                #expect(e.message.contains("group \(g + 1)"), "\(e.message)")
            }
        }
        chars.removeLast()
        #expect(throws: FormatError.self) { try Fingerprint(parsing: String(chars)) }
    }

    @Test func wrongLengths() {
        let plain = Self.fp.description.replacingOccurrences(of: "-", with: "")
        for n in 0...60 where n != 28 {
            let text = String(String(repeating: plain, count: 3).prefix(n))
            #expect(S.outcome { _ = try Fingerprint(parsing: text) } == "malformed", "\(n) characters")
        }
        #expect(S.outcome { _ = try Fingerprint(parsing: "----  ----") } == "malformed")
        // The bare 24-character digest (no check characters) is not a fingerprint.
        #expect(S.outcome { _ = try Fingerprint(parsing: Self.fp.digest) } == "malformed")
    }

    /// Characters outside A–Z 2–7 (after ASCII case folding, spaces and dashes) are refused,
    /// including Unicode letters whose upper case is ASCII ("ſ" → "S", "ı" → "I", "ß" → "SS").
    @Test(arguments: [
        "0", "1", "8", "9", "=", "@", "_", ".", "+", "/", "*", "\t", "\n", "\r", "\u{0}", "é", "Ａ", "\u{00A0}",
        "\u{017F}", "\u{0131}", "\u{FB00}", "\u{00DF}", "\u{212A}",
    ])
    func nonAlphabetCharacters(_ bad: String) {
        for i in [0, 3, 6, 9, 30] {
            var chars = Array(Self.fp.description).map(String.init)
            chars[i] = bad
            let text = chars.joined()
            #expect(
                S.outcome { _ = try Fingerprint(parsing: text) } == "malformed",
                "U+\(String(bad.unicodeScalars.first!.value, radix: 16)) at \(i)")
        }
    }

    /// A fingerprint whose check characters are right but whose letters came from Unicode
    /// look-alikes must not parse: build one with "S"/"I" replaced where the canonical has them.
    @Test func unicodeCaseMappingDoesNotSneakIn() throws {
        var tried = 0
        for key in (1...60).map({ S.key(seed: UInt8($0)).publicKey }) {
            let d = Fingerprint(publicKey: key).description
            if let r = d.range(of: "S") {
                tried += 1
                #expect(throws: FormatError.self) {
                    try Fingerprint(parsing: d.replacingCharacters(in: r, with: "\u{017F}"))
                }
            }
            if let r = d.range(of: "SS") {
                #expect(throws: FormatError.self) { try Fingerprint(parsing: d.replacingCharacters(in: r, with: "ß")) }
            }
            if let r = d.range(of: "I") {
                #expect(throws: FormatError.self) {
                    try Fingerprint(parsing: d.replacingCharacters(in: r, with: "\u{0131}"))
                }
            }
            if let r = d.range(of: "K") {
                // U+212A KELVIN SIGN lower-cases to "k"; upper case is itself: still refused.
                #expect(throws: FormatError.self) {
                    try Fingerprint(parsing: d.replacingCharacters(in: r, with: "\u{212A}"))
                }
            }
        }
        #expect(tried > 0)
    }

    @Test func short() {
        for key in Self.keys {
            let fp = Fingerprint(publicKey: key)
            #expect(fp.short.count == 7)
            #expect(fp.short == String(fp.description.prefix(7)))
            #expect(!fp.short.contains("-"))
            #expect(fp.matches(prefix: fp.short))
        }
    }

    @Test func matchesPrefix() {
        let d = Self.fp.description
        let plain = d.replacingOccurrences(of: "-", with: "")
        #expect(Self.fp.matches(prefix: String(d.prefix(1))))
        #expect(Self.fp.matches(prefix: String(d.prefix(4))))
        #expect(Self.fp.matches(prefix: String(d.prefix(4)).lowercased()))
        #expect(Self.fp.matches(prefix: String(d.prefix(8))))  // with the trailing dash
        #expect(Self.fp.matches(prefix: String(d.prefix(12))))
        #expect(Self.fp.matches(prefix: String(plain.prefix(12))))
        #expect(Self.fp.matches(prefix: String(d.prefix(12)).replacingOccurrences(of: "-", with: " ")))
        #expect(Self.fp.matches(prefix: d))
        #expect(Self.fp.matches(prefix: plain.lowercased()))
        #expect(!Self.fp.matches(prefix: ""))
        #expect(!Self.fp.matches(prefix: "-"))
        #expect(!Self.fp.matches(prefix: "   "))
        #expect(!Self.fp.matches(prefix: d + "A"))
        #expect(!Self.fp.matches(prefix: String(d.dropFirst().prefix(4))))  // not at the start
        if Self.fp.digest.prefix(8) != plain.prefix(8) {
            #expect(!Self.fp.matches(prefix: String(Self.fp.digest.prefix(8))))  // digest without the check character
        }
        for other in Self.keys.dropFirst() {
            let o = Fingerprint(publicKey: other)
            #expect(!Self.fp.matches(prefix: o.description))
        }
    }

    @Test func codableUsesTheCanonicalString() throws {
        let data = try JSONEncoder().encode([Self.fp])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(Self.fp.description)\"]")
        #expect(try JSONDecoder().decode([Fingerprint].self, from: data) == [Self.fp])
        let lower = Data("[\"\(Self.fp.description.lowercased().replacingOccurrences(of: "-", with: " "))\"]".utf8)
        #expect(try JSONDecoder().decode([Fingerprint].self, from: lower) == [Self.fp])
        var typo = Array(Self.fp.description)
        typo[0] = typo[0] == "A" ? "B" : "A"
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode([Fingerprint].self, from: Data("[\"\(String(typo))\"]".utf8))
        }
    }

    @Test func orderIsByDigest() {
        let fps = Self.keys.map { Fingerprint(publicKey: $0) }
        #expect(fps.sorted().map(\.digest) == fps.map(\.digest).sorted())
        #expect(!(Self.fp < Self.fp))
    }
}
