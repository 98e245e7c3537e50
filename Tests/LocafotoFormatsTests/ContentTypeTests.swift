import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import Testing

@Suite("Content sniffing")
struct ContentTypeTests {
    /// Fixtures made by scripts/make-fixtures.py (real images from Pillow / pillow-heif).
    static let fixtures: [(file: String, type: ContentType?)] = [
        ("sample.jpg", .jpeg),
        ("sample.png", .png),
        ("sample.gif", .gif),
        ("sample.webp", .webp),
        ("sample.tiff", .tiff),
        ("sample-be.tiff", .tiff),
        ("sample.heic", .heic),
        ("sample.avif", .avif),
        ("png-renamed.jpg", .png),  // extensions are never trusted
        ("not-an-image.txt", nil),
    ]

    static func fixture(_ name: String) throws -> [UInt8] {
        let dir = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))
    }

    @Test(arguments: fixtures)
    func fixtureSniffs(_ fixture: (file: String, type: ContentType?)) throws {
        let bytes = try Self.fixture(fixture.file)
        #expect(bytes.count < 20 * 1024)
        #expect(ContentType.sniff(bytes) == fixture.type)
        #expect(ContentType.sniff(bytes.prefix(ContentType.sniffLength)) == fixture.type)
    }

    @Test func sniffLooksAtNoMoreThanSniffLengthBytes() throws {
        // Whatever follows the first sniffLength bytes does not matter.
        for (file, type) in Self.fixtures {
            let bytes = try Self.fixture(file)
            let tail = [UInt8](repeating: 0xAB, count: 100)
            #expect(ContentType.sniff(Array(bytes.prefix(ContentType.sniffLength)) + tail) == type)
        }
    }

    @Test func noiseAndTextAreNotImages() {
        #expect(ContentType.sniff([UInt8]()) == nil)
        #expect(ContentType.sniff(Array("hello, world\n".utf8)) == nil)
        #expect(ContentType.sniff(Array("<!DOCTYPE html><html><body>".utf8)) == nil)
        #expect(ContentType.sniff(Array("%PDF-1.7\n".utf8)) == nil)
        #expect(ContentType.sniff([UInt8](repeating: 0, count: 64)) == nil)
        // Random bytes: a hit would need one of the magic numbers; 1000 draws never produce one
        // with overwhelming probability, and none may crash.
        var hits = 0
        for _ in 0..<1000 {
            let n = Int.random(in: 0...48)
            if ContentType.sniff(SecureRandom.bytes(n)) != nil { hits += 1 }
        }
        #expect(hits < 5)
    }

    static let magics: [(bytes: [UInt8], type: ContentType)] = [
        ([0xFF, 0xD8, 0xFF], .jpeg),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png),
        (Array("GIF87a".utf8), .gif),
        (Array("GIF89a".utf8), .gif),
        ([0x49, 0x49, 0x2A, 0x00], .tiff),
        ([0x4D, 0x4D, 0x00, 0x2A], .tiff),
        (Array("RIFF".utf8) + [0x10, 0, 0, 0] + Array("WEBP".utf8), .webp),
        (ftyp(major: "heic", compatible: ["mif1", "heic"]), .heic),
        (ftyp(major: "avif", compatible: ["mif1", "miaf"]), .avif),
        (ftyp(major: "mif1", compatible: ["mif1"]), .heif),
    ]

    @Test func truncatedMagicNumbersAreNotRecognised() {
        for (magic, type) in Self.magics {
            #expect(ContentType.sniff(magic) == type, "\(type) full magic")
            let needed = type == .heic || type == .avif || type == .heif ? 12 : magic.count
            for n in 0..<needed {
                #expect(ContentType.sniff(magic.prefix(n)) == nil, "\(type) magic cut to \(n) bytes")
            }
        }
    }

    static func ftyp(major: String, minor: UInt32 = 0, compatible: [String], size: Int? = nil) -> [UInt8] {
        let length = size ?? 16 + 4 * compatible.count
        var b: [UInt8] = [
            UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
        ]
        b += Array("ftyp".utf8) + Array(major.utf8)
        b += [UInt8(minor >> 24 & 0xFF), UInt8(minor >> 16 & 0xFF), UInt8(minor >> 8 & 0xFF), UInt8(minor & 0xFF)]
        for c in compatible { b += Array(c.utf8) }
        return b
    }

    @Test(arguments: [
        ("heic", ContentType.heic), ("heix", .heic), ("hevc", .heic), ("hevx", .heic), ("heim", .heic),
        ("heis", .heic), ("mif1", .heif), ("msf1", .heif), ("avif", .avif), ("avis", .avif),
    ])
    func majorBrands(_ brand: String, _ type: ContentType) {
        #expect(ContentType.sniff(Self.ftyp(major: brand, compatible: [])) == type)
        #expect(
            ContentType.sniff(Self.ftyp(major: brand, compatible: ["isom"]) + [UInt8](repeating: 0, count: 40)) == type)
    }

    @Test func compatibleBrands() {
        // A generic major brand with a codec-specific compatible brand.
        #expect(ContentType.sniff(Self.ftyp(major: "mif1", compatible: ["miaf", "heic"])) == .heic)
        #expect(ContentType.sniff(Self.ftyp(major: "mif1", compatible: ["avif"])) == .avif)
        #expect(ContentType.sniff(Self.ftyp(major: "isom", compatible: ["mif1"])) == .heif)
        #expect(ContentType.sniff(Self.ftyp(major: "msf1", compatible: ["iso8", "hevc"])) == .heic)
        // Video and unrelated ISO-BMFF files are not images.
        #expect(ContentType.sniff(Self.ftyp(major: "isom", compatible: ["iso2", "avc1", "mp41"])) == nil)
        #expect(ContentType.sniff(Self.ftyp(major: "qt  ", compatible: ["qt  "])) == nil)
        // Brands outside the ftyp box (box size 16: no compatible brands) are not consulted.
        #expect(ContentType.sniff(Self.ftyp(major: "isom", compatible: ["heic"], size: 16)) == nil)
        // Brands beyond sniffLength are not consulted either.
        let long = Self.ftyp(major: "isom", compatible: ["iso2", "iso3", "iso4", "iso5", "heic"])
        #expect(ContentType.sniff(long) == nil)
        // Malformed box sizes.
        #expect(ContentType.sniff(Self.ftyp(major: "heic", compatible: [], size: 8)) == nil)
        #expect(ContentType.sniff(Self.ftyp(major: "heic", compatible: [], size: 1)) == nil)
        #expect(ContentType.sniff(Self.ftyp(major: "heic", compatible: ["mif1"], size: 0)) == .heic)
    }

    @Test func namesAndExtensions() {
        #expect(ContentType.jpeg.fileExtension == "jpg")
        #expect(ContentType.jpeg.mimeType == "image/jpeg")
        #expect(ContentType.heic.fileExtension == "heic")
        #expect(ContentType.heif.mimeType == "image/heif")
        #expect(ContentType.webp.mimeType == "image/webp")
        #expect(ContentType.tiff.fileExtension == "tiff")
        for t in ContentType.allCases {
            #expect(t.mimeType.hasPrefix("image/"))
            #expect(ContentType.supportedFormatsList.contains(t.displayName))
            #expect(!t.fileExtension.hasPrefix("."))
        }
        let e = ContentType.unsupportedContentError("notes.txt")
        #expect(e.code == .unsupportedContent)
        #expect(e.message.contains("JPEG") && e.message.contains("notes.txt"))
    }
}
