import LocafotoErrors

/// Why a media operation failed, with a message meant for the user (and the logs).
///
/// Messages coming from libvips include its own error text ("libvips: ..."); libvips' error
/// buffer is process-wide and is cleared after each read, so when several photos fail at the
/// same instant on different threads a message may carry a neighbour's text too.
public typealias MediaError = LayerError<MediaErrorCode>

public enum MediaErrorCode: String, LayerErrorCode, Codable {
    /// The bytes are not a decodable image of the expected type (damaged, truncated,
    /// or not an image at all), or their metadata cannot be edited safely.
    case undecodable
    /// A format or feature this layer does not handle (e.g. GIF thumbnails are fine, but
    /// an unknown format, or a HEIF whose Exif item is split over several extents).
    case unsupported
    /// An argument out of range (quality, size) or a content type that does not match.
    case invalidOption
    /// Over a size limit: input bytes (`Media.maxInputBytes`) or pixels
    /// (`Media.maxPixels`, decompression bombs).
    case tooLarge
    /// libvips could not be initialised or failed unexpectedly.
    case `internal`
}
