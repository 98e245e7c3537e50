import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoMedia

@Suite struct ThumbnailTests {
    @Test(arguments: ["photo.jpg", "photo.png", "photo.webp", "photo.heic"])
    func portraitPhotosGivePortraitThumbnails(name: String) throws {
        let thumb = try Fixture.bytes(name).thumbnail()
        #expect(ContentType.sniff(thumb) == .jpeg)
        let m = try thumb.metadata(.jpeg)
        // 1200x800 stored + orientation 6 (HEIC: irot) -> 213x320: rotated, longest side 320.
        #expect(m.height == 320)
        #expect(m.width == 213)
        // Metadata stripped: no EXIF (hence no orientation to apply twice), no APP1 at all.
        #expect(m.orientation == nil && m.cameraMake == nil && m.captureDate == nil && m.hasLocation == false)
        #expect(!Structure.jpegSegments(thumb).segments.contains { $0.marker == 0xE1 })
        #expect(Structure.jpegSegments(thumb).sos != nil)
    }

    @Test func landscapeAndSizes() throws {
        let b = try Fixture.bytes("plain.png")
        for side in [16, 100, 320, 639] {
            let m = try b.thumbnail(maxSide: side).metadata(.jpeg)
            #expect(max(m.width!, m.height!) == side)
            #expect(m.width! > m.height!)
        }
    }

    @Test func neverEnlarged() throws {
        // 64x48 stored, orientation 6.
        let m = try Fixture.bytes("small.jpg").thumbnail(maxSide: 320).metadata(.jpeg)
        #expect(m.width == 48 && m.height == 64)
    }

    @Test func optionsAreValidated() throws {
        let b = try Fixture.bytes("small.jpg")
        for (side, q) in [(0, 80), (15, 80), (5000, 80), (320, 0), (320, 101)] {
            let e = try #require(throws: MediaError.self) { try b.thumbnail(maxSide: side, quality: q) }
            #expect(e.code == .invalidOption)
        }
    }

    @Test func qualityChangesSize() throws {
        let b = try Fixture.bytes("photo.jpg")
        #expect(try b.thumbnail(quality: 30).count < b.thumbnail(quality: 95).count)
    }

    @Test func concurrentThumbnails() async throws {
        let inputs = try ["photo.jpg", "photo.png", "photo.webp", "photo.heic", "plain.png", "nogps.jpg"].map(
            Fixture.bytes)
        let expected = try inputs.map { try $0.thumbnail() }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for round in 0..<4 {
                for (k, input) in inputs.enumerated() {
                    group.addTask {
                        _ = round
                        return try input.thumbnail() == expected[k]
                    }
                }
            }
            for try await same in group { #expect(same) }
        }
    }
}
