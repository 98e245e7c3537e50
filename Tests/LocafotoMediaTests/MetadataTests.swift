import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoMedia

@Suite struct MetadataTests {
    @Test(arguments: [("photo.jpg", ContentType.jpeg), ("photo.png", .png), ("photo.webp", .webp)])
    func photosWithFullEXIF(name: String, type: ContentType) throws {
        let m = try Fixture.bytes(name).metadata(type)
        // Stored 1200x800 with orientation 6: displayed as a portrait.
        #expect(m == Expected.camera(width: 800, height: 1200, orientation: 6, hasLocation: true))
    }

    @Test func heic() throws {
        let m = try Fixture.bytes("photo.heic").metadata(.heic)
        // pillow-heif stored the rotation as irot (applied by libheif) and kept the EXIF tag
        // (as iPhones do): reported as stored, not applied again.
        #expect(m == Expected.camera(width: 800, height: 1200, orientation: 6, hasLocation: true))
        // HEIC/HEIF/AVIF are one family for the declared type.
        #expect(try Fixture.bytes("photo.heic").metadata(.heif) == m)
    }

    /// What the media indexer reads of a received JPEG: the head up to its start of scan
    /// (`JPEGHead`) tells the same facts as the whole photo.
    @Test(arguments: ["photo.jpg", "nogps.jpg", "thumb.jpg", "upright.jpg", "letterbox.jpg", "small.jpg"])
    func headOfAJPEGTellsWhatTheWholeDoes(name: String) throws {
        let whole = try Fixture.bytes(name)
        let n = try #require(JPEGHead.headerLength(of: whole))
        #expect(n < whole.count / 2 || whole.count < 20_000, "the head is a small part of the photo")
        #expect(try Array(whole[..<n]).metadata(.jpeg) == whole.metadata(.jpeg))
    }

    @Test func jpegWithoutGPS() throws {
        let m = try Fixture.bytes("nogps.jpg").metadata(.jpeg)
        #expect(m == Expected.camera(width: 640, height: 480, orientation: 1, hasLocation: false))
    }

    @Test func pngWithoutEXIF() throws {
        let m = try Fixture.bytes("plain.png").metadata(.png)
        #expect(m == PhotoMetadata(width: 640, height: 480, hasLocation: false))
        #expect(m.hasLocation == false)
    }

    @Test func declaredTypeMustMatchContent() throws {
        let error = try #require(throws: MediaError.self) { try Fixture.bytes("photo.png").metadata(.jpeg) }
        #expect(error.code == .invalidOption)
        #expect(error.message.contains("PNG"))
    }

    @Test func metadataIsCodable() throws {
        let m = try Fixture.bytes("photo.jpg").metadata(.jpeg)
        let back = try JSONDecoder().decode(PhotoMetadata.self, from: JSONEncoder().encode(m))
        #expect(back == m)
    }

    @Test func exifDates() {
        #expect(EXIF.parseDate("2024:05:01 10:00:00", offset: nil) == Expected.date)
        #expect(EXIF.parseDate("2024:05:01 12:00:00", offset: "+02:00") == Expected.date)
        #expect(EXIF.parseDate("2024:05:01 07:30:00", offset: "-02:30") == Expected.date)
        #expect(EXIF.parseDate("2024:05:01 10:00:00", offset: "garbage") == Expected.date)
        #expect(EXIF.parseDate("0000:00:00 00:00:00", offset: nil) == nil)
        #expect(EXIF.parseDate("    :  :     :  :  ", offset: nil) == nil)
        #expect(EXIF.parseDate("2024:02:30 10:00:00", offset: nil) == nil)
        #expect(EXIF.parseDate("2024:05", offset: nil) == nil)
    }

    @Test func damagedEXIFIsNotAnError() throws {
        // Overwrite the TIFF header inside the APP1 segment: the photo still has a header.
        var b = try Fixture.bytes("nogps.jpg")
        let app1 = try #require(Structure.exifAPP1(b))
        for k in (app1.lowerBound + 10)..<(app1.lowerBound + 18) { b[k] = 0xEE }
        let m = try b.metadata(.jpeg)
        #expect(m.width == 640 && m.height == 480)
        #expect(m.cameraMake == nil && m.hasLocation == false)
    }
}

@Suite struct TIFFTests {
    @Test func metadata() throws {
        let m = try Fixture.bytes("photo.tiff").metadata(.tiff)
        #expect(m == Expected.camera(width: 16, height: 16, orientation: 6, hasLocation: true))
    }

    @Test func locationIsNeutralisedInPlace() throws {
        let input = try Fixture.bytes("photo.tiff")
        let out = try Media.strippingLocation(from: input, type: .tiff)
        #expect(out.count == input.count)
        let m = try out.metadata(.tiff)
        #expect(m.hasLocation == false)
        #expect(m.cameraMake == Expected.make && m.captureDate == Expected.date && m.orientation == 6)
        // The pixels (the last 768 bytes) are untouched, and it still decodes.
        #expect(out.suffix(768) == input.suffix(768))
        #expect(try ContentType.sniff(out.thumbnail()) == .jpeg)
        #expect(try Media.strippingLocation(from: out, type: .tiff) == out)
    }
}
