import LocafotoFormats
import Testing

@_spi(Testing) @testable import LocafotoMedia

@Suite("Previews made by the sender")
struct MediaPreviewTests {
    @Test func aLargePhotoGivesASmallCleanJPEG() throws {
        let big = try Media.synthesizeJPEG(width: 3000, height: 2000, quality: 95)
        let preview = try #require(big.withUnsafeBytes { Media.preview(of: $0)?.jpeg })
        #expect(preview.count <= PreviewImage.maxBytes)
        let size = try PreviewImage.validate(preview)  // what a receiver checks
        #expect(size == .init(width: 160, height: 107))
    }

    @Test func aSmallPhotoIsNotEnlarged() throws {
        let small = try Media.synthesizeJPEG(width: 90, height: 40)
        let preview = try #require(small.withUnsafeBytes { Media.preview(of: $0)?.jpeg })
        #expect(try PreviewImage.validate(preview) == .init(width: 90, height: 40))
    }

    @Test func noGPSOrEXIFSurvives() throws {
        let photo = try Fixture.bytes("photo.jpg")
        // the fixture has one
        #expect(try photo.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }.hasLocation == true)
        let preview = try #require(photo.withUnsafeBytes { Media.preview(of: $0)?.jpeg })
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
        // APP1: refused first
        #expect(throws: (any Error).self) { try small.withUnsafeBytes { try Media.pixels(ofPreview: $0) } }
    }

    @Test func aPreviewDecodesToItsSize() throws {
        let preview = try #require(
            try Media.synthesizeJPEG(width: 300, height: 120).withUnsafeBytes { Media.preview(of: $0)?.jpeg })
        let p = try preview.withUnsafeBytes { try Media.pixels(ofPreview: $0) }
        #expect(p.width == 160 && p.height == 64 && p.rowStride == 480 && p.rgb.count == 480 * 64)
    }

    @Test func whatLibvipsCannotReadGetsNoPreview() {
        let junk: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x42, count: 500)
        #expect(junk.withUnsafeBytes { Media.preview(of: $0) } == nil)
        #expect([UInt8]().withUnsafeBytes { Media.preview(of: $0) } == nil)
    }
}

/// Where previews and vault thumbnails come from (issue 24): never a whole decode of a large photo
/// on the way to an offer. Each fixture's embedded thumbnail differs from what a decode of the
/// photo gives (in colour or in size), so the result shows which source was used; nothing is timed.
@Suite("Preview and thumbnail sources")
struct PreviewSourceTests {
    private func preview(_ name: String, embeddedOnly: Bool = false) throws -> QuickThumbnail? {
        try Fixture.bytes(name).withUnsafeBytes { Media.preview(of: $0, embeddedOnly: embeddedOnly) }
    }

    private func size(_ jpeg: [UInt8]) throws -> [Int?] {
        let m = try jpeg.metadata(.jpeg)
        return [m.width, m.height]
    }

    private func centre(_ jpeg: [UInt8]) throws -> (r: UInt8, g: UInt8, b: UInt8) {
        let p = try jpeg.withUnsafeBytes { try Media.pixels(ofPreview: $0) }
        let i = (p.height / 2) * p.rowStride + (p.width / 2) * 3
        return (p.rgb[i], p.rgb[i + 1], p.rgb[i + 2])
    }

    @Test("a JPEG's EXIF thumbnail is the preview, turned by the photo's orientation")
    func exifThumbnail() throws {
        let t = try #require(try preview("thumb.jpg"))
        #expect(t.source == .exifThumbnail)
        // 120x80 stored, orientation 6: shown 80x120, like the photo (800x1200 shown).
        #expect(try PreviewImage.validate(t.jpeg) == .init(width: 80, height: 120))
        let c = try centre(t.jpeg)
        #expect(c.r > 200 && c.g < 60 && c.b < 60, "the thumbnail is solid red, the photo is not: \(c)")
        #expect(!t.jpeg.containsSequence(Array("Exif".utf8)))
        // From the head of the file alone (what the sender reads first): the same preview.
        #expect(try preview("thumb.jpg", embeddedOnly: true) == t)
    }

    @Test("an upright JPEG's EXIF thumbnail is offered byte for byte, read from the head without a decoder")
    func exifThumbnailAsItIs() throws {
        let photo = try Fixture.bytes("upright.jpg")
        guard case .ready(let t) = Media.previewFromJPEGHead(photo) else {
            Issue.record("no preview from the head: \(Media.previewFromJPEGHead(photo))")
            return
        }
        #expect(t.source == .exifThumbnail)
        #expect(try PreviewImage.validate(t.jpeg) == .init(width: 120, height: 80))
        #expect(photo.containsSequence(t.jpeg), "the thumbnail's own bytes")
        let c = try centre(t.jpeg)
        #expect(c.r > 200 && c.g < 60 && c.b < 60)
        // Turned, letterboxed, without a thumbnail: a decoder is needed.
        for name in ["thumb.jpg", "letterbox.jpg", "photo.jpg", "nogps.jpg"] {
            #expect(Media.previewFromJPEGHead(try Fixture.bytes(name)) == .needsDecoder, "\(name)")
        }
    }

    @Test("a JPEG head that is cut short or damaged is told apart without a crash")
    func hostileHeads() throws {
        let photo = try Fixture.bytes("upright.jpg")
        let sos = try #require(Structure.jpegSegments(photo).sos)
        for n in 0..<min(photo.count, sos + 64) {
            let verdict = Media.previewFromJPEGHead(Array(photo.prefix(n)))
            if case .ready(let t) = verdict { #expect((try? PreviewImage.validate(t.jpeg)) != nil) }
        }
        let junk: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x42, count: 500)  // APP0 of 16,962 bytes
        #expect(Media.previewFromJPEGHead(junk, wholeFile: true) == .unreadable, "a whole file cut short")
        #expect(Media.previewFromJPEGHead(junk) == .needsDecoder, "a head may just be too short to tell")
        #expect(
            Media.previewFromJPEGHead([0xFF, 0xD8, 0xFF, 0xDA, 0, 2]) == .unreadable,
            "image data before any frame header")
        #expect(Media.previewFromJPEGHead([0xFF, 0xD8, 0xFF, 0xE1, 0, 1]) == .unreadable, "a segment length under 2")
        var rng = Xorshift(state: 24)
        for _ in 0..<300 {  // bytes flipped anywhere before the image data
            var b = photo
            for _ in 0..<4 { b[Int(rng.next() % UInt64(sos))] = UInt8(truncatingIfNeeded: rng.next()) }
            if case .ready(let t) = Media.previewFromJPEGHead(b) {
                #expect((try? PreviewImage.validate(t.jpeg)) != nil)
            }
        }
    }

    @Test("without an embedded thumbnail, a JPEG's preview is a shrink-on-load decode; the head alone gives none")
    func jpegWithoutThumbnail() throws {
        let t = try #require(try preview("photo.jpg"))
        #expect(t.source == .shrinkOnLoad)
        #expect(try PreviewImage.validate(t.jpeg) == .init(width: 107, height: 160))
        #expect(try preview("photo.jpg", embeddedOnly: true) == nil)
    }

    @Test("a thumbnail of another shape (a letterboxed 16:9 photo in 4:3) is not the photo's preview")
    func letterboxedThumbnailIsIgnored() throws {
        let t = try #require(try preview("letterbox.jpg"))
        #expect(t.source == .shrinkOnLoad)
        #expect(try PreviewImage.validate(t.jpeg) == .init(width: 160, height: 90))
    }

    @Test("a HEIC's thumbnail item is the preview; the HEVC photo is not decoded")
    func heifThumbnailItem() throws {
        let t = try #require(try preview("thumb.heic"))
        #expect(t.source == .heifThumbnail)
        // The item is 120x80: a decode of the 1200x800 photo would give 160x107.
        #expect(try PreviewImage.validate(t.jpeg) == .init(width: 120, height: 80))
    }

    @Test("a HEIC over a megapixel without a thumbnail item gets no preview; a small one is decoded")
    func heicWithoutThumbnail() throws {
        #expect(try preview("nothumb.heic") == nil)
        let small = try #require(try preview("photo.heic"))  // 800x1200: under a megapixel
        #expect(small.source == .fullDecode)
        #expect(try PreviewImage.validate(small.jpeg) == .init(width: 107, height: 160))
    }

    @Test("the vault's 320-px thumbnails: a thumbnail item of 320 px serves, smaller embedded ones do not")
    func vaultThumbnails() throws {
        func thumb(_ name: String) throws -> QuickThumbnail {
            try Fixture.bytes(name).withUnsafeBytes { try Media.thumbnailWithSource(of: $0, maxSide: 320) }
        }
        let iphone = try thumb("thumb320.heic")
        #expect(iphone.source == .heifThumbnail)
        #expect(try size(iphone.jpeg) == [320, 240])
        let small = try thumb("thumb.heic")  // a 120-px item is too small for 320 px: the photo is decoded
        #expect(small.source == .fullDecode)
        #expect(try size(small.jpeg) == [320, 213])
        let jpeg = try thumb("thumb.jpg")  // a 120-px EXIF thumbnail neither: shrink-on-load
        #expect(jpeg.source == .shrinkOnLoad)
        #expect(try size(jpeg.jpeg) == [213, 320])
        #expect(try thumb("nothumb.heic").source == .fullDecode)  // asked for: the caller waits for it
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<$0 + needle.count]) == needle }
    }
}
