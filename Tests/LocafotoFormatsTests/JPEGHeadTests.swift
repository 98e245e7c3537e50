import Foundation
import Testing

@testable import LocafotoFormats

/// The marker walk from SOI to the start of scan, on a real photo and on truncated and hostile
/// heads: it ends where the scan header ends, or says why it cannot.
@Suite struct JPEGHeadTests {
    static func sample() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "sample", withExtension: "jpg", subdirectory: "Fixtures"))
        return [UInt8](try Data(contentsOf: url))
    }

    /// The SOS segment's end, found independently: the first FF DA and its length.
    static func scanHeaderEnd(_ b: [UInt8]) -> Int {
        var i = 2
        while !(b[i] == 0xFF && b[i + 1] == 0xDA) { i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3])) }
        return i + 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
    }

    @Test func headOfARealPhotoEndsAtItsScanHeader() throws {
        let photo = try Self.sample()
        let end = Self.scanHeaderEnd(photo)
        #expect(JPEGHead.headerLength(of: photo) == end)
        #expect(JPEGHead.headerLength(of: Array(photo[..<end])) == end, "the head alone is enough")
        var markers: [UInt8] = []
        #expect(
            JPEGHead.walk(photo) { m, _ in
                markers.append(m)
                return true
            } == .scan(headerLength: end))
        #expect(markers.first == 0xE0 || markers.first == 0xE1)
        #expect(markers.last == 0xDA)
        #expect(markers.contains(0xC0) || markers.contains(0xC2))
    }

    @Test func everyTruncationIsTruncated() throws {
        let photo = try Self.sample()
        let end = Self.scanHeaderEnd(photo)
        for n in 0..<end {
            let r = JPEGHead.walk(Array(photo[..<n])) { _, _ in true }
            #expect(r == .truncated, "cut at \(n): \(r)")
        }
    }

    @Test func visitorStops() throws {
        var seen = 0
        #expect(
            JPEGHead.walk(try Self.sample()) { _, _ in
                seen += 1
                return false
            } == .stopped)
        #expect(seen == 1)
    }

    @Test(
        arguments: [
            ([0x89, 0x50, 0x4E, 0x47], "not SOI"),
            ([0xFF, 0xD8, 0x00, 0xFF, 0xE0, 0x00, 0x02], "a byte where a marker belongs"),
            ([0xFF, 0xD8, 0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02], "SOI again"),
            ([0xFF, 0xD8, 0xFF, 0xD9], "EOI before the scan"),
            ([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01, 0xFF, 0xDA, 0x00, 0x02], "a length below 2"),
            ([0xFF, 0xD8, 0xFF, 0x00, 0x00, 0x02], "a stuffed zero as a marker"),
        ] as [([UInt8], String)])
    func hostileHeadsAreMalformed(bytes: [UInt8], why: String) {
        #expect(JPEGHead.walk(bytes) { _, _ in true } == .malformed, "\(why)")
        #expect(JPEGHead.headerLength(of: bytes) == nil)
    }

    @Test func fillBytesAndMarkersWithoutLengthAreSkipped() {
        // SOI, fill, RST0, TEM, APP0 (length 4), SOS (length 2).
        let b: [UInt8] = [
            0xFF, 0xD8, 0xFF, 0xFF, 0xFF, 0xD0, 0xFF, 0x01, 0xFF, 0xE0, 0x00, 0x04, 0xAA, 0xBB, 0xFF, 0xDA, 0x00, 0x02,
            0x12,
        ]
        var seen: [(UInt8, [UInt8])] = []
        #expect(
            JPEGHead.walk(b) { m, p in
                seen.append((m, Array(b[p])))
                return true
            } == .scan(headerLength: 18))
        #expect(seen.map(\.0) == [0xE0, 0xDA])
        #expect(seen[0].1 == [0xAA, 0xBB])
        #expect(seen[1].1.isEmpty)
    }

    @Test func segmentRunningPastTheEndIsTruncatedNotRead() {
        // APP1 claims 65535 bytes of a 10-byte input.
        let b: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 1, 2, 3, 4]
        var visited = false
        #expect(
            JPEGHead.walk(b) { _, _ in
                visited = true
                return true
            } == .truncated)
        #expect(!visited)
    }
}
