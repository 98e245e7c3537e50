// Location stripping of JPEG (markers and segments, APP1 Exif rewritten by libexif, APP1 XMP).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_jpeg_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzzStripLocation(bytes($0, $1), as: .jpeg); return 0 }
}
