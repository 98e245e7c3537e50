// The hand-written image readers of LocafotoMedia, through the call the agent makes:
// Media.strippingLocation(from:type:) (`send --strip-location`, `export --strip-location`).
import FuzzSupport
import LocafotoFormats

@testable import LocafotoMedia

/// Properties: errors are MediaError; a result never names a GPS position (no GPS IFD in any
/// EXIF block this layer reads); stripping is idempotent (a photo without GPS comes back
/// byte-identical); HEIF and TIFF are edited in place (same size).
public func fuzzStripLocation(_ input: [UInt8], as type: ContentType) {
    let out: [UInt8]
    do {
        out = try Media.strippingLocation(from: input, type: type)
    } catch {
        checkError(error, isOneOf: [MediaError.self], "strippingLocation(\(type))")
        return
    }
    check(!Bytes.mentionsGPS(out), "stripped \(type) still mentions GPS")
    if type == .tiff || type == .heic || type == .heif || type == .avif {
        check(out.count == input.count, "\(type) was not edited in place")
    }
    if type == .tiff {
        check(!EXIF.fields(of: Array(out.prefix(0xFFF0))).hasGPSIFD, "stripped TIFF still has a GPS IFD")
    }
    do {
        let again = try Media.strippingLocation(from: out, type: type)
        check(again == out, "stripping the location of a stripped \(type) changed it again")
    } catch {
        check(false, "a stripped \(type) cannot be stripped again: \(error)")
    }
}

/// Previews (`send`): the embedded thumbnail (EXIF IFD1, a HEIF thumbnail item) or a bounded
/// decode, through libvips, libjpeg and libheif. Properties: no crash; a preview made is one a
/// receiver accepts (PreviewImage.validate) and carries no EXIF.
public func fuzzPreview(_ input: [UInt8]) {
    for embeddedOnly in [true, false] {
        guard let t = input.withUnsafeBytes({ Media.preview(of: $0, embeddedOnly: embeddedOnly) }) else { continue }
        check((try? PreviewImage.validate(t.jpeg)) != nil, "a preview fails the receiver's checks")
        check(
            !embeddedOnly || t.source == .exifThumbnail || t.source == .heifThumbnail, "embeddedOnly decoded the photo")
    }
}

/// The agent's look at a JPEG's head without a decoder. Properties: no crash; a preview it
/// offers as is passes the receiver's checks.
public func fuzzJPEGHeadPreview(_ input: [UInt8]) {
    for whole in [false, true] {
        if case .ready(let t) = Media.previewFromJPEGHead(input, wholeFile: whole) {
            check((try? PreviewImage.validate(t.jpeg)) != nil, "a head preview fails the receiver's checks")
        }
    }
}

/// The marker walk that decides what a received JPEG's head is (JPEGHead). Properties: no
/// crash; segments are visited in order inside the input; a head it finds ends inside the
/// input at the end of an SOS segment and is found again in itself, as the indexer reads it.
public func fuzzJPEGHead(_ input: [UInt8]) {
    var last = 0
    let end = JPEGHead.walk(input) { marker, payload in
        check(
            payload.lowerBound >= last + 4 && payload.upperBound <= input.count,
            "segment out of order or outside the input")
        check(marker != 0xD8 && marker != 0xD9 && marker != 0x00, "a marker without a segment was visited")
        last = payload.upperBound
        return true
    }
    guard let n = JPEGHead.headerLength(of: input) else {
        if case .scan = end { check(false, "walk and headerLength disagree") }
        return
    }
    check(end == .scan(headerLength: n) && n <= input.count && n == last, "a head that is not the walk's end")
    check(n >= 6 && input[0] == 0xFF && input[1] == 0xD8, "a head without SOI")
    check(JPEGHead.headerLength(of: Array(input[..<n])) == n, "the head alone is not a head")
}
