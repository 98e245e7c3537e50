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
