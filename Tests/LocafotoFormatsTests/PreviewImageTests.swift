import LocafotoErrors
import LocafotoFormats
import Testing

@Suite("Preview JPEG checks")
struct PreviewImageTests {
    /// A structurally complete JPEG (no decodable pixels needed: the check reads markers only).
    static func jpeg(
        width: Int = 120, height: Int = 90, sof: UInt8 = 0xC0, extra: [UInt8] = [], afterFrame: [UInt8] = [],
        scan: Int = 40
    ) -> [UInt8] {
        var b: [UInt8] = [0xFF, 0xD8]
        b += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]  // APP0
        b += extra
        b += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)  // DQT
        b += [
            0xFF, sof, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8),
            UInt8(width & 0xFF), 0x01, 0x01, 0x11, 0x00,
        ]
        b += afterFrame
        b += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00] + [UInt8](repeating: 0x55, count: scan)
        b += [0xFF, 0xD9]
        return b
    }

    static func code(_ bytes: [UInt8]) -> String {
        do {
            _ = try PreviewImage.validate(bytes)
            return "ok"
        } catch let e as FormatError {
            return e.code.description
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test func baselineAndProgressiveJPEGsPass() throws {
        #expect(try PreviewImage.validate(Self.jpeg()) == .init(width: 120, height: 90))
        #expect(try PreviewImage.validate(Self.jpeg(width: 160, height: 1, sof: 0xC2)) == .init(width: 160, height: 1))
        #expect(try PreviewImage.validate(Self.jpeg(width: 7, height: 160, sof: 0xC1)) == .init(width: 7, height: 160))
        // Fill bytes before a marker are allowed.
        var filled = Self.jpeg()
        filled.insert(contentsOf: [0xFF, 0xFF], at: 2)
        #expect(Self.code(filled) == "ok")
    }

    @Test func hugeOrEmptyDimensionsAreRefused() {
        #expect(Self.code(Self.jpeg(width: 161, height: 10)) == "tooLarge")
        #expect(Self.code(Self.jpeg(width: 10, height: 161)) == "tooLarge")
        #expect(Self.code(Self.jpeg(width: 65535, height: 65535)) == "tooLarge")
        #expect(Self.code(Self.jpeg(width: 0, height: 10)) == "tooLarge")
    }

    @Test func tooManyBytesAreRefusedBeforeParsing() {
        #expect(Self.code(Self.jpeg(scan: PreviewImage.maxBytes)) == "tooLarge")
        let exact = Self.jpeg(scan: PreviewImage.maxBytes - Self.jpeg(scan: 0).count)
        #expect(exact.count == PreviewImage.maxBytes)
        #expect(Self.code(exact) == "ok")
    }

    @Test func otherContentIsRefused() {
        #expect(Self.code([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xD9]) == "unsupportedContent")
        #expect(Self.code([]) == "truncated")
        #expect(Self.code([0xFF, 0xD8, 0xFF, 0xD9]) == "malformed")  // EOI where a frame must be
        #expect(Self.code(Self.jpeg(sof: 0xC3)) == "unsupportedContent")  // lossless
        #expect(Self.code(Self.jpeg(sof: 0xC9)) == "unsupportedContent")  // arithmetic
    }

    @Test func metadataSegmentsAreRefused() {
        let exif: [UInt8] = [0xFF, 0xE1, 0x00, 0x0A] + Array("Exif".utf8) + [0, 0, 0, 0]
        #expect(Self.code(Self.jpeg(extra: exif)) == "malformed")
        // After the frame header too: a decoder reads every segment before the scan.
        #expect(Self.code(Self.jpeg(afterFrame: exif)) == "malformed")
        let icc: [UInt8] = [0xFF, 0xE2, 0x00, 0x10] + Array("ICC_PROFILE".utf8) + [0, 1, 1]
        #expect(Self.code(Self.jpeg(afterFrame: icc)) == "malformed")
        let iptc: [UInt8] = [0xFF, 0xED, 0x00, 0x04, 0x00, 0x00]
        #expect(Self.code(Self.jpeg(extra: iptc)) == "malformed")
        // A comment is not metadata a decoder acts on: allowed, before or after the frame.
        let comment: [UInt8] = [0xFF, 0xFE, 0x00, 0x05] + Array("hi!".utf8)
        #expect(Self.code(Self.jpeg(afterFrame: comment)) == "ok")
    }

    @Test func oneFrameOfOneOrThreeComponents() {
        // 4096 x 4096
        let second: [UInt8] = [0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x10, 0x00, 0x10, 0x00, 0x01, 0x01, 0x11, 0x00]
        #expect(Self.code(Self.jpeg(afterFrame: second)) == "malformed")
        var two = Self.jpeg()
        let sof = two.indices.first { two[$0] == 0xFF && two[$0 + 1] == 0xC0 }!
        two[sof + 9] = 2  // two components in a header sized for one
        #expect(Self.code(two) == "malformed")
        var noFrame = Self.jpeg()
        noFrame.removeSubrange(sof..<(sof + 13))
        #expect(Self.code(noFrame) == "malformed", "a scan before any frame header")
    }

    @Test func everyTruncationIsRefused() {
        let whole = Self.jpeg()
        for n in 0..<whole.count {
            #expect(Self.code(Array(whole.prefix(n))) != "ok", "prefix of \(n) bytes passed")
        }
    }

    @Test func segmentLengthsCannotRunPastTheEnd() {
        var b = Self.jpeg()
        b[4] = 0xFF  // APP0 claims 65,280+ bytes
        #expect(Self.code(b) == "truncated")
        var short = Self.jpeg()
        short[5] = 0x01  // APP0 length 1: less than its own length field
        #expect(Self.code(short) == "truncated")
    }

    @Test func corruptedBytesNeverCrash() {
        let whole = Self.jpeg()
        for i in whole.indices {
            for v: UInt8 in [0x00, 0xFF, 0xC0, 0xD9, 0xE1] {
                var b = whole
                b[i] = v
                let outcome = Self.code(b)
                #expect(!outcome.hasPrefix("unexpected"), "byte \(i) = \(v): \(outcome)")
            }
        }
    }
}
