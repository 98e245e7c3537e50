/// The marker segments at the head of a JPEG file, from SOI to the start of scan (ITU T.81
/// B.1.1): one walk for the readers that look at a JPEG's header without a decoder.
///
/// Why a head is enough: a JPEG decoder reads every marker up to SOS before it decodes a pixel
/// (libjpeg's `jpeg_read_header`), and cameras write EXIF (APP1) right after SOI. Bytes up to
/// the end of the SOS segment therefore tell everything the header tells.
public enum JPEGHead {
    /// How a walk ended.
    public enum End: Sendable, Equatable {
        /// The visitor asked to stop at the segment it was given.
        case stopped
        /// The SOS segment was reached and is whole: the header is the bytes before `headerLength`.
        case scan(headerLength: Int)
        /// The bytes end before the SOS segment does (a head too short to tell, or a truncated file).
        case truncated
        /// Not a JPEG's marker structure: no SOI, a byte where a marker belongs, SOI or EOI
        /// again, or a segment length below 2.
        case malformed
    }

    /// Calls `visit(marker, payload)` for each marker segment after SOI, in order, up to and
    /// including SOS (its payload being the scan header). `payload` excludes the marker and the
    /// length field. Fill bytes (0xFF runs) and markers without a length (TEM, RSTn) are
    /// skipped. The visitor returns false to stop. Reads each byte at most once; never reads
    /// past `bytes`.
    public static func walk(_ bytes: [UInt8], _ visit: (UInt8, Range<Int>) -> Bool) -> End {
        guard bytes.count >= 2 else { return bytes.isEmpty || bytes[0] == 0xFF ? .truncated : .malformed }
        guard bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .malformed }
        var i = 2
        while true {
            guard i < bytes.count else { return .truncated }
            guard bytes[i] == 0xFF else { return .malformed }
            var j = i
            while j < bytes.count && bytes[j] == 0xFF { j += 1 }
            guard j < bytes.count else { return .truncated }
            let marker = bytes[j]
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                i = j + 1
                continue
            }
            if marker == 0xD8 || marker == 0xD9 || marker == 0x00 { return .malformed }
            guard j + 2 < bytes.count else { return .truncated }
            let length = Int(bytes[j + 1]) << 8 | Int(bytes[j + 2])
            guard length >= 2 else { return .malformed }
            let end = j + 1 + length
            guard end <= bytes.count else { return .truncated }
            guard visit(marker, (j + 3)..<end) else { return .stopped }
            if marker == 0xDA { return .scan(headerLength: end) }
            i = end
        }
    }

    /// The length of the head that holds every marker segment up to and including SOS, or nil
    /// when `bytes` end before that or are not a JPEG's marker structure.
    public static func headerLength(of bytes: [UInt8]) -> Int? {
        if case .scan(let n) = walk(bytes, { _, _ in true }) { return n }
        return nil
    }
}
