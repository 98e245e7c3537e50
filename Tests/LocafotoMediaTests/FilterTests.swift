import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@_spi(Testing) @testable import LocafotoMedia

/// Filters on real libvips output: each image is filtered, encoded, decoded again, and its
/// pixels compared with what the filter's definition says (docs/usage.md "Filters").
@Suite struct FilterTests {
    /// A colourful 240x160 photo: the synthetic pattern (R = x mod 256, G = y mod 256, B = 128)
    /// at quality 95, so every hue in a wide range is present.
    static func colourful() throws -> [UInt8] { try Media.synthesizeJPEG(width: 240, height: 160, quality: 95) }

    static func pixels(_ jpeg: [UInt8]) throws -> (width: Int, height: Int, bands: Int, pixels: [UInt8]) {
        try jpeg.withUnsafeBytes { try Vips.decodePixels($0, maxSide: 4096) }
    }

    static func render(_ bytes: [UInt8], _ filter: PhotoFilter?, _ options: RenderOptions = RenderOptions()) throws
        -> [UInt8]
    {
        try bytes.withUnsafeBytes { try Media.render($0, type: nil, filter: filter, options: options) }
    }

    @Test func monochromeHasEqualChannelsInEveryPixel() throws {
        for source in [try Self.colourful(), try Fixture.bytes("photo.jpg"), try Fixture.bytes("photo.png")] {
            let out = try Self.render(source, .monochrome)
            #expect(ContentType.sniff(out) == .jpeg)
            let p = try Self.pixels(out)
            try #require(p.bands == 3)
            var unequal = 0
            for i in stride(from: 0, to: p.pixels.count, by: 3)
            where p.pixels[i] != p.pixels[i + 1] || p.pixels[i] != p.pixels[i + 2] {
                unequal += 1
            }
            #expect(unequal == 0, "\(unequal) of \(p.pixels.count / 3) pixels have unequal channels")
        }
    }

    @Test func theOriginalIsNotGrey() throws {
        // The check above can fail: the unfiltered image has many pixels with unequal channels.
        let p = try Self.pixels(try Self.colourful())
        let unequal = stride(from: 0, to: p.pixels.count, by: 3).filter { p.pixels[$0] != p.pixels[$0 + 1] }.count
        #expect(unequal > p.pixels.count / 6)
    }

    @Test func sepiaOrdersChannelsAndKeepsTheRatios() throws {
        let source = try Self.colourful()
        let before = try Self.pixels(source)
        let out = try Self.render(source, .sepia)
        let p = try Self.pixels(out)
        try #require(p.width == before.width && p.height == before.height && p.bands == 3)
        var misordered = 0
        var far = 0
        let m = PhotoFilter.sepiaMatrix
        for i in stride(from: 0, to: p.pixels.count, by: 3) {
            let (r, g, b) = (Int(p.pixels[i]), Int(p.pixels[i + 1]), Int(p.pixels[i + 2]))
            // R ≥ G ≥ B: each row of the sepia matrix is larger, term by term, than the next
            // (JPEG's chroma subsampling may blur that by a step or two).
            if r + 3 < g || g + 3 < b { misordered += 1 }
            // And each pixel is the matrix applied to the original pixel (JPEG rounding aside).
            let (r0, g0, b0) = (Double(before.pixels[i]), Double(before.pixels[i + 1]), Double(before.pixels[i + 2]))
            let expected = (0..<3).map { min(255, m[3 * $0] * r0 + m[3 * $0 + 1] * g0 + m[3 * $0 + 2] * b0) }
            if abs(Double(r) - expected[0]) > 12 || abs(Double(g) - expected[1]) > 12
                || abs(Double(b) - expected[2]) > 12
            {
                far += 1
            }
        }
        let n = p.pixels.count / 3
        #expect(misordered == 0, "\(misordered) of \(n) pixels are not R ≥ G ≥ B")
        #expect(far < n / 50, "\(far) of \(n) pixels are far from the sepia matrix's value")
        // On a mid grey (128, 128, 128) sepia gives (173, 154, 120): the ratios 1.351 : 1.203 : 0.937.
        let grey = try Self.render(try Self.greyPNG(128), .sepia)
        let g = try Self.pixels(grey)
        let centre = 3 * (g.width * g.height / 2 + g.width / 2)
        #expect(
            abs(Int(g.pixels[centre]) - 173) <= 2 && abs(Int(g.pixels[centre + 1]) - 154) <= 2
                && abs(Int(g.pixels[centre + 2]) - 120) <= 2,
            "\(g.pixels[centre...(centre + 2)])")
    }

    /// A uniform grey image (a PNG written here: lossless, so the input value is exact).
    static func greyPNG(_ v: UInt8) throws -> [UInt8] {
        try PNG.grey(width: 16, height: 16, value: v)
    }

    @Test func everyFilterChangesThePhotoAndKeepsItsSize() throws {
        let source = try Fixture.bytes("photo.jpg")
        let base = try Self.pixels(try Self.render(source, nil))
        for filter in PhotoFilter.allCases {
            let out = try Self.render(source, filter)
            let p = try Self.pixels(out)
            #expect(p.width == base.width && p.height == base.height, "\(filter)")
            let differing = zip(p.pixels, base.pixels).filter { abs(Int($0) - Int($1)) > 8 }.count
            #expect(differing > p.pixels.count / 20, "\(filter) changed only \(differing) of \(p.pixels.count) values")
        }
    }

    @Test func metadataIsKeptAndLocationOnlyOnRequest() throws {
        let source = try Fixture.bytes("photo.jpg")
        let original = try source.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }
        try #require(original.hasLocation == true && original.captureDate != nil)
        let kept = try Self.render(source, .sepia)
        let m = try kept.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }
        #expect(m.captureDate == original.captureDate && m.cameraModel == original.cameraModel && m.hasLocation == true)
        #expect(m.orientation == 1)  // rotated upright, as the tag now says
        let stripped = try Self.render(source, .sepia, RenderOptions(stripLocation: true))
        let s = try stripped.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }
        #expect(s.hasLocation == false && s.captureDate == original.captureDate)
    }

    @Test func unknownNamesAreRefusedWithTheList() throws {
        #expect(try PhotoFilter.named("SEPIA") == .sepia)
        let e = #expect(throws: MediaError.self) { try PhotoFilter.named("polaroid") }
        #expect(e?.code == .invalidOption)
        for f in PhotoFilter.allCases { #expect(e?.message.contains(f.rawValue) == true) }
    }

    @Test func curvesAreTheDocumentedTables() throws {
        let identity = PhotoFilter.monochrome.definition.lookupTable
        let wrong = (0..<256).filter { (v: Int) -> Bool in
            identity[3 * v] != UInt8(v) || identity[3 * v + 2] != UInt8(v)
        }
        #expect(wrong.isEmpty)
        let fade = PhotoFilter.fade.definition.lookupTable
        // lift(0.10, 0.95): 0 → round(25.5) = 26, 255 → round(242.25) = 242.
        #expect(fade[0] == 26 && fade[3 * 255] == 242)
        let noir = PhotoFilter.noir.definition.lookupTable
        #expect(noir[0] == 0 && noir[3 * 255] == 255 && noir[3 * 128] == 128 && noir[3 * 64] < 64)
    }

    /// docs/usage.md "Filters" vectors, computed independently (Python, from its formulas), for
    /// the reference arithmetic; and libvips' real output on a flat image of that colour (JPEG
    /// keeps a flat 16x16 block within a step or two).
    @Test func vectorsMatchTheReferenceAndLibvips() throws {
        let vectors: [PhotoFilter: [[Int]]] = [
            .monochrome: [[135, 135, 135], [54, 54, 54]], .noir: [[138, 138, 138], [34, 34, 34]],
            .tonal: [[134, 134, 134], [63, 63, 63]], .sepia: [[178, 159, 124], [75, 67, 52]],
            .vintage: [[185, 135, 77], [57, 69, 78]], .chrome: [[230, 113, 5], [15, 54, 98]],
            .fade: [[182, 131, 80], [56, 76, 94]], .instant: [[194, 124, 52], [47, 65, 78]],
        ]
        let inputs: [[Int]] = [[200, 120, 40], [30, 60, 90]]
        for filter in PhotoFilter.allCases {
            let expected = try #require(vectors[filter])
            for (input, want) in zip(inputs, expected) {
                #expect(filter.apply(input) == want, "\(filter) \(input)")
                let out = try Self.render(try PNG.rgb(width: 16, height: 16, input.map(UInt8.init)), filter)
                let p = try Self.pixels(out)
                let centre = 3 * (8 * p.width + 8)
                let got = (0..<3).map { Int(p.pixels[centre + $0]) }
                #expect(
                    zip(got, want).allSatisfy { abs($0 - $1) <= 3 },
                    "\(filter) \(input): libvips \(got), reference \(want)")
            }
        }
    }

    @Test func compressionToHEICWhereSupported() throws {
        guard Media.canWriteHEIC else { return }  // Debian's libvips 8.14 has heifsave (libheif + x265)
        let big = try Media.synthesizeJPEG(width: 2000, height: 1000, quality: 95)
        let out = try Self.render(big, nil, RenderOptions(maxSide: 1500, quality: 75, format: .heic))
        #expect(ContentType.sniff(out) == .heic || ContentType.sniff(out) == .heif)
        let m = try out.withUnsafeBytes { try Media.metadata(of: $0, type: .heic) }
        #expect(m.width == 1500 && m.height == 750)
    }
}

/// A minimal grey PNG (8-bit greyscale, stored deflate blocks), independent of libvips.
enum PNG {
    static func grey(width: Int, height: Int, value: UInt8) throws -> [UInt8] {
        try image(width: width, height: height, pixel: [value], colourType: 0)
    }

    static func rgb(width: Int, height: Int, _ pixel: [UInt8]) throws -> [UInt8] {
        try image(width: width, height: height, pixel: pixel, colourType: 2)
    }

    static func image(width: Int, height: Int, pixel: [UInt8], colourType: UInt8) throws -> [UInt8] {
        var raw: [UInt8] = []
        for _ in 0..<height { raw += [0] + (0..<width).flatMap { _ in pixel } }
        // zlib stream with one stored block (raw is < 65535 bytes here).
        var z: [UInt8] = [
            0x78, 0x01, 0x01, UInt8(raw.count & 0xFF), UInt8(raw.count >> 8), UInt8(~raw.count & 0xFF),
            UInt8((~raw.count >> 8) & 0xFF),
        ]
        z += raw
        var a: UInt32 = 1
        var b: UInt32 = 0
        for x in raw {
            a = (a + UInt32(x)) % 65521
            b = (b + a) % 65521
        }
        z += be32(b << 16 | a)
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(Structure.crc32(body))
        }
        let ihdr = be32(UInt32(width)) + be32(UInt32(height)) + [8, colourType, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", z)
            + chunk("IEND", [])
    }

    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
