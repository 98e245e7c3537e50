import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@_spi(Testing) @testable import LocafotoMedia

@Suite struct CompressTests {
    @Test func largePhotoIsReducedTo1500() throws {
        let big = try Media.synthesizeJPEG(width: 3000, height: 2000, quality: 95)
        let out = try big.compressed(.jpeg)
        #expect(ContentType.sniff(out) == .jpeg)
        let m = try out.metadata(.jpeg)
        #expect(m.width == 1500 && m.height == 1000)
        #expect(out.count < big.count)
        // Smaller maxSide, portrait.
        let tall = try Media.synthesizeJPEG(width: 1000, height: 3000, quality: 90)
        let t = try tall.compressed(.jpeg, CompressionOptions(maxSide: 600)).metadata(.jpeg)
        #expect(t.width == 200 && t.height == 600)
    }

    @Test func smallerPhotosAreNotEnlargedButRotated() throws {
        let out = try Fixture.bytes("photo.jpg").compressed(.jpeg)
        let m = try out.metadata(.jpeg)
        #expect(m.width == 800 && m.height == 1200)
        // The pixels are upright now: the orientation tag says so.
        #expect(m.orientation == 1)
        // And its thumbnail is still a portrait (not rotated twice).
        let t = try out.thumbnail().metadata(.jpeg)
        #expect(t.width == 213 && t.height == 320)
    }

    @Test func higherQualityIsLarger() throws {
        let big = try Media.synthesizeJPEG(width: 2000, height: 1500, quality: 98)
        let q60 = try big.compressed(.jpeg, CompressionOptions(quality: 60))
        let q90 = try big.compressed(.jpeg, CompressionOptions(quality: 90))
        #expect(q60.count < q90.count)
        #expect(q90.count < big.count)
    }

    @Test func qualityIsValidated() throws {
        let b = try Fixture.bytes("small.jpg")
        for q in [59, 91, 0, 100] {
            let e = try #require(throws: MediaError.self) { try b.compressed(.jpeg, CompressionOptions(quality: q)) }
            #expect(e.code == .invalidOption)
            #expect(e.message.contains("60...90"))
        }
        for q in [60, 75, 90] { _ = try b.compressed(.jpeg, CompressionOptions(quality: q)) }
        #expect(throws: MediaError.self) { try CompressionOptions(maxSide: 0).validate() }
        #expect(CompressionOptions().maxSide == 1500 && CompressionOptions().quality == 75)
    }

    @Test(arguments: [
        ("photo.jpg", ContentType.jpeg), ("photo.png", .png), ("photo.webp", .webp), ("photo.heic", .heic),
    ])
    func metadataKeptByDefault(name: String, type: ContentType) throws {
        let input = try Fixture.bytes(name)
        let m = try input.compressed(type).metadata(.jpeg)
        #expect(m.width == 800 && m.height == 1200)
        #expect(m.cameraMake == Expected.make && m.cameraModel == Expected.model)
        #expect(m.captureDate == Expected.date)
        #expect(m.hasLocation == true)

        let noGPS = try input.compressed(type, CompressionOptions(stripLocation: true))
        let n = try noGPS.metadata(.jpeg)
        #expect(n.hasLocation == false)
        #expect(n.cameraMake == Expected.make && n.captureDate == Expected.date)
        #expect(!Bytes.mentionsGPS(noGPS))

        let stripped = try input.compressed(type, CompressionOptions(stripMetadata: true))
        let s = try stripped.metadata(.jpeg)
        #expect(s.cameraMake == nil && s.captureDate == nil && s.hasLocation == false && s.orientation == nil)
        #expect(s.width == 800 && s.height == 1200)
        #expect(!Structure.jpegSegments(stripped).segments.contains { $0.marker == 0xE1 })
    }

    @Test func typeIsChecked() throws {
        let e = try #require(throws: MediaError.self) { try Fixture.bytes("photo.jpg").compressed(.png) }
        #expect(e.code == .invalidOption)
    }
}
