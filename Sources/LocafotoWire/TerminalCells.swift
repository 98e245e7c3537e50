#if canImport(Glibc)
    import Glibc
#endif

extension PeerText {
    /// How many terminal cells `text` takes: what aligns table columns when names hold CJK
    /// characters or emoji (two cells each) or combining marks (none), where counting characters
    /// or UTF-16 units does not. Each grapheme cluster (what a terminal draws as one glyph)
    /// counts as wide as its first scalar by glibc's `wcwidth` in the C.UTF-8 locale (Unicode's
    /// East Asian Width with emoji presentation as wide, as terminals follow it), or 2 with an
    /// emoji presentation selector (U+FE0F) or as a flag (two regional indicators). Unsafe
    /// scalars should be escaped first (`escaped`); any left count as one cell.
    public static func cells(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        return text.reduce(0) { $0 + cells(of: $1) }
    }

    static func cells(of cluster: Character) -> Int {
        let scalars = cluster.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x80 { return 1 }
        if scalars.contains("\u{FE0F}") { return 2 }
        if (0x1F1E6...0x1F1FF).contains(first.value), scalars.count > 1 { return 2 }
        let width = CellWidth.of(first)
        return width < 0 ? 1 : width
    }
}

/// glibc's `wcwidth`: declared here because Swift's Glibc module leaves it out (it sits behind
/// `_XOPEN_SOURCE` in <wchar.h>); `int wcwidth(wchar_t)` takes and returns plain integers.
#if canImport(Glibc)
    @_silgen_name("wcwidth")
    private func glibcWcwidth(_ c: wchar_t) -> Int32
#endif

/// glibc's `wcwidth` under the C.UTF-8 locale whatever the process locale is (in the default
/// "C" locale it knows only ASCII); the locale object is made once and used per call.
private enum CellWidth {
    #if canImport(Glibc)
        nonisolated(unsafe) static let locale: locale_t? = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

        static func of(_ s: Unicode.Scalar) -> Int {
            guard let locale else { return fallback(s) }
            let previous = uselocale(locale)
            defer { uselocale(previous) }
            return Int(glibcWcwidth(wchar_t(bitPattern: s.value)))
        }
    #else
        static func of(_ s: Unicode.Scalar) -> Int { fallback(s) }
    #endif

    /// Without the locale: combining marks take no cell, emoji two, the rest one.
    static func fallback(_ s: Unicode.Scalar) -> Int {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        default: return s.properties.isEmojiPresentation ? 2 : 1
        }
    }
}
