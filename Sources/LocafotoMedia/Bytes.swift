import Foundation

/// Bounds-checked big/little-endian reads and the small byte utilities the container editors use.
struct ByteReader {
    let bytes: [UInt8]
    let range: Range<Int>  // reads are confined to this range (absolute offsets)

    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.range = range ?? bytes.indices
    }

    func has(_ offset: Int, _ count: Int) -> Bool {
        offset >= range.lowerBound && count >= 0 && offset <= range.upperBound - count
    }

    func u8(_ o: Int) -> Int? { has(o, 1) ? Int(bytes[o]) : nil }
    func be16(_ o: Int) -> Int? { has(o, 2) ? Int(bytes[o]) << 8 | Int(bytes[o + 1]) : nil }
    func be32(_ o: Int) -> Int? {
        has(o, 4) ? Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3]) : nil
    }
    func be64(_ o: Int) -> UInt64? {
        guard let hi = be32(o), let lo = be32(o + 4) else { return nil }
        return UInt64(hi) << 32 | UInt64(lo)
    }
    func le32(_ o: Int) -> Int? {
        has(o, 4) ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 : nil
    }
    /// An unsigned big-endian integer of 0, 4 or 8 bytes (ISO-BMFF iloc fields).
    func beN(_ o: Int, _ n: Int) -> Int? {
        switch n {
        case 0: return 0
        case 4: return be32(o)
        case 8: return be64(o).flatMap { $0 <= UInt64(Int.max) ? Int($0) : nil }
        default: return nil
        }
    }
    func fourCC(_ o: Int) -> String? {
        has(o, 4) ? String(decoding: bytes[o..<o + 4], as: UTF8.self) : nil
    }
}

enum Bytes {
    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
    static func le32(_ v: Int) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
    }

    /// Whether `needle` occurs in `hay` (contiguous storage scanned with memchr for the first byte).
    static func contains(_ hay: some Collection<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return false }
        func search(_ h: UnsafeRawBufferPointer) -> Bool {
            guard let hb = h.baseAddress, h.count >= needle.count else { return false }
            let last = h.count - needle.count
            var i = 0
            while i <= last {
                guard let hit = memchr(hb + i, Int32(needle[0]), last - i + 1) else { return false }
                i = hb.distance(to: UnsafeRawPointer(hit))
                if memcmp(hb + i, needle, needle.count) == 0 { return true }
                i += 1
            }
            return false
        }
        if let r = hay.withContiguousStorageIfAvailable({ search(UnsafeRawBufferPointer($0)) }) { return r }
        return Array(hay).withUnsafeBytes(search)
    }

    private static let gpsNames = [Array("GPSLatitude".utf8), Array("GPSLongitude".utf8)]

    /// Whether text metadata (XMP: exif:GPSLatitude, exif:GPSLongitude) names a position.
    static func mentionsGPS(_ b: some Collection<UInt8>) -> Bool {
        gpsNames.contains { contains(b, $0) }
    }

    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// CRC-32 (ISO 3309 / PNG).
    static func crc32(_ data: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
