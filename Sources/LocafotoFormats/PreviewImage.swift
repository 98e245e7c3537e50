import LocafotoErrors

/// A preview of an offered photo (protocol/messages.md "PREVIEW"): a small JPEG the sender makes
/// so the recipient can see what it is asked to accept. The bytes come from a peer not yet
/// trusted with anything, so they are checked here without decoding a pixel: size, the JPEG
/// marker structure up to the frame header, the frame's dimensions, no metadata segment, the end
/// marker. Pure and bounded: at most `maxBytes` are looked at, each segment once.
public enum PreviewImage {
    /// The largest preview (16 KiB).
    public static let maxBytes = 16_384
    /// The longest side a preview may have, in pixels.
    public static let maxSide = 160
    /// At most this many items of one offer carry a preview (the first ones a sender chooses).
    public static let maxPerOffer = 100

    public struct Dimensions: Sendable, Equatable {
        public var width: Int
        public var height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// Checks that `bytes` is a preview a receiver may keep and show: 4...`maxBytes` bytes, a
    /// baseline (SOF0), extended (SOF1) or progressive (SOF2) Huffman JPEG whose sides are
    /// 1...`maxSide`, with no APP1 segment (EXIF or XMP: where a position would be), ending
    /// with EOI. Returns its dimensions.
    public static func validate(_ bytes: some Collection<UInt8>) throws -> Dimensions {
        guard bytes.count <= maxBytes else {
            throw FormatError(.tooLarge, "the preview is \(bytes.count) bytes; at most \(maxBytes) are allowed")
        }
        let b = Array(bytes)
        guard b.count >= 4 else {
            throw FormatError(.truncated, "the preview is \(b.count) bytes, too short for a JPEG")
        }
        guard b[0] == 0xFF, b[1] == 0xD8 else {
            throw FormatError(.unsupportedContent, "the preview is not a JPEG (no SOI marker)")
        }
        guard b[b.count - 2] == 0xFF, b[b.count - 1] == 0xD9 else {
            throw FormatError(.truncated, "the preview does not end with the JPEG EOI marker: truncated or not a JPEG")
        }
        var i = 2
        var frame: Dimensions?
        // Every marker segment up to the start of scan: the frame header once, and no metadata
        // anywhere before the image data (an APPn after the frame header is still decoded). The
        // entropy-coded data after SOS is not read (a preview is shown by an image decoder,
        // which meets it with the same bounds).
        while true {
            guard i + 1 < b.count else { throw FormatError(.truncated, "the preview ends before its image data") }
            guard b[i] == 0xFF else {
                throw FormatError(.malformed, "the preview has no marker where one must be (byte \(i))")
            }
            // Fill bytes (0xFF repeated) may precede a marker.
            while i + 1 < b.count, b[i + 1] == 0xFF { i += 1 }
            guard i + 1 < b.count else { throw FormatError(.truncated, "the preview ends inside a marker") }
            let marker = b[i + 1]
            i += 2
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // standalone markers: no length
            case 0xDA:
                guard let frame else {
                    throw FormatError(.malformed, "the preview has marker 0xDA before its frame header")
                }
                return frame
            case 0xD8, 0xD9, 0x00:
                throw FormatError(.malformed, "the preview has marker 0x\(hex(marker)) before its image data")
            default:
                break
            }
            guard i + 1 < b.count else { throw FormatError(.truncated, "the preview ends inside a segment length") }
            let length = Int(b[i]) << 8 | Int(b[i + 1])
            guard length >= 2, i + length <= b.count - 2 else {
                throw FormatError(
                    .truncated, "a segment of the preview claims \(length) bytes; only \(b.count - 2 - i) remain")
            }
            switch marker {
            case 0xC0, 0xC1, 0xC2:
                guard frame == nil else { throw FormatError(.malformed, "the preview has a second frame header") }
                // precision (1), height (2), width (2), components (1), then 3 bytes per component
                guard length >= 8 else {
                    throw FormatError(.malformed, "the preview's frame header is \(length) bytes, too short")
                }
                let height = Int(b[i + 3]) << 8 | Int(b[i + 4])
                let width = Int(b[i + 5]) << 8 | Int(b[i + 6])
                let components = Int(b[i + 7])
                guard components == 1 || components == 3, length == 8 + 3 * components else {
                    throw FormatError(
                        .malformed,
                        "the preview's frame header has \(components) components in \(length) bytes; a preview is grey (1) or colour (3)"
                    )
                }
                guard (1...maxSide).contains(width), (1...maxSide).contains(height) else {
                    throw FormatError(
                        .tooLarge, "the preview is \(width)x\(height) px; each side must be 1...\(maxSide)")
                }
                frame = Dimensions(width: width, height: height)
            case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                throw FormatError(
                    .unsupportedContent,
                    "the preview is a lossless, hierarchical or arithmetic-coded JPEG (SOF 0x\(hex(marker))); only baseline or progressive is allowed"
                )
            case 0xE1, 0xE2, 0xED:
                throw FormatError(
                    .malformed,
                    "the preview carries an APP\(marker - 0xE0) (EXIF, XMP, ICC or IPTC) segment; previews carry no metadata"
                )
            default:
                break
            }
            i += length
        }
    }

    private static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }
}
