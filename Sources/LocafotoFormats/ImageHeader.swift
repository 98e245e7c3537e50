/// Whether an image's header decodes as the format its first bytes claim, read as the bytes
/// arrive (nothing is kept but a few bytes of the field being read). `ContentType.sniff` looks
/// at a signature only, so a JPEG signature followed by a web page or a program passed it; this
/// walks the header's structure as a decoder would, up to the first thing that says how large
/// the picture is: a JPEG's frame header (SOF), a PNG's IHDR chunk (with its CRC), an ISO-BMFF
/// file's `meta` box with a `pict` handler (HEIC, HEIF, AVIF), a GIF's screen, a WebP's first
/// chunk, a TIFF's first directory. What follows it (the pixels) is a decoder's business.
/// No I/O; fuzzed (`fuzz-image-header`).
public struct ImageHeaderCheck: Sendable {
    public enum Verdict: Sendable, Equatable {
        case needMore
        case valid
        case invalid(String)
    }

    /// How far into a file its header may reach before it counts as not a header (JPEG's
    /// application segments before the frame: a phone's depth map or original in XMP takes
    /// megabytes; ISO-BMFF boxes before `meta`; a TIFF's first directory, which libtiff writes
    /// after the pixels). Only skipped over, never held: it bounds the time to a verdict.
    public static let maxHeaderBytes = 64 << 20

    public let format: ContentType
    public private(set) var verdict: Verdict = .needMore
    /// Bytes fed so far.
    public private(set) var offset = 0

    private enum Step: Sendable {
        /// Collect `count` bytes into `field`, then `parse`.
        case read(count: Int, then: Field)
        /// Skip `count` bytes, then read the next `then`.
        case skip(count: Int, then: Field)
    }

    private enum Field: Sendable {
        case jpegStart, jpegMarker
        case jpegLength(UInt8)
        case jpegFrame
        case pngHeader
        case boxHeader(inMeta: Bool)
        case boxLargeSize(type: [UInt8], inMeta: Bool)
        case metaVersion, handler
        case gifScreen
        case webpChunk
        case tiffHeader, tiffDirectory
    }

    private var step: Step
    private var field: [UInt8] = []

    public init(format: ContentType) {
        self.format = format
        switch format {
        case .jpeg: step = .read(count: 2, then: .jpegStart)
        case .png: step = .read(count: 33, then: .pngHeader)
        case .heic, .heif, .avif: step = .read(count: 8, then: .boxHeader(inMeta: false))
        case .gif: step = .read(count: 10, then: .gifScreen)
        case .webp: step = .read(count: 20, then: .webpChunk)
        case .tiff: step = .read(count: 8, then: .tiffHeader)
        }
    }

    /// The next bytes of the file, in order; the verdict so far (once `valid` or `invalid`, it
    /// stays so and further bytes are not looked at).
    @discardableResult
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        var i = 0
        while verdict == .needMore, i < bytes.count {
            switch step {
            case .skip(let count, let then):
                let n = min(count, bytes.count - i)
                i += n
                offset += n
                step =
                    n == count ? .read(count: Self.length(of: then), then: then) : .skip(count: count - n, then: then)
            case .read(let count, let then):
                let n = min(count - field.count, bytes.count - i)
                field.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<i + n]))
                i += n
                offset += n
                if field.count == count {
                    let bytes = field
                    field.removeAll(keepingCapacity: true)
                    parse(then, bytes)
                }
            }
            if verdict == .needMore, offset > Self.maxHeaderBytes {
                verdict = .invalid("no \(format.displayName) header in its first \(Self.maxHeaderBytes >> 20) MiB")
            }
        }
        return verdict
    }

    @discardableResult
    public mutating func feed(_ bytes: [UInt8]) -> Verdict { bytes.withUnsafeBytes { feed($0) } }

    /// The verdict once every byte was fed: a header not finished is not one.
    public var verdictAtEnd: Verdict {
        verdict == .needMore ? .invalid("it ends before its \(format.displayName) header does") : verdict
    }

    private static func length(of field: Field) -> Int {
        switch field {
        case .jpegStart: 2
        case .jpegMarker: 1
        case .jpegLength: 2
        case .jpegFrame: 0  // set where it is read (the segment's length)
        case .pngHeader: 33
        case .boxHeader: 8
        case .boxLargeSize: 8
        case .metaVersion: 4
        case .handler: 12
        case .gifScreen: 10
        case .webpChunk: 20
        case .tiffHeader: 8
        case .tiffDirectory: 2
        }
    }

    private mutating func fail(_ why: String) { verdict = .invalid(why) }

    private static func be16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) << 8 | Int(b[at + 1]) }
    private static func be32(_ b: [UInt8], _ at: Int) -> Int { be16(b, at) << 16 | be16(b, at + 2) }
    private static func le16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at + 1]) << 8 | Int(b[at]) }

    private mutating func parse(_ f: Field, _ b: [UInt8]) {
        switch f {
        case .jpegStart, .jpegMarker, .jpegLength, .jpegFrame: parseJPEG(f, b)
        case .pngHeader: parsePNG(b)
        case .boxHeader, .boxLargeSize, .metaVersion, .handler: parseBox(f, b)
        case .gifScreen:
            guard b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) else {
                return fail("no GIF signature")
            }
            guard Self.le16(b, 6) > 0, Self.le16(b, 8) > 0 else { return fail("a screen of no pixels") }
            verdict = .valid
        case .webpChunk:
            guard b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) else {
                return fail("no RIFF WEBP header")
            }
            switch String(decoding: b[12..<16], as: UTF8.self) {
            case "VP8 ", "VP8L", "VP8X": verdict = .valid
            default: fail("its first chunk is not an image")
            }
        case .tiffHeader, .tiffDirectory: parseTIFF(f, b)
        }
    }

    // MARK: JPEG (ITU T.81 B.1.1): markers and segments up to the frame header

    private mutating func parseJPEG(_ f: Field, _ b: [UInt8]) {
        switch f {
        case .jpegStart:
            guard b == [0xFF, 0xD8] else { return fail("no start-of-image marker") }
            step = .read(count: 1, then: .jpegMarker)
        case .jpegMarker:
            // A marker is 0xFF (any number of fill bytes), then its code.
            if pendingFF {
                let code = b[0]
                guard code != 0xFF else {  // a fill byte
                    step = .read(count: 1, then: .jpegMarker)
                    return
                }
                pendingFF = false
                switch code {
                case 0x00: fail("a stray byte where a marker belongs")
                case 0xD8: fail("a second start of image")
                case 0xD9: fail("the image ends before its frame header")
                case 0xDA: fail("scan data before any frame header")
                case 0x01, 0xD0...0xD7: step = .read(count: 1, then: .jpegMarker)  // no length
                default: step = .read(count: 2, then: .jpegLength(code))
                }
            } else {
                guard b[0] == 0xFF else { return fail("bytes that are not a marker segment after \(offset - 1) bytes") }
                pendingFF = true
                step = .read(count: 1, then: .jpegMarker)
            }
        case .jpegLength(let code):
            let length = Self.be16(b, 0)
            guard length >= 2 else { return fail("a segment of length \(length)") }
            if Self.isFrame(code) {
                guard length >= 8 else { return fail("a frame header of \(length) bytes") }
                step = .read(count: length - 2, then: .jpegFrame)
            } else {
                step = length == 2 ? .read(count: 1, then: .jpegMarker) : .skip(count: length - 2, then: .jpegMarker)
            }
        case .jpegFrame:
            let precision = b[0]
            let (height, width, components) = (Self.be16(b, 1), Self.be16(b, 3), Int(b[5]))
            guard [8, 12, 16].contains(precision) else { return fail("a sample precision of \(precision) bits") }
            guard width > 0, height > 0 else { return fail("a frame of \(width)×\(height) pixels") }
            guard (1...4).contains(components), b.count == 6 + 3 * components else {
                return fail("a frame header with \(components) components in \(b.count + 2) bytes")
            }
            verdict = .valid
        default:
            break
        }
    }

    /// Between a marker's 0xFF and its code (the code is read as the next one-byte field).
    private var pendingFF = false

    /// SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC).
    private static func isFrame(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }

    // MARK: PNG (ISO/IEC 15948 5.2, 11.2.2): the signature, then IHDR with its CRC

    private mutating func parsePNG(_ b: [UInt8]) {
        guard b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return fail("no PNG signature") }
        guard Self.be32(b, 8) == 13, Array(b[12..<16]) == Array("IHDR".utf8) else {
            return fail("its first chunk is not IHDR")
        }
        let (width, height, depth, color) = (Self.be32(b, 16), Self.be32(b, 20), b[24], b[25])
        guard width > 0, height > 0 else { return fail("an image of \(width)×\(height) pixels") }
        let depths: [UInt8: [UInt8]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard depths[color]?.contains(depth) == true, b[26] == 0, b[27] == 0, b[28] <= 1 else {
            return fail("an IHDR no decoder reads (colour type \(color), depth \(depth))")
        }
        guard CRC32.checksum(b[12..<29]) == UInt32(Self.be32(b, 29)) else { return fail("IHDR's CRC is wrong") }
        verdict = .valid
    }

    // MARK: ISO-BMFF (ISO/IEC 14496-12 4.2, 8.4.3; HEIF 23008-12 6.2): boxes up to meta's handler

    private var sawFileType = false

    private mutating func parseBox(_ f: Field, _ b: [UInt8]) {
        switch f {
        case .boxHeader(let inMeta):
            let size = Self.be32(b, 0)
            let type = Array(b[4..<8])
            guard type.allSatisfy({ (0x20...0x7E).contains($0) }) else { return fail("a box whose type is not text") }
            guard size != 1 else {
                step = .read(count: 8, then: .boxLargeSize(type: type, inMeta: inMeta))
                return
            }
            enter(type, size: size == 0 ? nil : size, header: 8, inMeta: inMeta)
        case .boxLargeSize(let type, let inMeta):
            let size = b.reduce(0) { $0 << 8 | UInt64($1) }
            guard size <= UInt64(Int.max) else { return fail("a box larger than any file") }
            enter(type, size: Int(size), header: 16, inMeta: inMeta)
        case .metaVersion:
            step = .read(count: 8, then: .boxHeader(inMeta: true))
        case .handler:
            guard Array(b[8..<12]) == Array("pict".utf8) else {
                return fail("its metadata's handler is '\(String(decoding: b[8..<12], as: UTF8.self))', not a picture")
            }
            verdict = .valid
        default:
            break
        }
    }

    /// A box whose header was read: `ftyp` first, then top-level boxes skipped until `meta`,
    /// whose first child must be its handler.
    private mutating func enter(_ type: [UInt8], size: Int?, header: Int, inMeta: Bool) {
        let name = String(decoding: type, as: UTF8.self)
        if let size, size < header { return fail("a '\(name)' box of \(size) bytes") }
        let body = size.map { $0 - header }
        if inMeta {
            guard name == "hdlr", let body, body >= 12 else {
                return fail("its metadata does not begin with a handler")
            }
            step = .read(count: 12, then: .handler)
        } else if !sawFileType {
            guard name == "ftyp", let body, body >= 8 else { return fail("it does not begin with a file type box") }
            sawFileType = true
            step = .skip(count: body, then: .boxHeader(inMeta: false))
        } else if name == "meta" {
            guard let body, body >= 12 else { return fail("an empty metadata box") }
            step = .read(count: 4, then: .metaVersion)
        } else {
            // Any other top-level box (`mdat`, `free`, one unknown) is skipped, as a reader would.
            guard let body else { return fail("the file ends in '\(name)' before any metadata") }
            step = .skip(count: body, then: .boxHeader(inMeta: false))
        }
    }

    // MARK: TIFF (TIFF 6.0 §2): the header, then the first directory's entry count

    private var tiffLittleEndian = false

    private mutating func parseTIFF(_ f: Field, _ b: [UInt8]) {
        switch f {
        case .tiffHeader:
            tiffLittleEndian = b[0] == 0x49
            let first =
                tiffLittleEndian
                ? Int(b[7]) << 24 | Int(b[6]) << 16 | Int(b[5]) << 8 | Int(b[4]) : Self.be32(b, 4)
            guard first >= 8 else { return fail("its first directory at offset \(first)") }
            step = first == 8 ? .read(count: 2, then: .tiffDirectory) : .skip(count: first - 8, then: .tiffDirectory)
        case .tiffDirectory:
            let count = tiffLittleEndian ? Self.le16(b, 0) : Self.be16(b, 0)
            guard (1...4096).contains(count) else { return fail("a first directory of \(count) entries") }
            verdict = .valid
        default:
            break
        }
    }
}

/// CRC-32 as PNG (and zlib) compute it (ISO/IEC 15948 Annex D): a checksum against damage,
/// not a cryptographic hash.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { c, b in table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
    }
}
