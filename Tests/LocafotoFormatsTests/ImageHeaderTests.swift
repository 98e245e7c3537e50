import Foundation
import LocafotoFormats
import Testing

/// Whether a header decodes as its format (issue 42: a JPEG signature followed by a web page or
/// a program was stored as a photo). Real images, each also fed a byte at a time; then hostile
/// and truncated ones.
@Suite("Image headers")
struct ImageHeaderTests {
    static let photos = ContentTypeTests.fixtures.filter { $0.type != nil }.map(\.file)

    static func verdict(_ bytes: [UInt8], _ format: ContentType, byteAtATime: Bool = false) -> ImageHeaderCheck.Verdict
    {
        var check = ImageHeaderCheck(format: format)
        if byteAtATime {
            for b in bytes where check.verdict == .needMore { check.feed([b]) }
        } else {
            check.feed(bytes)
        }
        return check.verdictAtEnd
    }

    @Test("every real image decodes, whole or a byte at a time", arguments: photos)
    func realImages(_ file: String) throws {
        let bytes = try ContentTypeTests.fixture(file)
        let format = try #require(ContentType.sniff(bytes))
        #expect(Self.verdict(bytes, format) == .valid, "\(file)")
        #expect(Self.verdict(bytes, format, byteAtATime: true) == .valid, "\(file)")
    }

    @Test("a camera JPEG with EXIF and an iPhone-like HEIC decode")
    func cameraFiles() throws {
        let media = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("LocafotoMediaTests/Fixtures")
        for name in ["photo.jpg", "thumb.jpg", "photo.heic", "thumb320.heic", "photo.png", "photo.webp", "photo.tiff"] {
            let bytes = try [UInt8](Data(contentsOf: media.appendingPathComponent(name)))
            let format = try #require(ContentType.sniff(bytes))
            #expect(Self.verdict(bytes, format) == .valid, "\(name)")
        }
    }

    static let html = Array("<html><body><script>alert(1)</script></body></html>\n".utf8)
    static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 56)

    @Test("a signature followed by something else is not the format")
    func signaturesAlone() throws {
        let hostile: [(String, [UInt8], ContentType)] = [
            ("JPEG + HTML", [0xFF, 0xD8, 0xFF] + Self.html, .jpeg),
            ("JPEG + ELF", [0xFF, 0xD8, 0xFF] + Self.elf, .jpeg),
            (
                "JPEG APP0 + HTML", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF\0".utf8) + [0, 0] + Self.html,
                .jpeg
            ),
            ("JPEG scan before frame", [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02], .jpeg),
            ("JPEG ends", [0xFF, 0xD8, 0xFF, 0xD9], .jpeg),
            ("JPEG frame of 0 px", [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 8, 0, 0, 0, 0, 1, 1, 0x11, 0], .jpeg),
            ("PNG + HTML", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Self.html, .png),
            ("GIF + ELF", Array("GIF89a".utf8) + [0, 0, 0, 0] + Self.elf, .gif),
            ("WebP + HTML", Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8) + Self.html, .webp),
            (
                "HEIC + ELF",
                [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8) + Self.elf, .heic
            ),
            ("TIFF + HTML", [0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0, 0, 0] + Self.html, .tiff),
        ]
        for (what, bytes, format) in hostile {
            guard case .invalid(let why) = Self.verdict(bytes, format) else {
                Issue.record("\(what) passed")
                continue
            }
            #expect(!why.isEmpty, "\(what)")
        }
    }

    @Test("a PNG whose IHDR is altered fails its CRC; a HEIC without a picture handler fails")
    func damaged() throws {
        var png = try ContentTypeTests.fixture("sample.png")
        png[17] ^= 0x01  // the width
        #expect(Self.verdict(png, .png) == .invalid("IHDR's CRC is wrong"))
        var heic = try ContentTypeTests.fixture("sample.heic")
        let pict = Array("pict".utf8)
        let at = try #require((0..<heic.count - 4).first { Array(heic[$0..<$0 + 4]) == pict })
        heic.replaceSubrange(at..<at + 4, with: Array("vide".utf8))
        guard case .invalid = Self.verdict(heic, .heic) else {
            Issue.record("a HEIC whose handler is video passed")
            return
        }
    }

    @Test("every real image cut anywhere before its header ends is invalid at the end", arguments: photos)
    func truncated(_ file: String) throws {
        let bytes = try ContentTypeTests.fixture(file)
        let format = try #require(ContentType.sniff(bytes))
        var whole = ImageHeaderCheck(format: format)
        whole.feed(bytes)
        let headerEnd = whole.offset  // where the verdict was reached
        for cut in 0..<headerEnd {
            var check = ImageHeaderCheck(format: format)
            check.feed(Array(bytes[0..<cut]))
            #expect(check.verdict == .needMore, "\(file) cut at \(cut)")
            guard case .invalid = check.verdictAtEnd else {
                Issue.record("\(file) cut at \(cut) passed")
                return
            }
        }
    }

    @Test("a JPEG of segments that never reach a frame stops at the limit, holding nothing")
    func endlessSegments() {
        var check = ImageHeaderCheck(format: .jpeg)
        check.feed([0xFF, 0xD8])
        let segment: [UInt8] = [0xFF, 0xE1, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 0xFFFD)
        var fed = 2
        while check.verdict == .needMore, fed < 2 * ImageHeaderCheck.maxHeaderBytes {
            check.feed(segment)
            fed += segment.count
        }
        #expect(check.verdict != .needMore && check.verdict != .valid)
        #expect(fed <= ImageHeaderCheck.maxHeaderBytes + segment.count * 2)
    }
}
