// Location stripping of WebP (RIFF chunks, EXIF, XMP, VP8X flags).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_webp_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzzStripLocation(bytes($0, $1), as: .webp)
        return 0
    }
}
