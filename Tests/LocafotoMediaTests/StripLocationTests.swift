import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoMedia

@Suite struct StripLocationTests {
    func checkKeptMetadata(_ out: [UInt8], _ type: ContentType, orientation: Int) throws {
        #expect(ContentType.sniff(out) == type)
        let m = try out.metadata(type)
        #expect(m.hasLocation == false)
        #expect(m.cameraMake == Expected.make)
        #expect(m.cameraModel == Expected.model)
        #expect(m.captureDate == Expected.date)
        #expect(m.orientation == orientation)
        #expect(m.width == 800 && m.height == 1200)
        // Still decodes (and the thumbnail is still rotated).
        let t = try out.thumbnail().metadata(.jpeg)
        #expect(t.width == 213 && t.height == 320)
    }

    @Test func jpegChangesOnlyTheEXIFSegment() throws {
        let input = try Fixture.bytes("photo.jpg")
        let out = try Media.strippingLocation(from: input, type: .jpeg)
        try checkKeptMetadata(out, .jpeg, orientation: 6)
        let a = try #require(Structure.exifAPP1(input))
        let b = try #require(Structure.exifAPP1(out))
        #expect(a.lowerBound == b.lowerBound)
        #expect(b.count < a.count)
        #expect(input[..<a.lowerBound] == out[..<b.lowerBound])  // SOI, APP0 ...
        #expect(input[a.upperBound...] == out[b.upperBound...])  // DQT ... the scan data, EOI
        // The EXIF kept its other tags (Software was not read by metadata()).
        #expect(Bytes.contains(out[b], Array("make-media-fixtures.py".utf8)))
    }

    @Test func idempotentAndNoOpWithoutGPS() throws {
        let once = try Media.strippingLocation(from: Fixture.bytes("photo.jpg"), type: .jpeg)
        #expect(try Media.strippingLocation(from: once, type: .jpeg) == once)
        let nogps = try Fixture.bytes("nogps.jpg")
        #expect(try Media.strippingLocation(from: nogps, type: .jpeg) == nogps)
        let plain = try Fixture.bytes("plain.png")
        #expect(try Media.strippingLocation(from: plain, type: .png) == plain)
    }

    @Test func jpegXMPWithPositionIsDropped() throws {
        let input = try Fixture.bytes("nogps.jpg")
        let xmp = Array(
            "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:Description exif:GPSLatitude=\"48,51.504N\" exif:GPSLongitude=\"2,17.67E\"/></x:xmpmeta>"
                .utf8)
        let segment = [0xFF, 0xE1] + Bytes.be16(xmp.count + 2) + xmp
        let withXMP = Array(input[..<2]) + segment + Array(input[2...])
        let out = try Media.strippingLocation(from: withXMP, type: .jpeg)
        #expect(out == input)
    }

    @Test func png() throws {
        let input = try Fixture.bytes("photo.png")
        let out = try Media.strippingLocation(from: input, type: .png)
        try checkKeptMetadata(out, .png, orientation: 6)
        let a = Structure.pngChunks(input)
        let b = Structure.pngChunks(out)
        #expect(a.map(\.type) == b.map(\.type))
        for (x, y) in zip(a, b) where x.type != "eXIf" { #expect(x == y) }
        for c in b { #expect(c.crc == Structure.crc32(Array(c.type.utf8) + c.data), "CRC of \(c.type)") }
        let exif = try #require(b.first { $0.type == "eXIf" })
        #expect(EXIF.isTIFF(exif.data))  // still without the "Exif\0\0" prefix
        #expect(out.count < input.count)
    }

    @Test func webp() throws {
        let input = try Fixture.bytes("photo.webp")
        let out = try Media.strippingLocation(from: input, type: .webp)
        try checkKeptMetadata(out, .webp, orientation: 6)
        #expect(Structure.le32(out, 4) == out.count - 8)
        let a = Structure.webpChunks(input)
        let b = Structure.webpChunks(out)
        #expect(a.map(\.type) == b.map(\.type))
        for (x, y) in zip(a, b) where x.type != "EXIF" { #expect(x.data == y.data, "\(x.type)") }
        #expect(b.first?.type == "VP8X")
        #expect(b[0].data[0] & 0x08 != 0)  // the EXIF flag stays: the chunk stays
    }

    @Test func heicIsNeutralisedInPlace() throws {
        let input = try Fixture.bytes("photo.heic")
        let out = try Media.strippingLocation(from: input, type: .heic)
        try checkKeptMetadata(out, .heic, orientation: 6)
        #expect(out.count == input.count)
        let diff = input.indices.filter { input[$0] != out[$0] }
        let item = try #require(ISOBMFF.metadataItems(input).first { $0.kind == .exif })
        #expect(!diff.isEmpty)
        #expect(diff.allSatisfy { item.range.contains($0) })
        #expect(diff.allSatisfy { out[$0] == 0 })
        #expect(try Media.strippingLocation(from: out, type: .heic) == out)
    }

    @Test func damagedContainersAreRefusedNotCrashed() throws {
        let jpeg = try Fixture.bytes("photo.jpg")
        let app1 = try #require(Structure.exifAPP1(jpeg))
        // Ends inside the EXIF segment: nothing after it to keep.
        #expect(throws: MediaError.self) {
            try Media.strippingLocation(from: Array(jpeg[..<(app1.upperBound - 10)]), type: .jpeg)
        }
        // A damaged EXIF block with GPS cannot be cleaned safely.
        var bad = jpeg
        for k in (app1.lowerBound + 10)..<(app1.lowerBound + 14) { bad[k] = 0x00 }
        let e = try #require(throws: MediaError.self) { try Media.strippingLocation(from: bad, type: .jpeg) }
        #expect(e.code == .undecodable)
    }

    @Test func typeIsChecked() throws {
        let e = try #require(throws: MediaError.self) {
            try Media.strippingLocation(from: Fixture.bytes("photo.webp"), type: .png)
        }
        #expect(e.code == .invalidOption)
    }
}
