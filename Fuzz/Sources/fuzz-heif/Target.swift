// Location stripping of HEIF/HEIC/AVIF (ISO-BMFF boxes: meta, iinf/infe, iloc, idat; Exif item wiped in place),
// and its preview (the thumbnail item, or a decode of a small image).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_heif_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        let b = bytes($0, $1)
        fuzzStripLocation(b, as: .heic)
        fuzzPreview(b)
        return 0
    }
}
