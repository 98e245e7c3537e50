import LocafotoErrors

/// The image formats Locafoto stores, recognised from their first bytes ("magic numbers").
/// File extensions are never trusted (seed 000, "Trust file extensions for validation": don't).
public enum ContentType: String, Sendable, Codable, CaseIterable {
    case jpeg, png, heic, heif, avif, webp, gif, tiff

    /// How many leading bytes `sniff` looks at (it also works with fewer, for short inputs).
    public static let sniffLength = 32

    /// Identifies the format from the first bytes of the content (at most `sniffLength` are read).
    /// Returns nil for anything else, including empty input and truncated magic numbers.
    public static func sniff(_ prefix: some Collection<UInt8>) -> ContentType? {
        let b = Array(prefix.prefix(sniffLength))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4) { return sniffISOBMFF(b) }
        return nil
    }

    /// HEIF family (ISO/IEC 23008-12) and AVIF: an ISO-BMFF `ftyp` box first. The major brand
    /// decides when it is specific; otherwise the compatible brands inside the box (as far as
    /// the prefix reaches) do, a codec-specific brand (HEVC, AV1) winning over the generic
    /// image brands `mif1`/`msf1`.
    private static func sniffISOBMFF(_ b: [UInt8]) -> ContentType? {
        guard b.count >= 12 else { return nil }
        let size = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let boxEnd: Int
        switch size {
        case 0: boxEnd = b.count  // the box extends to the end of the file
        case 1: return nil  // a 64-bit size for an ftyp box: not something cameras write
        case 2..<16: return nil  // too small for major brand + minor version
        default: boxEnd = min(size, b.count)
        }
        func brand(_ offset: Int) -> String { String(decoding: b[offset..<offset + 4], as: UTF8.self) }
        var brands = [brand(8)]
        var offset = 16
        while offset + 4 <= boxEnd {
            brands.append(brand(offset))
            offset += 4
        }
        func specific(_ brand: String) -> ContentType? {
            switch brand {
            case "heic", "heix", "hevc", "hevx", "heim", "heis": .heic
            case "avif", "avis": .avif
            default: nil
            }
        }
        if let t = brands.lazy.compactMap(specific).first { return t }
        if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        return nil
    }

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .tiff: "image/tiff"
        }
    }

    /// The conventional file name extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .heic: "heic"
        case .heif: "heif"
        case .avif: "avif"
        case .webp: "webp"
        case .gif: "gif"
        case .tiff: "tiff"
        }
    }

    /// Every extension a file of this format is commonly named with, lowercase, the
    /// conventional one first.
    public var fileExtensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe", "jfif"]
        case .png: ["png"]
        case .heic: ["heic", "heif", "hif"]
        case .heif: ["heif", "heic", "hif"]
        case .avif: ["avif"]
        case .webp: ["webp"]
        case .gif: ["gif"]
        case .tiff: ["tiff", "tif"]
        }
    }

    /// A human-readable name ("JPEG", "WebP", ...).
    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        case .heif: "HEIF"
        case .avif: "AVIF"
        case .webp: "WebP"
        case .gif: "GIF"
        case .tiff: "TIFF"
        }
    }

    /// "JPEG, PNG, HEIC, HEIF, AVIF, WebP, GIF, TIFF": for error messages.
    public static var supportedFormatsList: String {
        allCases.map(\.displayName).joined(separator: ", ")
    }

    /// The error to report when `sniff` returned nil.
    public static func unsupportedContentError(_ what: String = "the content") -> FormatError {
        FormatError(
            .unsupportedContent,
            "\(what) is not a supported image (supported formats: \(supportedFormatsList)); "
                + "the file type is recognised from its content, not its name")
    }
}
