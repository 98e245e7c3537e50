import LocafotoErrors

/// Seed 004 "compression": longest side 1500 px, JPEG quality 75 (60...90), metadata kept.
public struct CompressionOptions: Sendable, Equatable, Codable {
    /// The longest side of the output, in pixels; smaller photos are never enlarged.
    public var maxSide: Int
    /// JPEG quality, 60...90 (seed 004).
    public var quality: Int
    /// Drop EXIF, XMP, IPTC and the ICC profile (pixels are converted to sRGB first).
    public var stripMetadata: Bool
    /// Keep the metadata but remove the EXIF GPS IFD and any XMP packet (which may repeat it).
    public var stripLocation: Bool

    public static let qualityRange = 60...90
    public static let maxSideRange = 16...8192

    public init(maxSide: Int = 1500, quality: Int = 75, stripMetadata: Bool = false, stripLocation: Bool = false) {
        self.maxSide = maxSide
        self.quality = quality
        self.stripMetadata = stripMetadata
        self.stripLocation = stripLocation
    }

    public func validate() throws {
        guard Self.qualityRange.contains(quality) else {
            throw MediaError(
                .invalidOption,
                "compression quality \(quality) is out of range: use \(Self.qualityRange.lowerBound)...\(Self.qualityRange.upperBound) (default 75)"
            )
        }
        guard Self.maxSideRange.contains(maxSide) else {
            throw MediaError(
                .invalidOption,
                "compression size \(maxSide) px is out of range: use \(Self.maxSideRange.lowerBound)...\(Self.maxSideRange.upperBound) (default 1500)"
            )
        }
    }
}
