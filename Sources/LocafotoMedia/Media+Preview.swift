import LocafotoFormats

extension Media {
    /// Qualities tried in turn until the preview fits `PreviewImage.maxBytes`.
    static let previewQualities = [75, 60, 45, 30, 15]

    /// The preview an offer carries for a photo (protocol/messages.md "PREVIEW"): a JPEG whose
    /// longest side is at most `PreviewImage.maxSide` px, auto-rotated, with no metadata at all
    /// (no EXIF, so no GPS position), at the highest quality of `previewQualities` that fits
    /// `PreviewImage.maxBytes`. nil when libvips cannot read the photo or no quality fits: the
    /// item is then offered without a preview.
    public static func preview(of bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        for quality in previewQualities {
            guard let jpeg = try? thumbnail(of: bytes, maxSide: PreviewImage.maxSide, quality: quality) else { return nil }
            // The same check a receiver makes: what passes here is never dropped there.
            if jpeg.count <= PreviewImage.maxBytes, (try? PreviewImage.validate(jpeg)) != nil { return jpeg }
        }
        return nil
    }
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
        guard d.width > 0, d.height > 0, d.pixels.count == d.width * d.height * d.bands, d.bands == 1 || d.bands == 3 else {
            throw MediaError(.undecodable, "the preview decoded to an unexpected layout (\(d.bands) bands)")
        }
        let rgb = d.bands == 3 ? d.pixels : d.pixels.flatMap { [$0, $0, $0] }
        return PreviewPixels(width: d.width, height: d.height, rowStride: d.width * 3, rgb: rgb)
    }
}
