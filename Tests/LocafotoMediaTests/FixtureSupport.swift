import Foundation
import LocafotoFormats
import Testing

@testable import LocafotoMedia

/// The real photos made by scripts/make-media-fixtures.py.
enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        let url = try #require(
            Bundle.module.url(forResource: parts[0], withExtension: parts[1], subdirectory: "Fixtures"),
            "fixture \(name) missing: run scripts/make-media-fixtures.py")
        return try Array(Data(contentsOf: url))
    }
}

/// Structure helpers, independent of the code under test.
enum Structure {
    /// JPEG segments before the scan: (marker, whole segment range incl. FF xx), and where SOS starts.
    static func jpegSegments(_ b: [UInt8]) -> (segments: [(marker: UInt8, range: Range<Int>)], sos: Int?) {
        var out: [(UInt8, Range<Int>)] = []
        var i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let m = b[i + 1]
            if m == 0xDA { return (out, i) }
            let len = Int(b[i + 2]) << 8 | Int(b[i + 3])
            out.append((m, i..<(i + 2 + len)))
            i += 2 + len
        }
        return (out, nil)
    }

    static func exifAPP1(_ b: [UInt8]) -> Range<Int>? {
        jpegSegments(b).segments.first {
            $0.marker == 0xE1 && b[$0.range].dropFirst(4).starts(with: Array("Exif".utf8))
        }?.range
    }

    struct PNGChunk: Equatable {
        var type: String
        var data: [UInt8]
        var crc: UInt32
    }

    static func pngChunks(_ b: [UInt8]) -> [PNGChunk] {
        var out: [PNGChunk] = []
        var i = 8
        while i + 12 <= b.count {
            let len = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard i + 12 + len <= b.count else { break }
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            let crc = b[(i + 8 + len)..<(i + 12 + len)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            out.append(PNGChunk(type: type, data: Array(b[(i + 8)..<(i + 8 + len)]), crc: crc))
            i += 12 + len
        }
        return out
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in data {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    static func le32(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24
    }

    /// WebP chunks (fourcc, payload).
    static func webpChunks(_ b: [UInt8]) -> [(type: String, data: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var i = 12
        while i + 8 <= b.count {
            let type = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let len = le32(b, i + 4)
            guard i + 8 + len <= b.count else { break }
            out.append((type, Array(b[(i + 8)..<(i + 8 + len)])))
            i += 8 + len + (len & 1)
        }
        return out
    }

    /// Replaces width/height in the first SOF0/SOF2 segment (a lying header).
    static func jpegClaiming(width: Int, height: Int, from b: [UInt8]) -> [UInt8] {
        var out = b
        guard let sof = jpegSegments(b).segments.first(where: { $0.marker == 0xC0 || $0.marker == 0xC2 }) else {
            return out
        }
        let p = sof.range.lowerBound + 5  // FF C0, length(2), precision(1)
        out[p] = UInt8(height >> 8)
        out[p + 1] = UInt8(height & 0xFF)
        out[p + 2] = UInt8(width >> 8)
        out[p + 3] = UInt8(width & 0xFF)
        return out
    }
}

/// Deterministic bytes for hostile-input tests (xorshift64*).
struct Xorshift {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: next() >> 32) } }
}

extension Array where Element == UInt8 {
    func metadata(_ type: ContentType) throws -> PhotoMetadata {
        try withUnsafeBytes { try Media.metadata(of: $0, type: type) }
    }
    func thumbnail(maxSide: Int = 320, quality: Int = 80) throws -> [UInt8] {
        try withUnsafeBytes { try Media.thumbnail(of: $0, maxSide: maxSide, quality: quality) }
    }
    func compressed(_ type: ContentType, _ options: CompressionOptions = CompressionOptions()) throws -> [UInt8] {
        try withUnsafeBytes { try Media.compress($0, type: type, options: options) }
    }
}

/// The EXIF written by the fixture script.
enum Expected {
    static let make = "Locafoto"
    static let model = "TestCam 1"
    static let date = Date(timeIntervalSince1970: 1_714_557_600)  // 2024-05-01T10:00:00Z

    /// What the fixtures' camera EXIF says, for a photo of this size.
    static func camera(width: Int, height: Int, orientation: Int, hasLocation: Bool) -> PhotoMetadata {
        PhotoMetadata(
            width: width, height: height, orientation: orientation, captureDate: date, cameraMake: make,
            cameraModel: model, hasLocation: hasLocation)
    }
}
