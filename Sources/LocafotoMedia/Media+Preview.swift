import LocafotoErrors
import LocafotoFormats

/// Where a preview's or thumbnail's pixels came from (`Media.preview`, `Media.thumbnail`).
public enum ThumbnailSource: String, Sendable, Equatable {
    /// The JPEG's EXIF thumbnail (IFD1), turned by the photo's EXIF orientation.
    case exifThumbnail
    /// The HEIF/AVIF file's thumbnail item (iPhones write one of 320 px).
    case heifThumbnail
    /// A decode bounded by the output's size: JPEG shrink-on-load (1/2, 1/4 or 1/8 of the
    /// photo's pixels), WebP scaling while it decodes.
    case shrinkOnLoad
    /// Every pixel decoded: a small image, or a format without a cheaper way when the caller
    /// can wait for it.
    case fullDecode
}

/// A JPEG made from the cheapest source that serves, and which source that was.
public struct QuickThumbnail: Sendable, Equatable {
    public var jpeg: [UInt8]
    public var source: ThumbnailSource
}

extension Media {
    /// The preview an offer carries for a photo (protocol/messages.md "PREVIEW"): a JPEG whose
    /// longest side is at most `PreviewImage.maxSide` px, auto-rotated, with no metadata at all
    /// (no EXIF, so no GPS position), at the highest of the qualities 75, 60, … 15 that fits
    /// `PreviewImage.maxBytes`.
    ///
    /// It sits between `send` and the offer, so it never decodes a whole large photo: it comes
    /// from the photo's embedded thumbnail (EXIF IFD1 of a JPEG, a HEIF thumbnail item) when that
    /// shows the same picture and is at least `previewMinEmbeddedSide` px long, else from a
    /// decode bounded by the preview's size (JPEG shrink-on-load, WebP), else from a full decode
    /// only for images of at most `previewFullDecodePixels` (a HEIC without a thumbnail item, a
    /// large PNG: nil). nil also when libvips cannot read the photo or no quality fits: the item
    /// is then offered without a preview.
    /// `embeddedOnly`: the embedded thumbnail or nil (for `bytes` that are only the head of a
    /// JPEG file, whose EXIF block is there but not all of its scan).
    public static func preview(of bytes: UnsafeRawBufferPointer, embeddedOnly: Bool = false) -> QuickThumbnail? {
        guard (try? check(bytes, declared: nil)) != nil, (try? checkPixels(bytes)) != nil else { return nil }
        return try? Vips.quickThumbnail(
            bytes, maxSide: PreviewImage.maxSide, quality: 75, maxBytes: PreviewImage.maxBytes,
            minEmbeddedSide: previewMinEmbeddedSide, allowFullDecode: false,
            maxFullDecodePixels: previewFullDecodePixels,
            embeddedOnly: embeddedOnly
        )
        // what a receiver checks: never dropped there
        .flatMap { t in (try? PreviewImage.validate(t.jpeg)) != nil ? t : nil }
    }

    /// An embedded thumbnail shorter than this is not used for a preview (cameras write 160x120).
    public static let previewMinEmbeddedSide = 96
    /// Without an embedded thumbnail or a bounded decode, a preview decodes every pixel only of
    /// an image this small (a megapixel decodes in milliseconds in every supported format; a
    /// 12-megapixel HEIC takes a second or more).
    public static let previewFullDecodePixels = 1_000_000
}

/// A preview as pixels for a desktop notification's `image-data` hint (org.freedesktop.Notifications
/// `(iiibiiay)`): 8-bit RGB, rows of `rowStride` bytes, top to bottom.
public struct PreviewPixels: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var rowStride: Int
    public var rgb: [UInt8]
}

extension Media {
    /// Decodes a preview that passed `PreviewImage.validate` (a receiver's checks come first:
    /// only a small baseline or progressive JPEG gets here) into RGB pixels, as stored: neither
    /// rotated nor colour-managed by anything in the file (belt and braces: a valid preview has
    /// no EXIF nor ICC profile to apply).
    public static func pixels(ofPreview jpeg: UnsafeRawBufferPointer) throws -> PreviewPixels {
        _ = try PreviewImage.validate(jpeg)
        let d = try Vips.decodePixels(jpeg, maxSide: PreviewImage.maxSide)
        guard d.width > 0, d.height > 0, d.pixels.count == d.width * d.height * d.bands, d.bands == 1 || d.bands == 3
        else {
            throw MediaError(.undecodable, "the preview decoded to an unexpected layout (\(d.bands) bands)")
        }
        let rgb = d.bands == 3 ? d.pixels : d.pixels.flatMap { [$0, $0, $0] }
        return PreviewPixels(width: d.width, height: d.height, rowStride: d.width * 3, rgb: rgb)
    }
}
