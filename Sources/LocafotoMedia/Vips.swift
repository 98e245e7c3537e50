import CMediaShim
import LocafotoErrors

/// Thin Swift over Sources/CMediaShim (libvips). Callers have checked size and type already.
enum Vips {
    struct Header {
        var width: Int
        var height: Int
        /// libvips' "orientation" (EXIF 1...8); nil when absent (always absent for HEIF/AVIF).
        var orientation: Int?
        var pages: Int
        var loader: String
    }

    /// Process-wide one-time initialisation (Swift runs a global's initialiser exactly once,
    /// thread-safely).
    private static let initResult: Result<Void, MediaError> = {
        if lf_media_init() != 0 {
            return .failure(MediaError(.internal, "libvips could not be initialised (\(takeError()))"))
        }
        return .success(())
    }()

    static func initialize() throws { try initResult.get() }

    /// libvips' error text, then clears its buffer. "no details" when empty.
    static func takeError() -> String {
        guard let p = lf_media_error_copy() else { return "no details" }
        defer { lf_media_free(p) }
        let s = String(cString: p).split(whereSeparator: \.isNewline).joined(separator: "; ")
        return s.isEmpty ? "no details" : "libvips: " + s
    }

    /// Header (no pixel decoding) and libvips' copy of the EXIF block, if any.
    static func header(_ bytes: UnsafeRawBufferPointer) throws -> (Header, [UInt8]?) {
        try initialize()
        var h = lf_media_header()
        var exif: UnsafeMutableRawPointer?
        var exifLen = 0
        guard let base = bytes.baseAddress, lf_media_read_header(base, bytes.count, &h, &exif, &exifLen) == 0 else {
            throw MediaError(
                .undecodable, "cannot read the image header (\(takeError())): the file is damaged or not an image")
        }
        defer { lf_media_free(exif) }
        let loader = withUnsafeBytes(of: h.loader) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let blob = exif.map { Array(UnsafeRawBufferPointer(start: $0, count: exifLen)) }
        let header = Header(
            width: Int(h.width), height: Int(h.height),
            orientation: (1...8).contains(h.orientation) ? Int(h.orientation) : nil,
            pages: Int(h.pages), loader: loader)
        return (header, blob)
    }

    static func resizeToJPEG(
        _ bytes: UnsafeRawBufferPointer, maxSide: Int, quality: Int, keepMetadata: Bool, stripLocation: Bool
    ) throws -> [UInt8] {
        try initialize()
        var opt = lf_media_jpeg_options(
            max_side: Int32(maxSide), quality: Int32(quality), keep_metadata: keepMetadata ? 1 : 0,
            strip_location: stripLocation ? 1 : 0)
        var out: UnsafeMutableRawPointer?
        var outLen = 0
        guard let base = bytes.baseAddress, lf_media_resize_to_jpeg(base, bytes.count, &opt, &out, &outLen) == 0,
            let out
        else {
            throw MediaError(
                .undecodable, "cannot decode and re-encode the image (\(takeError())): the file is damaged or truncated"
            )
        }
        defer { lf_media_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: outLen))
    }

    /// lf_media_quick_thumbnail: nil when no allowed source serves (or no quality fits).
    static func quickThumbnail(
        _ bytes: UnsafeRawBufferPointer, maxSide: Int, quality: Int, maxBytes: Int, minEmbeddedSide: Int,
        allowFullDecode: Bool,
        maxFullDecodePixels: Int, embeddedOnly: Bool = false
    ) throws -> QuickThumbnail? {
        try initialize()
        var opt = lf_media_quick_options(
            max_side: Int32(maxSide), quality: Int32(quality), max_bytes: Int32(maxBytes),
            min_embedded_side: Int32(minEmbeddedSide),
            allow_full_decode: allowFullDecode ? 1 : 0, max_full_decode_pixels: maxFullDecodePixels,
            embedded_only: embeddedOnly ? 1 : 0)
        var out: UnsafeMutableRawPointer?
        var outLen = 0
        var source: Int32 = 0
        guard let base = bytes.baseAddress,
            lf_media_quick_thumbnail(base, bytes.count, &opt, &out, &outLen, &source) == 0
        else {
            throw MediaError(.undecodable, "cannot decode the image (\(takeError())): the file is damaged or truncated")
        }
        defer { lf_media_free(out) }
        guard let out else { return nil }
        let from: ThumbnailSource
        switch Int(source) {
        case Int(LF_THUMB_EXIF): from = .exifThumbnail
        case Int(LF_THUMB_HEIF_ITEM): from = .heifThumbnail
        case Int(LF_THUMB_SHRINK_ON_LOAD): from = .shrinkOnLoad
        default: from = .fullDecode
        }
        return QuickThumbnail(jpeg: Array(UnsafeRawBufferPointer(start: out, count: outLen)), source: from)
    }

    static func decodePixels(_ bytes: UnsafeRawBufferPointer, maxSide: Int) throws -> (
        width: Int, height: Int, bands: Int, pixels: [UInt8]
    ) {
        try initialize()
        var out: UnsafeMutableRawPointer?
        var outLen = 0
        var width: Int32 = 0
        var height: Int32 = 0
        var bands: Int32 = 0
        guard let base = bytes.baseAddress,
            lf_media_decode_pixels(base, bytes.count, Int32(maxSide), &out, &outLen, &width, &height, &bands) == 0,
            let out
        else {
            throw MediaError(.undecodable, "cannot decode the image (\(takeError()))")
        }
        defer { lf_media_free(out) }
        return (Int(width), Int(height), Int(bands), Array(UnsafeRawBufferPointer(start: out, count: outLen)))
    }

    static func synthesizeJPEG(width: Int, height: Int, quality: Int) throws -> [UInt8] {
        try initialize()
        var out: UnsafeMutableRawPointer?
        var outLen = 0
        guard lf_media_synthesize_jpeg(Int32(width), Int32(height), Int32(quality), &out, &outLen) == 0, let out else {
            throw MediaError(.internal, "cannot synthesize a test JPEG (\(takeError()))")
        }
        defer { lf_media_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: outLen))
    }
}

extension Vips {
    /// lf_media_render: see Media.render. `filter` nil re-encodes only.
    static func render(_ bytes: UnsafeRawBufferPointer, options: RenderOptions, filter: PhotoFilter?) throws -> [UInt8]
    {
        try initialize()
        var opt = lf_media_render_options()
        opt.max_side = Int32(options.maxSide ?? 0)
        opt.quality = Int32(options.quality)
        opt.keep_metadata = options.stripMetadata ? 0 : 1
        opt.strip_location = options.stripLocation ? 1 : 0
        opt.heif = options.format == .heic ? 1 : 0
        if let filter {
            let d = filter.definition
            opt.apply_filter = 1
            withUnsafeMutableBytes(of: &opt.matrix) { raw in
                let m = raw.bindMemory(to: Double.self)
                for i in 0..<9 { m[i] = d.matrix[i] }
            }
            let lut = d.lookupTable
            withUnsafeMutableBytes(of: &opt.lut) { raw in
                for i in 0..<lut.count { raw[i] = lut[i] }
            }
        }
        var out: UnsafeMutableRawPointer?
        var outLen = 0
        guard let base = bytes.baseAddress, lf_media_render(base, bytes.count, &opt, &out, &outLen) == 0, let out else {
            throw MediaError(
                .undecodable, "cannot decode and re-encode the image (\(takeError())): the file is damaged or truncated"
            )
        }
        defer { lf_media_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: outLen))
    }

    static func hasHEIFEncoder() throws -> Bool {
        try initialize()
        return lf_media_has_heif_encoder() == 1
    }
}
