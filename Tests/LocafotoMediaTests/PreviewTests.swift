import LocafotoFormats
import Testing

@_spi(Testing) @testable import LocafotoMedia

@Suite("Previews made by the sender")
struct MediaPreviewTests {
    @Test func aLargePhotoGivesASmallCleanJPEG() throws {
        let big = try Media.synthesizeJPEG(width: 3000, height: 2000, quality: 95)
        let preview = try #require(big.withUnsafeBytes { Media.preview(of: $0) })
        #expect(preview.count <= PreviewImage.maxBytes)
        let size = try PreviewImage.validate(preview)  // what a receiver checks
        #expect(size == .init(width: 160, height: 107))
    }

    @Test func aSmallPhotoIsNotEnlarged() throws {
        let small = try Media.synthesizeJPEG(width: 90, height: 40)
        let preview = try #require(small.withUnsafeBytes { Media.preview(of: $0) })
        #expect(try PreviewImage.validate(preview) == .init(width: 90, height: 40))
    }

    @Test func noGPSOrEXIFSurvives() throws {
        let photo = try Fixture.bytes("photo.jpg")
        #expect(try photo.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }.hasLocation)  // the fixture has one
        let preview = try #require(photo.withUnsafeBytes { Media.preview(of: $0) })
        #expect(!Bytes.mentionsGPS(preview))
        #expect(!preview.containsSequence(Array("Exif".utf8)))
    }

    @Test("a preview's pixels are decoded as stored: an EXIF orientation is not applied")
    func pixelsAreNotRotated() throws {
        // pixels(ofPreview:) refuses a JPEG with EXIF before decoding; the decoder under it is
        // held to the same rule on photos that have one. 64x48 and 1200x800 stored, orientation 6:
        // rotated, they would come out portrait.
        let small = try Fixture.bytes("small.jpg")
        let s = try small.withUnsafeBytes { try Vips.decodePixels($0, maxSide: PreviewImage.maxSide) }
        #expect(s.width == 64 && s.height == 48 && s.pixels.count == 64 * 48 * s.bands)
        let photo = try Fixture.bytes("photo.jpg")
        let p = try photo.withUnsafeBytes { try Vips.decodePixels($0, maxSide: PreviewImage.maxSide) }
        #expect(p.width == 160 && p.height == 107)
        #expect(throws: (any Error).self) { try small.withUnsafeBytes { try Media.pixels(ofPreview: $0) } }  // APP1: refused first
    }

    @Test func aPreviewDecodesToItsSize() throws {
        let preview = try #require(try Media.synthesizeJPEG(width: 300, height: 120).withUnsafeBytes { Media.preview(of: $0) })
        let p = try preview.withUnsafeBytes { try Media.pixels(ofPreview: $0) }
        #expect(p.width == 160 && p.height == 64 && p.rowStride == 480 && p.rgb.count == 480 * 64)
    }

    @Test func whatLibvipsCannotReadGetsNoPreview() {
        let junk: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x42, count: 500)
        #expect(junk.withUnsafeBytes { Media.preview(of: $0) } == nil)
        #expect([UInt8]().withUnsafeBytes { Media.preview(of: $0) } == nil)
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<$0 + needle.count]) == needle }
    }
}
