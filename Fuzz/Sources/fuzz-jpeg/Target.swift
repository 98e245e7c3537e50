// Location stripping of JPEG (markers and segments, APP1 Exif rewritten by libexif, APP1 XMP), and
// its preview (the head read without a decoder, the EXIF thumbnail or a shrink-on-load decode),
// and the marker walk that finds a received JPEG's head for the media indexer.
// See MediaFuzzing for the properties checked.
import FuzzSupport
import LocafotoFormats
import MediaFuzzing

@_cdecl("fuzz_jpeg_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        let b = bytes($0, $1)
        fuzzStripLocation(b, as: .jpeg)
        fuzzJPEGHeadPreview(b)
        fuzzJPEGHead(b)
        fuzzPreview(b)
        return 0
    }
}
