import LocafotoErrors

/// Removing the GPS position from a photo without touching its pixels. See
/// `Media.strippingLocation(from:type:)` for the per-format behaviour.
enum LocationStripping {
    static func damaged(_ what: String, _ detail: String) -> MediaError {
        MediaError(.undecodable, "cannot remove the location: the \(what) structure is damaged (\(detail))")
    }

    // MARK: JPEG

    private static let xmpStandard = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    private static let xmpExtended = Array("http://ns.adobe.com/xmp/extension/".utf8) + [0]

    /// Rewrites each APP1 "Exif" segment without its GPS IFD (libexif) and drops APP1 XMP
    /// segments that name a GPS position; every other byte, from SOS on in particular (the
    /// entropy-coded image data), is copied unchanged.
    static func jpeg(_ b: [UInt8]) throws -> [UInt8] {
        let r = ByteReader(b)
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { throw damaged("JPEG", "no SOI marker") }
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(b.count)
        var i = 2
        while true {
            guard i < b.count else { throw damaged("JPEG", "it ends before the image data (truncated)") }
            guard b[i] == 0xFF else { throw damaged("JPEG", "no marker at offset \(i)") }
            var j = i
            while j < b.count && b[j] == 0xFF { j += 1 }  // fill bytes
            guard j < b.count else { throw damaged("JPEG", "it ends inside a marker (truncated)") }
            let m = b[j]
            if m == 0xD8 || m == 0x01 || (0xD0...0xD7).contains(m) {  // markers without a length
                out += b[i...j]
                i = j + 1
                continue
            }
            if m == 0xDA || m == 0xD9 {  // SOS: the rest is image data (and whatever follows EOI)
                out += b[i...]
                return out
            }
            guard let len = r.be16(j + 1), len >= 2, j + 1 + len <= b.count else {
                throw damaged("JPEG", "segment 0x\(String(m, radix: 16)) at offset \(i) runs past the end (truncated)")
            }
            let end = j + 1 + len
            let payload = b[(j + 3)..<end]
            if m == 0xE1 && EXIF.hasPrefix(payload) {
                if let block = try EXIF.removingGPS(from: Array(payload)) {
                    guard block.count + 2 <= 0xFFFF else {
                        throw MediaError(.internal, "the rewritten EXIF block is too large for a JPEG segment")
                    }
                    out += [0xFF, 0xE1] + Bytes.be16(block.count + 2) + block
                } else {
                    out += b[i..<end]
                }
            } else if m == 0xE1 && (payload.starts(with: xmpStandard) || payload.starts(with: xmpExtended))
                && Bytes.mentionsGPS(payload)
            {
                // XMP repeating the position (exif:GPSLatitude/GPSLongitude): dropped whole.
            } else {
                out += b[i..<end]
            }
            i = end
        }
    }

    // MARK: PNG

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Rewrites the eXIf chunk without its GPS IFD (new CRC); drops text chunks holding a
    /// legacy EXIF copy ("Raw profile type exif"/"APP1", ImageMagick) and XMP text chunks that
    /// name a position or are compressed (not inspected). Other chunks are copied unchanged.
    static func png(_ b: [UInt8]) throws -> [UInt8] {
        let r = ByteReader(b)
        guard b.starts(with: pngSignature) else { throw damaged("PNG", "no signature") }
        var out = pngSignature
        out.reserveCapacity(b.count)
        var i = 8
        while true {
            guard let len = r.be32(i), let type = r.fourCC(i + 4), r.has(i + 8, len + 4) else {
                throw damaged("PNG", "chunk at offset \(i) runs past the end (truncated)")
            }
            let data = b[(i + 8)..<(i + 8 + len)]
            let end = i + 12 + len
            switch type {
            case "eXIf":
                if let block = try EXIF.removingGPS(from: Array(data)) {
                    out += Bytes.be32(block.count)
                    let body = Array("eXIf".utf8) + block
                    out += body + Bytes.be32(Int(Bytes.crc32(body)))
                } else {
                    out += b[i..<end]
                }
            case "tEXt", "zTXt", "iTXt":
                let keyword = String(decoding: data.prefix(while: { $0 != 0 }), as: UTF8.self)
                if keyword == "Raw profile type exif" || keyword == "Raw profile type APP1" {
                    break  // a legacy hex copy of the EXIF block: dropped
                } else if keyword == "XML:com.adobe.xmp" {
                    let compressed =
                        type == "zTXt"
                        || (type == "iTXt" && data.count > keyword.utf8.count + 1
                            && data[data.startIndex + keyword.utf8.count + 1] != 0)
                    if compressed || Bytes.mentionsGPS(data) { break }  // dropped
                    out += b[i..<end]
                } else {
                    out += b[i..<end]
                }
            default:
                out += b[i..<end]
            }
            i = end
            if type == "IEND" {
                out += b[i...]
                return out
            }
        }
    }

    // MARK: WebP

    /// Rewrites the EXIF chunk without its GPS IFD, drops an "XMP " chunk naming a position
    /// (clearing the VP8X XMP flag), pads chunks to even sizes and fixes the RIFF size. The
    /// image chunks (VP8/VP8L/ALPH/ANMF) are copied unchanged.
    static func webp(_ b: [UInt8]) throws -> [UInt8] {
        let r = ByteReader(b)
        guard r.fourCC(0) == "RIFF", r.fourCC(8) == "WEBP", let riff = r.le32(4) else {
            throw damaged("WebP", "no RIFF/WEBP header")
        }
        guard riff >= 4, riff <= b.count - 8 else {
            throw damaged("WebP", "the RIFF size exceeds the file (truncated)")
        }
        let riffEnd = 8 + riff
        var chunks: [UInt8] = []
        chunks.reserveCapacity(riff)
        var vp8xFlagsAt: Int?  // offset of the flags byte in `chunks`
        var droppedXMP = false
        var i = 12
        while i < riffEnd {
            guard let type = r.fourCC(i), let len = r.le32(i + 4), i + 8 + len <= riffEnd else {
                throw damaged("WebP", "chunk at offset \(i) runs past the RIFF end (truncated)")
            }
            let data = b[(i + 8)..<(i + 8 + len)]
            let next = min(i + 8 + len + (len & 1), riffEnd)
            switch type {
            case "EXIF":
                if let block = try EXIF.removingGPS(from: Array(data)) {
                    chunks += Array("EXIF".utf8) + Bytes.le32(block.count) + block
                    if block.count & 1 == 1 { chunks.append(0) }
                } else {
                    chunks += b[i..<(i + 8 + len)]
                    if len & 1 == 1 { chunks.append(0) }
                }
            case "XMP " where Bytes.mentionsGPS(data):
                droppedXMP = true
            default:
                if type == "VP8X" && len >= 1 { vp8xFlagsAt = chunks.count + 8 }
                chunks += b[i..<(i + 8 + len)]
                if len & 1 == 1 { chunks.append(0) }
            }
            i = next
        }
        if droppedXMP, let f = vp8xFlagsAt { chunks[f] &= ~0x04 }
        return Array("RIFF".utf8) + Bytes.le32(chunks.count + 4) + Array("WEBP".utf8) + chunks + b[riffEnd...]
    }

    // MARK: HEIF (HEIC, HEIF, AVIF)

    /// HEIF keeps EXIF in an "Exif" item whose position is listed in the `iloc` box. Rather than
    /// re-encoding (lossy, slow) or moving items (every offset in `iloc` would change), the GPS
    /// IFD is neutralised IN PLACE: its entry count set to 0 and its entries and values zeroed.
    /// The file keeps its size and every byte outside the GPS data. XMP items naming a position
    /// are refused (they cannot be shrunk in place).
    static func heif(_ b: [UInt8]) throws -> [UInt8] {
        var out = b
        let items = try ISOBMFF.metadataItems(b)
        for item in items where item.kind == .xmp {
            if Bytes.mentionsGPS(b[item.range]) {
                throw MediaError(
                    .unsupported,
                    "this HEIF file repeats the location in an XMP item, which cannot be removed in place; convert it to JPEG first (compress with stripLocation)"
                )
            }
        }
        for item in items where item.kind == .exif {
            let r = ByteReader(b, range: item.range)
            guard let skip = r.be32(item.range.lowerBound), skip <= item.range.count - 4 else {
                throw damaged("HEIF Exif item", "bad TIFF header offset")
            }
            let tiff = (item.range.lowerBound + 4 + skip)..<item.range.upperBound
            guard EXIF.isTIFF(b[tiff]) else { throw damaged("HEIF Exif item", "no TIFF header") }
            try TIFFGPS.wipe(&out, tiff: tiff)
        }
        return out
    }

    // MARK: TIFF

    /// A TIFF file is itself a TIFF structure: its GPS IFD is neutralised in place as for HEIF.
    static func tiff(_ b: [UInt8]) throws -> [UInt8] {
        var out = b
        try TIFFGPS.wipe(&out, tiff: b.indices)
        return out
    }
}

/// In-place removal of the GPS IFD of a TIFF structure (EXIF block or TIFF file).
enum TIFFGPS {
    /// Sets the GPS IFD's entry count to 0 and zeroes its entries, its next-IFD link and the
    /// out-of-line values they point to; the IFD0 GPSInfo pointer stays, pointing at an empty
    /// IFD (valid TIFF). Every GPS IFD that IFD0 links to is wiped (a file with more than 4 is
    /// refused). Returns false when there is no GPS IFD. Nothing outside `tiff` is read
    /// or written; inconsistent offsets are skipped (never a crash), then the result is
    /// checked with libexif: GPS must be gone.
    @discardableResult
    static func wipe(_ b: inout [UInt8], tiff: Range<Int>) throws -> Bool {
        let base = tiff.lowerBound
        let r = ByteReader(b, range: tiff)
        let little: Bool
        switch (r.u8(base), r.u8(base + 1)) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: throw LocationStripping.damaged("TIFF", "no byte-order mark")
        }
        func u16(_ o: Int) -> Int? {  // o relative to base
            guard r.has(base + o, 2), o >= 0 else { return nil }
            let a = Int(b[base + o])
            let c = Int(b[base + o + 1])
            return little ? a | c << 8 : a << 8 | c
        }
        func u32(_ o: Int) -> Int? {
            guard let lo = u16(little ? o : o + 2), let hi = u16(little ? o + 2 : o) else { return nil }
            return hi << 16 | lo
        }
        func zero(_ o: Int, _ n: Int) {
            let lo = max(base + o, base)
            let hi = min(base + o + n, tiff.upperBound)
            if lo < hi { for k in lo..<hi { b[k] = 0 } }
        }
        guard let ifd0 = u32(4), u16(ifd0) != nil else { throw LocationStripping.damaged("TIFF", "no IFD0") }
        // Every GPSInfo entry counts: with several, readers differ in which one they follow.
        func gpsIFDs() -> [Int] {
            var out: [Int] = []
            for k in 0..<(u16(ifd0) ?? 0) {
                let e = ifd0 + 2 + 12 * k
                guard let tag = u16(e) else { break }
                if tag == 0x8825, let off = u32(e + 8), off >= 8, !out.contains(off) { out.append(off) }
            }
            return out
        }
        let sizes: [Int: Int] = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4]
        var wiped: [Int] = []
        // Zeroing may change IFD0 itself (structures can overlap) and so what its GPSInfo entries
        // point to: repeat until every pointer leads to a wiped IFD.
        for _ in 0..<4 {
            let fresh = gpsIFDs().filter { !wiped.contains($0) }
            if fresh.isEmpty { break }
            wiped += fresh
            guard wiped.count <= 4 else {
                throw MediaError(
                    .unsupported,
                    "this TIFF structure has more than 4 GPSInfo entries, which is not supported for location removal")
            }
            // What to zero, read before anything changes (GPS IFDs may overlap).
            var spans: [(offset: Int, count: Int)] = []
            for gps in fresh {
                guard let count = u16(gps) else { continue }
                for k in 0..<count {
                    let e = gps + 2 + 12 * k
                    guard let type = u16(e + 2), let n = u32(e + 4), let off = u32(e + 8) else { break }
                    let size = (sizes[type] ?? 1) * n
                    if size > 4 && off >= 8 && size <= tiff.count { spans.append((off, size)) }
                }
                spans.append((gps, 2 + 12 * count + 4))  // count 0, entries gone, next-IFD link 0
            }
            // Each byte once: spans may overlap, and a hostile file can make them cover it many times.
            var done = 0  // everything below this offset is zeroed
            for span in spans.sorted(by: { $0.offset < $1.offset }) {
                let start = max(span.offset, done)
                let stop = span.offset + span.count
                if stop > start { zero(start, stop - start) }
                done = max(done, stop)
            }
        }
        guard gpsIFDs().allSatisfy({ wiped.contains($0) }) else {
            throw MediaError(
                .unsupported,
                "this TIFF structure keeps linking new GPS IFDs as it is edited, which is not supported for location removal"
            )
        }
        guard !wiped.isEmpty else {
            // No GPS IFD linked from IFD0, where it belongs; libexif also follows other links
            // (e.g. a GPS pointer in IFD1). Whatever it finds must not be returned as stripped.
            guard !EXIF.fields(of: Array(b[tiff])).hasGPSIFD else {
                throw MediaError(
                    .unsupported,
                    "this TIFF structure links its GPS IFD from somewhere other than IFD0, which is not supported for location removal"
                )
            }
            return false
        }
        guard !EXIF.fields(of: Array(b[tiff])).hasGPSIFD else {
            throw MediaError(.internal, "the GPS IFD is still readable after removal")
        }
        return true
    }
}

/// Just enough ISO-BMFF (ISO/IEC 14496-12) / HEIF (23008-12) to locate metadata items.
enum ISOBMFF {
    enum Kind { case exif, xmp }
    struct Item {
        var kind: Kind
        var range: Range<Int>  // absolute offsets of the item's data in the file
    }

    private struct Box {
        var type: String
        var start: Int  // of the header
        var body: Int  // first byte after the header
        var end: Int
    }

    private static func boxes(_ r: ByteReader, in range: Range<Int>) throws -> [Box] {
        var out: [Box] = []
        var i = range.lowerBound
        while i + 8 <= range.upperBound {
            guard let size32 = r.be32(i), let type = r.fourCC(i + 4) else { break }
            var body = i + 8
            var end: Int
            switch size32 {
            case 0: end = range.upperBound
            case 1:
                guard let s = r.be64(i + 8), s >= 16, s <= UInt64(range.upperBound - i) else {
                    throw LocationStripping.damaged("HEIF", "box \(type) has a bad size")
                }
                body = i + 16
                end = i + Int(s)
            default:
                guard size32 >= 8, size32 <= range.upperBound - i else {
                    throw LocationStripping.damaged(
                        "HEIF", "box \(type) at offset \(i) runs past its parent (truncated)")
                }
                end = i + size32
            }
            out.append(Box(type: type, start: i, body: body, end: end))
            i = end
        }
        return out
    }

    static func metadataItems(_ b: [UInt8]) throws -> [Item] {
        let r = ByteReader(b)
        guard let meta = try boxes(r, in: b.indices).first(where: { $0.type == "meta" }) else { return [] }
        guard meta.body + 4 <= meta.end else { throw LocationStripping.damaged("HEIF", "meta box too small") }
        let children = try boxes(r, in: (meta.body + 4)..<meta.end)  // meta is a FullBox
        var kinds: [Int: Kind] = [:]
        if let iinf = children.first(where: { $0.type == "iinf" }), let v = r.u8(iinf.body) {
            let first = iinf.body + 4 + (v == 0 ? 2 : 4)
            for infe in try boxes(r, in: min(first, iinf.end)..<iinf.end) where infe.type == "infe" {
                let ir = ByteReader(b, range: infe.body..<infe.end)  // fields of this box only
                guard let iv = ir.u8(infe.body), iv >= 2 else { continue }
                let idSize = iv == 2 ? 2 : 4
                let idAt = infe.body + 4
                guard let id = idSize == 2 ? ir.be16(idAt) : ir.be32(idAt), let type = ir.fourCC(idAt + idSize + 2)
                else { continue }
                if type == "Exif" {
                    kinds[id] = .exif
                } else if type == "mime" {
                    // item_name\0 content_type\0 ...
                    let strings = b[(idAt + idSize + 6)..<infe.end].split(
                        separator: 0, omittingEmptySubsequences: false)
                    if strings.count >= 2, String(decoding: strings[1], as: UTF8.self) == "application/rdf+xml" {
                        kinds[id] = .xmp
                    }
                }
            }
        }
        guard !kinds.isEmpty else { return [] }
        guard let iloc = children.first(where: { $0.type == "iloc" }), let v = r.u8(iloc.body), v <= 2,
            let sizes1 = r.u8(iloc.body + 4), let sizes2 = r.u8(iloc.body + 5)
        else { throw LocationStripping.damaged("HEIF", "metadata items but no usable iloc box") }
        let idat = children.first(where: { $0.type == "idat" })
        let offsetSize = sizes1 >> 4
        let lengthSize = sizes1 & 15
        let baseSize = sizes2 >> 4
        let indexSize = v >= 1 ? sizes2 & 15 : 0
        var p = iloc.body + 6
        guard let count = v < 2 ? r.be16(p) : r.be32(p) else { throw LocationStripping.damaged("HEIF", "iloc") }
        p += v < 2 ? 2 : 4
        var items: [Item] = []
        for _ in 0..<count {
            guard let id = v < 2 ? r.be16(p) : r.be32(p) else { throw LocationStripping.damaged("HEIF", "iloc entry") }
            p += v < 2 ? 2 : 4
            var method = 0
            if v >= 1 {
                guard let m = r.be16(p) else { throw LocationStripping.damaged("HEIF", "iloc entry") }
                method = m & 15
                p += 2
            }
            p += 2  // data_reference_index
            guard let baseOffset = r.beN(p, baseSize), let extents = r.be16(p + baseSize) else {
                throw LocationStripping.damaged("HEIF", "iloc entry")
            }
            p += baseSize + 2
            var spans: [(Int, Int)] = []
            for _ in 0..<extents {
                p += indexSize
                guard let off = r.beN(p, offsetSize), let len = r.beN(p + offsetSize, lengthSize) else {
                    throw LocationStripping.damaged("HEIF", "iloc extent")
                }
                p += offsetSize + lengthSize
                spans.append((off, len))
            }
            guard p <= iloc.end else { throw LocationStripping.damaged("HEIF", "iloc runs past its box") }
            guard let kind = kinds[id] else { continue }
            guard spans.count == 1 else {
                throw MediaError(
                    .unsupported,
                    "this HEIF file stores a metadata item in \(spans.count) pieces, which is not supported for location removal"
                )
            }
            let container: Range<Int>
            switch method {
            case 0: container = b.indices
            case 1:
                guard let idat else { throw LocationStripping.damaged("HEIF", "item in idat but no idat box") }
                container = idat.body..<idat.end
            default:
                throw MediaError(
                    .unsupported,
                    "this HEIF file builds a metadata item by reference, which is not supported for location removal")
            }
            let (off, len) = spans[0]
            let (start, ovf) = container.lowerBound.addingReportingOverflow(baseOffset &+ off)
            guard !ovf, baseOffset >= 0, off >= 0, start >= container.lowerBound, start <= container.upperBound else {
                throw LocationStripping.damaged("HEIF", "metadata item outside the file")
            }
            let end = len == 0 ? container.upperBound : start + len
            guard end >= start, end <= container.upperBound else {
                throw LocationStripping.damaged("HEIF", "metadata item runs past the end (truncated)")
            }
            items.append(Item(kind: kind, range: start..<end))
        }
        return items
    }
}
