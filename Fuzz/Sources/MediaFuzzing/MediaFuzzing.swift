// The hand-written image readers of LocafotoMedia, through the call the agent makes:
// Media.strippingLocation(from:type:) (`send --strip-location`, `export --strip-location`).
import FuzzSupport
@testable import LocafotoMedia
import LocafotoFormats

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
        check(!embeddedOnly || t.source == .exifThumbnail || t.source == .heifThumbnail, "embeddedOnly decoded the photo")
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
