// Location stripping of HEIF/HEIC/AVIF (ISO-BMFF boxes: meta, iinf/infe, iloc, idat; Exif item wiped in place).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_heif_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzzStripLocation(bytes($0, $1), as: .heic); return 0 }
}
