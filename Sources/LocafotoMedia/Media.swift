import LocafotoErrors
import LocafotoFormats

/// Photos as photos: metadata, thumbnails, location removal and seed-004 compression, on
/// bytes in memory (the vault never writes plaintext to disk, so nothing here touches files).
///
/// Backed by libvips (decoding/encoding; HEIF through libheif) and libexif (EXIF blocks).
/// Thread safety: every function may be called from any thread concurrently. libvips is
/// thread-safe once initialised; `initialize()` runs once per process (later calls return the
/// first result) and every other function calls it. libvips runs with concurrency 1 (no worker
/// threads of its own: the agent decides how many photos are processed in parallel) and its
/// operation cache off.
///
/// Limits: inputs over `maxInputBytes` (256 MiB) are refused by every function; images over
/// `maxPixels` (100 megapixels) are refused by `thumbnail` and `compress`, from the header
/// alone, before any pixel is decoded (decompression bombs).
public enum Media {
    public static let maxInputBytes = 256 << 20
    public static let maxPixels = 100_000_000
    public static let thumbnailSideRange = 16...4096
    public static let thumbnailQualityRange = 1...100

    /// Initialises libvips (once per process; thread-safe and idempotent).
    public static func initialize() throws { try Vips.initialize() }

    /// Size, orientation, capture date, camera and whether a GPS position is present, from
    /// the header and EXIF (no pixel decoding). A photo without EXIF gives nil fields and
    /// `hasLocation == false`; so does a damaged EXIF block. Throws only when the content is
    /// not `type`, too large, or its header cannot be read.
    public static func metadata(of bytes: UnsafeRawBufferPointer, type: ContentType) throws -> PhotoMetadata {
        _ = try check(bytes, declared: type)
        let (h, exifBlock) = try Vips.header(bytes)
        var fields = exifBlock.map(EXIF.fields(of:)) ?? EXIF.Fields()
        if exifBlock == nil && type == .tiff {
            // A TIFF file is its own EXIF structure (libvips does not extract it). libexif reads
            // at most 64 KiB, so tags stored past that (IFDs written after the strips) are missed.
            fields = EXIF.fields(of: Array(bytes.prefix(0xFFF0)))
        }
        var m = PhotoMetadata()
        let quarterTurn = !isHEIF(type) && (5...8).contains(h.orientation ?? 1)
        if h.width > 0 && h.height > 0 {
            m.width = quarterTurn ? h.height : h.width
            m.height = quarterTurn ? h.width : h.height
        }
        m.orientation = fields.orientation ?? h.orientation
        m.captureDate = fields.captureDate
        m.cameraMake = fields.make
        m.cameraModel = fields.model
        m.hasLocation = fields.hasLocation
        return m
    }

    /// A JPEG thumbnail whose longest side is at most `maxSide` (never enlarged), auto-rotated
    /// by the EXIF orientation (HEIF/AVIF: libheif already applied irot/imir; not rotated again),
    /// converted to sRGB when the photo has an ICC profile, alpha flattened onto white, and
    /// with every metadata block stripped. The format is sniffed from the content.
    public static func thumbnail(of bytes: UnsafeRawBufferPointer, maxSide: Int = 320, quality: Int = 80) throws
        -> [UInt8]
    {
        try thumbnailWithSource(of: bytes, maxSide: maxSide, quality: quality).jpeg
    }

    /// `thumbnail`, saying where its pixels came from: an embedded thumbnail (EXIF IFD1, a
    /// HEIF thumbnail item) when it shows the same picture and is at least `maxSide` px long
    /// (an iPhone's 320-px item serves the vault's 320-px thumbnails without decoding the HEVC
    /// photo), else JPEG shrink-on-load, else every pixel.
    public static func thumbnailWithSource(of bytes: UnsafeRawBufferPointer, maxSide: Int = 320, quality: Int = 80)
        throws -> QuickThumbnail
    {
        guard thumbnailSideRange.contains(maxSide) else {
            throw MediaError(
                .invalidOption,
                "thumbnail size \(maxSide) px is out of range: use \(thumbnailSideRange.lowerBound)...\(thumbnailSideRange.upperBound)"
            )
        }
        guard thumbnailQualityRange.contains(quality) else {
            throw MediaError(.invalidOption, "thumbnail quality \(quality) is out of range: use 1...100")
        }
        _ = try check(bytes, declared: nil)
        try checkPixels(bytes)
        guard
            let t = try Vips.quickThumbnail(
                bytes, maxSide: maxSide, quality: quality, maxBytes: 0, minEmbeddedSide: maxSide, allowFullDecode: true,
                maxFullDecodePixels: maxPixels)
        else { throw MediaError(.undecodable, "cannot make a thumbnail of the image (\(Vips.takeError()))") }
        return t
    }

    /// The same photo without its GPS position; pixels are never re-encoded. Per format:
    /// - JPEG: each APP1 "Exif" segment is rewritten by libexif without the GPS IFD; APP1 XMP
    ///   segments naming a position (exif:GPSLatitude/GPSLongitude) are dropped; every other
    ///   byte (all other segments, the scan data) is identical.
    /// - PNG: the eXIf chunk is rewritten the same way (CRC recomputed); legacy EXIF text
    ///   chunks ("Raw profile type exif"/"APP1") and XMP text chunks that name a position or
    ///   are compressed are dropped; other chunks identical.
    /// - WebP: the EXIF chunk is rewritten the same way; an "XMP " chunk naming a position is
    ///   dropped (VP8X XMP flag cleared); RIFF size and padding fixed; image chunks identical.
    /// - HEIC/HEIF/AVIF and TIFF: the GPS IFD is neutralised IN PLACE (entry count 0, entries
    ///   and values zeroed; the file keeps its size and every other byte). A HEIF file whose
    ///   XMP item names a position, or whose Exif item is fragmented, is refused (`.unsupported`).
    /// - GIF: has no EXIF; returned unchanged.
    /// A photo without GPS comes back byte-identical. In every format, if the result still
    /// names a GPS position in some place this layer does not edit, it is refused rather
    /// than returned with the location.
    /// Limits: MakerNote blocks with absolute offsets may not survive libexif's rewrite (JPEG,
    /// PNG, WebP); positions written only in vendor MakerNotes are not detected.
    public static func strippingLocation(from bytes: [UInt8], type: ContentType) throws -> [UInt8] {
        let sniffed = try bytes.withUnsafeBytes { try check($0, declared: type) }
        let out: [UInt8]
        switch sniffed {
        case .jpeg: out = try LocationStripping.jpeg(bytes)
        case .png: out = try LocationStripping.png(bytes)
        case .webp: out = try LocationStripping.webp(bytes)
        case .heic, .heif, .avif: out = try LocationStripping.heif(bytes)
        case .tiff: out = try LocationStripping.tiff(bytes)
        case .gif: out = bytes
        }
        if Bytes.mentionsGPS(out) {
            throw MediaError(
                .unsupported,
                "the \(sniffed.displayName) still names a GPS position in metadata this layer cannot edit (XMP or a vendor block); refusing to return it with its location (compress with stripMetadata instead)"
            )
        }
        return out
    }

    /// Seed 004: a JPEG whose longest side is at most `options.maxSide` (1500; never enlarged),
    /// at `options.quality` (75; 60...90), auto-rotated (the EXIF orientation is then reset to
    /// 1). EXIF, XMP, IPTC and the ICC profile are kept unless `stripMetadata` (then the pixels
    /// are converted to sRGB and nothing is kept); `stripLocation` removes the EXIF GPS IFD and
    /// the XMP packet. libvips updates the EXIF pixel dimensions to the output's.
    public static func compress(
        _ bytes: UnsafeRawBufferPointer, type: ContentType, options: CompressionOptions = CompressionOptions()
    ) throws -> [UInt8] {
        try options.validate()
        _ = try check(bytes, declared: type)
        try checkPixels(bytes)
        let out = try Vips.resizeToJPEG(
            bytes, maxSide: options.maxSide, quality: options.quality, keepMetadata: !options.stripMetadata,
            stripLocation: options.stripLocation)
        if options.stripLocation && !options.stripMetadata { try refuseLocation(out, .jpeg) }
        return out
    }

    /// For tests and benchmarks: a synthetic sRGB JPEG (a smooth repeating pattern, no EXIF).
    @_spi(Testing) public static func synthesizeJPEG(width: Int, height: Int, quality: Int = 90) throws -> [UInt8] {
        try Vips.synthesizeJPEG(width: width, height: height, quality: quality)
    }

    // MARK: - Checks

    /// `check` and `checkPixels` for the other files of this module (Filters.swift).
    static func checkInput(_ bytes: UnsafeRawBufferPointer, declared: ContentType?) throws {
        _ = try check(bytes, declared: declared)
        try checkPixels(bytes)
    }

    private static func isHEIF(_ t: ContentType) -> Bool { t == .heic || t == .heif || t == .avif }

    /// Size limit and content sniffing; the declared type must match the content (the HEIF
    /// family HEIC/HEIF/AVIF counts as one: brands vary). Returns the sniffed type.
    static func check(_ bytes: UnsafeRawBufferPointer, declared: ContentType?) throws -> ContentType {
        guard bytes.count <= maxInputBytes else {
            throw MediaError(
                .tooLarge, "the image is \(bytes.count) bytes; the limit is \(maxInputBytes) bytes (256 MiB)")
        }
        guard let sniffed = ContentType.sniff(bytes) else {
            throw MediaError(
                .unsupported,
                bytes.isEmpty
                    ? "the image is empty"
                    : "the content is not a supported image (supported: \(ContentType.supportedFormatsList))")
        }
        if let declared, declared != sniffed && !(isHEIF(declared) && isHEIF(sniffed)) {
            throw MediaError(
                .invalidOption,
                "the content is \(sniffed.displayName), not \(declared.displayName) as declared: pass the type sniffed from the content"
            )
        }
        return sniffed
    }

    /// Refuses decompression bombs from the header alone.
    static func checkPixels(_ bytes: UnsafeRawBufferPointer) throws {
        let (h, _) = try Vips.header(bytes)
        let (pixels, overflow) = h.width.multipliedReportingOverflow(by: h.height)
        guard !overflow, pixels <= maxPixels else {
            throw MediaError(
                .tooLarge,
                "the image claims \(h.width)x\(h.height) pixels; the limit is \(maxPixels / 1_000_000) megapixels (decompression bomb protection)"
            )
        }
        guard h.width > 0 && h.height > 0 else { throw MediaError(.undecodable, "the image has no pixels") }
    }
}
