import Foundation

/// What Locafoto shows about a photo, read from its header and EXIF without decoding pixels:
/// what LocafotoMedia reads, and what the vault's catalog keeps of it (`PhotoMediaInfo`). A
/// field is nil where it is not known. Coded with its Swift names: the media worker's pipe
/// carries it, and an agent started before an upgrade runs the new binary's worker.
public struct PhotoMetadata: Sendable, Equatable, Codable {
    /// Size AS DISPLAYED: for JPEG/PNG/WebP/TIFF with EXIF orientation 5...8 (a quarter turn)
    /// the stored width and height are swapped. HEIC/HEIF/AVIF sizes are taken after libheif
    /// applied the container's `irot`/`imir` transforms (the EXIF tag is not applied again).
    /// nil only when the decoder reported nothing usable.
    public var width: Int?
    public var height: Int?
    /// The EXIF Orientation tag (1...8) as stored in the file, nil when absent or out of range
    /// (for TIFF the baseline tag). For HEIC/HEIF/AVIF it is informational only: the
    /// decoder already rotated the pixels, so `width`/`height` never depend on it.
    public var orientation: Int?
    /// EXIF DateTimeOriginal. EXIF stores local time without a zone: when OffsetTimeOriginal
    /// (EXIF 2.31, e.g. "+02:00") is present it is used, otherwise the time is taken AS UTC
    /// (so "2024:05:01 10:00:00" becomes 2024-05-01T10:00:00Z whatever the camera's zone).
    public var captureDate: Date?
    /// EXIF Make and Model, trimmed; nil when absent or empty.
    public var cameraMake: String?
    public var cameraModel: String?
    /// True when the EXIF GPS IFD holds both a latitude and a longitude; false when it does not
    /// (reading a photo always says which); nil where the photo has not been read.
    public var hasLocation: Bool?

    public init(
        width: Int? = nil, height: Int? = nil, orientation: Int? = nil, captureDate: Date? = nil,
        cameraMake: String? = nil, cameraModel: String? = nil, hasLocation: Bool? = nil
    ) {
        self.width = width
        self.height = height
        self.orientation = orientation
        self.captureDate = captureDate
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.hasLocation = hasLocation
    }
}
