import LocafotoFormats

/// What the head of a JPEG file tells about its preview, read without libvips: the agent asks a
/// media worker (whose start costs ~0.1 s) only for photos that need a decoder.
public enum JPEGHeadPreview: Sendable, Equatable {
    /// The EXIF thumbnail is a valid preview as it is (upright, the photo's shape, no metadata of
    /// its own): offered byte for byte, nothing decoded.
    case ready(QuickThumbnail)
    /// The marker structure is broken before the image data: no decoder would make a preview.
    case unreadable
    /// A decoder has to make it (`Media.preview`): no usable thumbnail, a turned photo, or a head
    /// too short to tell.
    case needsDecoder
}

extension Media {
    /// Looks at the markers of a JPEG's head (up to the frame header; at most `head.count`
    /// bytes, each segment once) and at its EXIF thumbnail (libexif). Bounded: the thumbnail
    /// is checked by `PreviewImage.validate` (≤ 16 KiB, ≤ 160 px, baseline or progressive) and
    /// must have no COM or APPn segment other than APP0 (JFIF) and APP14 (Adobe colour).
    /// `wholeFile`: `head` is all of the file, so one that ends before its frame header is
    /// truncated (`.unreadable`) rather than too short to tell (`.needsDecoder`).
    public static func previewFromJPEGHead(_ head: [UInt8], wholeFile: Bool = false) -> JPEGHeadPreview {
        guard head.count >= 4 else { return .unreadable }
        let r = ByteReader(head)
        var exif: [UInt8]?
        var result = JPEGHeadPreview.unreadable  // SOS before a frame header
        let end = JPEGHead.walk(head) { marker, payload in
            if marker == 0xE1, exif == nil, EXIF.hasPrefix(head[payload]) { exif = Array(head[payload]) }
            guard (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC else {
                return marker != 0xDA
            }
            // A frame header (SOFn): precision, height, width.
            if let h = r.be16(payload.lowerBound + 1), let w = r.be16(payload.lowerBound + 3), w > 0, h > 0 {
                result = exif.map { embedded(exif: $0, width: w, height: h) } ?? .needsDecoder
            }
            return false
        }
        switch end {
        case .stopped, .scan: return result
        case .truncated: return wholeFile ? .unreadable : .needsDecoder
        case .malformed: return .unreadable
        }
    }

    private static func embedded(exif: [UInt8], width: Int, height: Int) -> JPEGHeadPreview {
        guard let (jpeg, orientation) = EXIF.thumbnail(of: exif, maxBytes: PreviewImage.maxBytes),
            orientation == nil || orientation == 1,
            let size = try? PreviewImage.validate(jpeg), max(size.width, size.height) >= previewMinEmbeddedSide,
            samePicture(size.width, size.height, width, height), !hasMetadata(jpeg)
        else { return .needsDecoder }
        return .ready(QuickThumbnail(jpeg: jpeg, source: .exifThumbnail))
    }

    /// The rule of lf_media.c's same_picture: the same aspect ratio within 3 %.
    static func samePicture(_ tw: Int, _ th: Int, _ w: Int, _ h: Int) -> Bool {
        let a = Double(tw) / Double(th)
        let b = Double(w) / Double(h)
        return max(a, b) / min(a, b) <= 1.03
    }

    /// A COM or APPn segment (other than APP0 and APP14) before the image data.
    private static func hasMetadata(_ jpeg: [UInt8]) -> Bool {
        let r = ByteReader(jpeg)
        var i = 2
        while i + 3 < jpeg.count, jpeg[i] == 0xFF {
            let m = jpeg[i + 1]
            if m == 0xDA { return false }
            if m == 0xFE || ((0xE1...0xEF).contains(m) && m != 0xEE) { return true }
            guard let length = r.be16(i + 2), length >= 2 else { return true }
            i += 2 + length
        }
        return true  // validated JPEGs reach their SOS; anything else: let a decoder decide
    }
}
