import Foundation
import LocafotoErrors
import LocafotoFormats

/// The photo filters of seed 001 (Monochrome, Sepia, Vintage, Chrome) and four more in the spirit
/// of Core Image's photo effects (Noir, Tonal, Fade, Instant). Each is defined exactly, so that
/// anyone can reproduce the output from the table in docs/usage.md ("Filters"):
///
/// 1. the photo is decoded, auto-rotated and converted to 8-bit sRGB (alpha flattened onto white);
/// 2. each pixel's (R, G, B), as the integers 0...255, is multiplied by the 3x3 `matrix`
///    (row-major: R' = m0 R + m1 G + m2 B, …), rounded to the nearest integer (halves up) and
///    clamped to 0...255;
/// 3. each channel then goes through its tone curve, a table of 256 values:
///    `curve[c][v] = round(255 · clamp(f_c(v / 255), 0, 1))` (halves away from zero);
/// 4. the result is encoded as JPEG (quality 92 by default), the metadata kept.
///
/// The building blocks: luma L = (0.299, 0.587, 0.114) (Rec. 601); saturation
/// `sat(s) = s·I + (1 − s)·[L; L; L]`; the sepia matrix of the W3C filter effects
/// (`feColorMatrix` "sepia" at 1); the curves `identity(x) = x`,
/// `contrast(k)(x) = (1 − k)·x + k·(3x² − 2x³)` (an S-curve; k = 0 is the identity) and
/// `lift(lo, hi)(x) = lo + (hi − lo)·x` (raised blacks, lowered whites).
public enum PhotoFilter: String, CaseIterable, Sendable, Codable {
    case monochrome, noir, tonal, sepia, vintage, chrome, fade, instant

    /// One line for `--help` and `GET /v1/filters`.
    public var summary: String {
        switch self {
        case .monochrome: "black and white: every channel the Rec. 601 luma (R = G = B)"
        case .noir: "black and white with strong contrast (luma, then an S-curve k = 0.8)"
        case .tonal: "black and white, soft (luma, then blacks lifted to 6 %, whites down to 94 %)"
        case .sepia: "brown tones (the W3C sepia matrix: R ≥ G ≥ B in every pixel)"
        case .vintage: "faded warm print (40 % sepia, a slight S-curve, lifted blacks, yellowed whites)"
        case .chrome: "vivid (saturation 1.35, an S-curve k = 0.35)"
        case .fade: "washed out (saturation 0.75, blacks lifted to 10 %, whites down to 95 %)"
        case .instant: "instant-camera look (saturation 0.85, warm lifted shadows, blue highlights down)"
        }
    }

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The filter named `name` (any case), or an error that lists the names.
    public static func named(_ name: String) throws -> PhotoFilter {
        guard let f = PhotoFilter(rawValue: name.lowercased()) else {
            throw MediaError(.invalidOption, "unknown filter '\(name)': use one of \(names)")
        }
        return f
    }

    public struct Definition: Sendable {
        /// Row-major 3x3, applied to (R, G, B) as 0...255 integers.
        public var matrix: [Double]
        /// The tone curve of R, G and B, on 0...1.
        public var curves: [@Sendable (Double) -> Double]

        /// The three curves as 256-entry tables, interleaved R, G, B (what libvips' maplut takes).
        public var lookupTable: [UInt8] {
            var t = [UInt8](repeating: 0, count: 768)
            for v in 0..<256 {
                for c in 0..<3 {
                    let y = min(1, max(0, curves[c](Double(v) / 255)))
                    t[3 * v + c] = UInt8((255 * y).rounded(.toNearestOrAwayFromZero))
                }
            }
            return t
        }
    }

    /// The filter applied to one pixel by the definition alone (no libvips): the reference the
    /// vectors of docs/usage.md and the tests compare libvips' output with.
    public func apply(_ pixel: [Int]) -> [Int] {
        let d = definition
        let lut = d.lookupTable
        return (0..<3).map { c in
            let x =
                d.matrix[3 * c] * Double(pixel[0]) + d.matrix[3 * c + 1] * Double(pixel[1]) + d.matrix[3 * c + 2]
                * Double(pixel[2])
            let v = min(255, max(0, Int((x + 0.5).rounded(.towardZero))))
            return Int(lut[3 * v + c])
        }
    }

    static let luma = [0.299, 0.587, 0.114]
    static let sepiaMatrix = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]
    static let identityMatrix = [1.0, 0, 0, 0, 1, 0, 0, 0, 1]
    static let lumaMatrix = luma + luma + luma

    static func saturation(_ s: Double) -> [Double] {
        (0..<9).map { i in s * identityMatrix[i] + (1 - s) * luma[i % 3] }
    }

    static func contrast(_ k: Double) -> @Sendable (Double) -> Double {
        { x in (1 - k) * x + k * (3 * x * x - 2 * x * x * x) }
    }
    static func lift(_ lo: Double, _ hi: Double) -> @Sendable (Double) -> Double { { x in lo + (hi - lo) * x } }

    public var definition: Definition {
        let id: @Sendable (Double) -> Double = { $0 }
        switch self {
        case .monochrome:
            return Definition(matrix: Self.lumaMatrix, curves: [id, id, id])
        case .noir:
            let c = Self.contrast(0.8)
            return Definition(matrix: Self.lumaMatrix, curves: [c, c, c])
        case .tonal:
            let c = Self.lift(0.06, 0.94)
            return Definition(matrix: Self.lumaMatrix, curves: [c, c, c])
        case .sepia:
            return Definition(matrix: Self.sepiaMatrix, curves: [id, id, id])
        case .vintage:
            // 0.6·I + 0.4·sepia; R and G: lift(0.08, 0.92) ∘ contrast(0.2); B: lift(0.10, 0.85) ∘ contrast(0.2).
            let m = (0..<9).map { 0.6 * Self.identityMatrix[$0] + 0.4 * Self.sepiaMatrix[$0] }
            let s = Self.contrast(0.2)
            let warm = Self.lift(0.08, 0.92)
            let blue = Self.lift(0.10, 0.85)
            return Definition(matrix: m, curves: [{ warm(s($0)) }, { warm(s($0)) }, { blue(s($0)) }])
        case .chrome:
            let c = Self.contrast(0.35)
            return Definition(matrix: Self.saturation(1.35), curves: [c, c, c])
        case .fade:
            let c = Self.lift(0.10, 0.95)
            return Definition(matrix: Self.saturation(0.75), curves: [c, c, c])
        case .instant:
            return Definition(
                matrix: Self.saturation(0.85),
                curves: [Self.lift(0.06, 1.0), Self.lift(0.04, 0.97), Self.lift(0.02, 0.88)])
        }
    }
}

/// What `Media.render` writes.
public enum OutputFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, heic

    public var contentType: ContentType { self == .jpeg ? .jpeg : .heic }
    public var fileExtension: String { self == .jpeg ? "jpg" : "heic" }
}

/// Options of `Media.render` (filters, compression in the vault).
public struct RenderOptions: Sendable, Equatable {
    /// Longest side of the output (never enlarged); nil: the photo's own size.
    public var maxSide: Int?
    public var quality: Int
    public var stripMetadata: Bool
    /// Keep the metadata but remove the EXIF GPS IFD and any XMP packet.
    public var stripLocation: Bool
    public var format: OutputFormat

    /// Filters keep the size and use a high quality: the filtered photo replaces nothing.
    public static let filterQuality = 92

    public init(
        maxSide: Int? = nil, quality: Int = RenderOptions.filterQuality, stripMetadata: Bool = false,
        stripLocation: Bool = false, format: OutputFormat = .jpeg
    ) {
        self.maxSide = maxSide
        self.quality = quality
        self.stripMetadata = stripMetadata
        self.stripLocation = stripLocation
        self.format = format
    }
}

extension Media {
    /// A photo decoded, auto-rotated, shrunk to `options.maxSide` (never enlarged), alpha
    /// flattened onto white, optionally filtered (`PhotoFilter`), and encoded as JPEG or HEIC
    /// with its metadata (EXIF dates, camera; GPS unless `stripLocation`; none with
    /// `stripMetadata`). Same limits as `compress`: 256 MiB, 100 megapixels.
    public static func render(
        _ bytes: UnsafeRawBufferPointer, type: ContentType?, filter: PhotoFilter?,
        options: RenderOptions = RenderOptions()
    ) throws -> [UInt8] {
        guard (1...100).contains(options.quality) else {
            throw MediaError(.invalidOption, "quality \(options.quality) is out of range: use 1...100")
        }
        if let side = options.maxSide, !CompressionOptions.maxSideRange.contains(side) {
            throw MediaError(.invalidOption, "size \(side) px is out of range: use \(CompressionOptions.maxSideRange)")
        }
        if options.format == .heic, try !Vips.hasHEIFEncoder() {
            throw MediaError(
                .unsupported, "this libvips cannot write HEIC (no heifsave: libheif without an HEVC encoder); use jpeg")
        }
        try checkInput(bytes, declared: type)
        let out = try Vips.render(bytes, options: options, filter: filter)
        if options.stripLocation && !options.stripMetadata { try refuseLocation(out, options.format.contentType) }
        return out
    }

    /// As `strippingLocation` does: an output that should have no position is checked (EXIF GPS
    /// IFD, XMP) and refused rather than returned with one.
    static func refuseLocation(_ out: [UInt8], _ type: ContentType) throws {
        let facts = try out.withUnsafeBytes { try metadata(of: $0, type: type) }
        guard facts.hasLocation == false && !Bytes.mentionsGPS(out) else {
            throw MediaError(
                .unsupported, "the re-encoded photo still names a GPS position; refusing to return it with its location"
            )
        }
    }

    /// True when `render` can write HEIC here.
    public static var canWriteHEIC: Bool { (try? Vips.hasHEIFEncoder()) ?? false }
}
