// Location stripping of TIFF (IFD0, GPS IFD wiped in place).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_tiff_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzzStripLocation(bytes($0, $1), as: .tiff)
        return 0
    }
}
