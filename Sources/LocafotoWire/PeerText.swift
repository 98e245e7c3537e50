/// Text that comes from a peer (messages, names, receipts) can reach a terminal and a log. Some
/// Unicode scalars there act instead of showing: ESC and the C1 controls drive the terminal
/// (title, screen clearing, cursor moves), newlines and line separators forge new log lines,
/// bidirectional overrides reorder what is read. protocol/messages.md "Peer text" lists them:
///
/// - general category Cc: C0 (U+0000–U+001F), DEL (U+007F), C1 (U+0080–U+009F, NEL U+0085);
/// - Zl and Zp: U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR;
/// - Cf (format), which holds the bidi controls (U+061C, U+200E–U+200F, U+202A–U+202E,
///   U+2066–U+2069), invisible operators and U+FEFF — except U+200C/U+200D (joiners) and the
///   tag characters U+E0020–U+E007F, which emoji sequences need and which cannot move text.
///
/// Peer text is cleaned once where it enters (`message`, `name`), and escaped again where it
/// leaves (`escaped`, for terminals and logs), which also covers local text such as file names.
public enum PeerText {
    /// Longest peer message kept, in UTF-8 bytes; the rest is cut at a character boundary.
    public static let maxMessageBytes = 1024

    public static func isUnsafe(_ s: Unicode.Scalar) -> Bool {
        // ASCII answers without a property lookup (most text is ASCII, and lists are long).
        if s.value < 0x80 { return s.value < 0x20 || s.value == 0x7F }
        switch s.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate:
            return true
        case .format:
            return !(s.value == 0x200C || s.value == 0x200D || (0xE0020...0xE007F).contains(s.value))
        default:
            return false
        }
    }

    public static func isClean(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return true }
        return !text.unicodeScalars.contains(where: isUnsafe)
    }

    /// A peer's free-text message made safe to keep: line breaks and tabs become spaces, every
    /// other unsafe scalar becomes U+FFFD, and it is cut to `maxBytes`.
    public static func message(_ raw: String, maxBytes: Int = maxMessageBytes) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for s in raw.unicodeScalars {
            let kept: Unicode.Scalar
            if !isUnsafe(s) {
                kept = s
            } else if s == "\n" || s == "\r" || s == "\t" || s.value == 0x85 || s.value == 0x2028 || s.value == 0x2029 {
                kept = " "
            } else {
                kept = "\u{FFFD}"
            }
            let n = UTF8.width(kept)
            guard bytes + n <= maxBytes else { break }
            bytes += n
            out.append(kept)
        }
        return String(out)
    }

    /// Text for a terminal or a log line: every unsafe scalar written as `\u{XXXX}`, so it shows
    /// what was there without acting on the terminal. Clean text comes back unchanged.
    /// With `keepingNewlines`, U+000A stays (for multi-line output the program itself made;
    /// peer text cannot hold one by then).
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        if text.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || (keepingNewlines && $0 == 0x0A) }) { return text }
        guard !isClean(text) else { return text }
        var out = ""
        for s in text.unicodeScalars {
            if isUnsafe(s) && !(keepingNewlines && s == "\n") {
                out += "\\u{" + String(s.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out
    }

    /// JSON text (already valid JSON) with every unsafe scalar but its line breaks written as a
    /// JSON `\uXXXX` escape: the same JSON value, safe on a terminal. Unsafe scalars can only
    /// be inside strings there, where such an escape is valid.
    public static func jsonEscaped(_ json: String) -> String {
        if !json.unicodeScalars.contains(where: { $0 != "\n" && isUnsafe($0) }) { return json }
        var out = ""
        for s in json.unicodeScalars {
            guard isUnsafe(s), s != "\n" else {
                out.unicodeScalars.append(s)
                continue
            }
            for unit in String(s).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    /// A peer string quoted in an error message or log line: escaped and cut short.
    public static func quoted(_ text: String, maxCharacters: Int = 64) -> String {
        let e = escaped(text)
        return "'" + (e.count > maxCharacters ? String(e.prefix(maxCharacters)) + "…" : e) + "'"
    }
}
