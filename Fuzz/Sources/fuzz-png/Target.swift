// Location stripping of PNG (chunks, eXIf, tEXt/zTXt/iTXt).
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_png_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzzStripLocation(bytes($0, $1), as: .png)
        return 0
    }
}
