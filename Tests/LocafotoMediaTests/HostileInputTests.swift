import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@_spi(Testing) @testable import LocafotoMedia

@Suite struct HostileInputTests {
    @Test func randomBytes() throws {
        var rng = Xorshift(state: 0x1234_5678_9ABC_DEF1)
        for n in [0, 1, 7, 100, 5000] {
            let junk = rng.bytes(n)
            #expect(throws: MediaError.self) { try junk.thumbnail() }
            #expect(throws: MediaError.self) { try junk.metadata(.jpeg) }
            #expect(throws: MediaError.self) { try Media.strippingLocation(from: junk, type: .jpeg) }
            #expect(throws: MediaError.self) { try junk.compressed(.jpeg) }
        }
        // Random bytes behind each format's magic number.
        let magics: [(ContentType, [UInt8])] = [
            (.jpeg, [0xFF, 0xD8, 0xFF, 0xE0]), (.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
            (.webp, Array("RIFF".utf8) + [0x10, 0, 0, 0] + Array("WEBP".utf8)),
            (.heic, [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)),
            (.gif, Array("GIF89a".utf8)), (.tiff, [0x49, 0x49, 0x2A, 0x00]),
        ]
        for (type, magic) in magics {
            for n in [0, 10, 3000] {
                let junk = magic + rng.bytes(n)
                #expect(ContentType.sniff(junk) == type)
                #expect(throws: MediaError.self, "\(type) + \(n)") { try junk.thumbnail() }
                #expect(throws: MediaError.self, "\(type) + \(n)") { try junk.compressed(type) }
                _ = try? junk.metadata(type)
                _ = try? Media.strippingLocation(from: junk, type: type)
            }
        }
    }

    /// Every prefix of a small JPEG: an error or a (partial) result, never a crash.
    @Test func everyTruncationOfASmallJPEG() throws {
        let full = try Fixture.bytes("small.jpg")
        var thumbnails = 0
        for n in 0..<full.count {
            let prefix = Array(full[..<n])
            if (try? prefix.thumbnail(maxSide: 32)) != nil { thumbnails += 1 }
            _ = try? prefix.metadata(.jpeg)
            if let stripped = try? Media.strippingLocation(from: prefix, type: .jpeg) {
                #expect(!((try? stripped.metadata(.jpeg))?.hasLocation ?? false))
            }
        }
        // Once the scan has started, libjpeg decodes what is there (partial image).
        #expect(thumbnails > 0)
    }

    /// Coarser sweep over the other formats.
    @Test(arguments: [
        ("photo.png", ContentType.png), ("photo.webp", .webp), ("photo.heic", .heic), ("photo.jpg", .jpeg),
    ])
    func truncationsOfOtherFormats(name: String, type: ContentType) throws {
        let full = try Fixture.bytes(name)
        for n in stride(from: 0, to: full.count, by: max(1, full.count / 150)) {
            let prefix = Array(full[..<n])
            _ = try? prefix.thumbnail(maxSide: 64)
            _ = try? prefix.metadata(type)
            if let stripped = try? Media.strippingLocation(from: prefix, type: type) {
                #expect(!((try? stripped.metadata(type))?.hasLocation ?? false))
            }
        }
    }

    /// Flipped bytes through the metadata structures (EXIF, chunk headers).
    @Test(arguments: [
        ("photo.jpg", ContentType.jpeg), ("photo.png", .png), ("photo.webp", .webp), ("photo.heic", .heic),
    ])
    func corruptedMetadata(name: String, type: ContentType) throws {
        let full = try Fixture.bytes(name)
        var rng = Xorshift(state: 42)
        for _ in 0..<200 {
            var b = full
            let at = Int(rng.next() % UInt64(min(full.count, 1200)))
            b[at] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            _ = try? b.metadata(type)
            if let stripped = try? Media.strippingLocation(from: b, type: type) {
                #expect(!((try? stripped.metadata(type))?.hasLocation ?? false))
            }
        }
    }

    @Test func jpegDecompressionBombIsRefusedQuickly() throws {
        // JPEG dimensions are 16-bit: 65500x65500 (4.3 gigapixels) is the largest libjpeg takes.
        let bomb = try Structure.jpegClaiming(width: 65500, height: 65500, from: Fixture.bytes("small.jpg"))
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let e = try #require(throws: MediaError.self) { try bomb.thumbnail() }
            #expect(e.code == .tooLarge)
            #expect(e.message.contains("65500x65500"))
            let c = try #require(throws: MediaError.self) { try bomb.compressed(.jpeg) }
            #expect(c.code == .tooLarge)
        }
        #expect(elapsed < .seconds(1))
        // The header alone is harmless to read.
        let m = try bomb.metadata(.jpeg)
        #expect(m.width == 65500)
        // 65535 is over libjpeg's own limit: refused too.
        let over = try Structure.jpegClaiming(width: 65535, height: 65535, from: Fixture.bytes("small.jpg"))
        #expect(throws: MediaError.self) { try over.thumbnail() }
    }

    @Test func pngDecompressionBombIsRefusedQuickly() throws {
        // A PNG header claiming 100000x100000.
        var b = try Fixture.bytes("plain.png")
        let ihdr = 8 + 8  // signature, length+type
        for (k, v) in (Bytes.be32(100_000) + Bytes.be32(100_000)).enumerated() { b[ihdr + k] = v }
        let crc = Structure.crc32(Array(b[(ihdr - 4)..<(ihdr + 13)]))
        for (k, v) in Bytes.be32(Int(crc)).enumerated() { b[ihdr + 13 + k] = v }
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(throws: MediaError.self) { try b.thumbnail() }
            #expect(throws: MediaError.self) { try b.compressed(.png) }
        }
        #expect(elapsed < .seconds(1))
    }

    @Test func inputSizeLimit() throws {
        let huge = [UInt8](repeating: 0, count: Media.maxInputBytes + 1)
        let e = try #require(throws: MediaError.self) { try huge.metadata(.jpeg) }
        #expect(e.code == .tooLarge)
        #expect(e.message.contains("256 MiB"))
    }

    @Test func initializeIsIdempotent() throws {
        try Media.initialize()
        try Media.initialize()
    }
}
