import CExif
import Foundation
import LocafotoErrors

/// EXIF blocks through libexif: reading the few fields Locafoto shows, and rewriting a block
/// without its GPS IFD.
///
/// Blocks are accepted with or without the "Exif\0\0" prefix (JPEG APP1 and libvips include
/// it; PNG eXIf and usually WebP EXIF do not). libexif is used with its "fix the data to follow
/// the specification" and "ignore unknown tags" options OFF, so that reading reports what is
/// stored and rewriting keeps every other tag (including unknown/private ones) as it was.
enum EXIF {
    static let prefix: [UInt8] = Array("Exif".utf8) + [0, 0]

    static func hasPrefix(_ b: some Collection<UInt8>) -> Bool { b.starts(with: prefix) }

    /// A TIFF header: "II*\0" or "MM\0*".
    static func isTIFF(_ b: some Collection<UInt8>) -> Bool {
        b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
    }

    struct Fields: Equatable {
        var orientation: Int?
        var captureDate: Date?
        var make: String?
        var model: String?
        var hasLocation = false
        var hasGPSIFD = false
    }

    /// Loads a block; nil when libexif finds nothing in it.
    private static func load(_ block: [UInt8]) -> UnsafeMutablePointer<ExifData>? {
        var data = block
        if !hasPrefix(data) {
            guard isTIFF(data) else { return nil }
            data = prefix + data
        }
        guard data.count > 6 + 8, let ed = exif_data_new() else { return nil }
        exif_data_unset_option(ed, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_set_option(ed, EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE)
        data.withUnsafeBufferPointer { exif_data_load_data(ed, $0.baseAddress, UInt32($0.count)) }
        let ifds = contents(ed)
        if ifds.allSatisfy({ ($0?.pointee.count ?? 0) == 0 }) && ed.pointee.size == 0 {
            exif_data_unref(ed)
            return nil
        }
        return ed
    }

    /// `ExifData.ifd` (`ExifContent *ifd[5]`) imports as a tuple.
    private static func contents(_ ed: UnsafeMutablePointer<ExifData>) -> [UnsafeMutablePointer<ExifContent>?] {
        withUnsafeBytes(of: ed.pointee.ifd) { Array($0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)) }
    }

    private static let ifd0 = Int(EXIF_IFD_0.rawValue)
    private static let ifdExif = Int(EXIF_IFD_EXIF.rawValue)
    private static let ifdGPS = Int(EXIF_IFD_GPS.rawValue)

    /// Reads the fields; never fails (a damaged block gives empty fields).
    static func fields(of block: [UInt8]) -> Fields {
        var f = Fields()
        guard let ed = load(block) else { return f }
        defer { exif_data_unref(ed) }
        let order = exif_data_get_byte_order(ed)
        let ifds = contents(ed)
        func entry(_ ifd: Int, _ tag: UInt32) -> UnsafeMutablePointer<ExifEntry>? {
            guard let c = ifds[ifd] else { return nil }
            return exif_content_get_entry(c, ExifTag(rawValue: tag))
        }
        func ascii(_ ifd: Int, _ tag: UInt32) -> String? {
            guard let e = entry(ifd, tag), let d = e.pointee.data, e.pointee.size > 0 else { return nil }
            let bytes = UnsafeBufferPointer(start: d, count: Int(e.pointee.size)).prefix(while: { $0 != 0 })
            let s = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return s.isEmpty ? nil : s
        }
        if let e = entry(ifd0, EXIF_TAG_ORIENTATION.rawValue), let d = e.pointee.data, e.pointee.size >= 2,
            e.pointee.format == EXIF_FORMAT_SHORT
        {
            let v = Int(exif_get_short(d, order))
            if (1...8).contains(v) { f.orientation = v }
        }
        f.make = ascii(ifd0, EXIF_TAG_MAKE.rawValue)
        f.model = ascii(ifd0, EXIF_TAG_MODEL.rawValue)
        if let s = ascii(ifdExif, EXIF_TAG_DATE_TIME_ORIGINAL.rawValue) {
            f.captureDate = parseDate(s, offset: ascii(ifdExif, EXIF_TAG_OFFSET_TIME_ORIGINAL.rawValue))
        }
        if let gps = ifds[ifdGPS], gps.pointee.count > 0 {
            f.hasGPSIFD = true
            f.hasLocation =
                entry(ifdGPS, UInt32(EXIF_TAG_GPS_LATITUDE)) != nil
                && entry(ifdGPS, UInt32(EXIF_TAG_GPS_LONGITUDE)) != nil
        }
        return f
    }

    /// The embedded thumbnail (IFD1's JPEGInterchangeFormat, at most `maxBytes`) and the
    /// photo's orientation (IFD0), as stored; nil when the block has no thumbnail.
    static func thumbnail(of block: [UInt8], maxBytes: Int) -> (jpeg: [UInt8], orientation: Int?)? {
        guard let ed = load(block) else { return nil }
        defer { exif_data_unref(ed) }
        guard let data = ed.pointee.data, ed.pointee.size > 0, Int(ed.pointee.size) <= maxBytes else { return nil }
        return (Array(UnsafeBufferPointer(start: data, count: Int(ed.pointee.size))), fields(of: block).orientation)
    }

    /// The block without its GPS IFD, in the same prefix convention as the input
    /// ("Exif\0\0" kept or not). nil when the block holds no GPS IFD (nothing to do).
    /// Throws when libexif cannot read the block: GPS cannot then be removed safely.
    static func removingGPS(from block: [UInt8]) throws -> [UInt8]? {
        guard let ed = load(block) else {
            // What libexif writes when nothing is left (e.g. after removing a GPS IFD that was
            // the only content): nothing to remove, and no reason to call the block damaged.
            if isEmptyTIFF(block) { return nil }
            throw MediaError(
                .undecodable,
                "the EXIF block is damaged (libexif cannot read it): the location cannot be removed safely")
        }
        defer { exif_data_unref(ed) }
        guard let gps = contents(ed)[ifdGPS], gps.pointee.count > 0 else { return nil }
        while gps.pointee.count > 0, let e = gps.pointee.entries[0] {
            exif_content_remove_entry(gps, e)
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(ed, &out, &size)
        guard let out, size > 6 else {
            free(out)
            throw MediaError(.internal, "libexif could not write the EXIF block back")
        }
        defer { free(out) }  // libexif's default allocator is calloc/free
        let saved = Array(UnsafeBufferPointer(start: out, count: Int(size)))  // starts with "Exif\0\0"
        let result = hasPrefix(block) ? saved : Array(saved.dropFirst(6))
        // Belt and braces: the rewritten block must read back without GPS.
        guard !fields(of: result).hasGPSIFD else {
            throw MediaError(.internal, "the EXIF block still holds GPS data after rewriting")
        }
        return result
    }

    /// A TIFF structure whose IFD0 has no entries and no next IFD: it links to nothing, so it
    /// holds no GPS IFD.
    static func isEmptyTIFF(_ block: [UInt8]) -> Bool {
        let t = hasPrefix(block) ? Array(block.dropFirst(prefix.count)) : block
        guard isTIFF(t) else { return false }
        let r = ByteReader(t)
        let little = t[0] == 0x49
        func u16(_ o: Int) -> Int? { r.be16(o).map { little ? ($0 & 0xFF) << 8 | $0 >> 8 : $0 } }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? b << 16 | a : a << 16 | b
        }
        guard let ifd0 = u32(4), ifd0 >= 8, u16(ifd0) == 0, u32(ifd0 + 2) == 0 else { return false }
        return true
    }

    /// "YYYY:MM:DD HH:MM:SS" (EXIF 2.3 §4.6.4) with an optional "+HH:MM"/"-HH:MM" offset;
    /// without one the time is taken as UTC. Blank/zero dates ("0000:00:00 00:00:00") give nil.
    static func parseDate(_ s: String, offset: String?) -> Date? {
        let b = Array(s.utf8)
        guard b.count >= 19 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
            let mi = num(14..<16), let se = num(17..<19), (1...12).contains(mo), (1...31).contains(d),
            (0...23).contains(h), (0...59).contains(mi), (0...60).contains(se), y > 0
        else { return nil }
        var seconds = 0
        if let o = offset.map({ Array($0.utf8) }), o.count >= 6, o[0] == 43 || o[0] == 45, o[3] == 58 {
            let digits = o[1...2] + o[4...5]
            if digits.allSatisfy({ (48...57).contains($0) }) {
                let oh = Int(o[1] - 48) * 10 + Int(o[2] - 48)
                let om = Int(o[4] - 48) * 10 + Int(o[5] - 48)
                if oh <= 14 && om < 60 { seconds = (oh * 3600 + om * 60) * (o[0] == 45 ? -1 : 1) }
            }
        }
        var cal = Calendar(identifier: .gregorian)
        guard let tz = TimeZone(secondsFromGMT: seconds) else { return nil }
        cal.timeZone = tz
        let comps = DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: se)
        guard comps.isValidDate(in: cal) || se == 60 else { return nil }
        return cal.date(from: comps)
    }
}
