// ImageHeaderCheck on any bytes, as a LocalSend upload feeds it (the vault's import with
// `checkHeader`): the first byte chooses the format, the rest is the file, fed in pieces whose
// sizes the input's own bytes choose. Properties: the verdict does not depend on how the bytes
// were cut; a valid one is reached within the header limit; feeding stops at the verdict.
import FuzzSupport
import LocafotoFormats

func fuzz(_ input: [UInt8]) {
    guard let first = input.first else { return }
    let format = ContentType.allCases[Int(first) % ContentType.allCases.count]
    let file = Array(input.dropFirst())
    var whole = ImageHeaderCheck(format: format)
    whole.feed(file)
    var pieces = ImageHeaderCheck(format: format)
    var at = 0
    while at < file.count {
        let n = 1 + Int(file[at]) % 97
        pieces.feed(Array(file[at..<min(file.count, at + n)]))
        at += n
    }
    check(whole.verdictAtEnd == pieces.verdictAtEnd, "the verdict depends on how the bytes were cut")
    check(whole.offset <= ImageHeaderCheck.maxHeaderBytes + 1, "read \(whole.offset) bytes of header")
    if whole.verdict != .needMore {
        var again = whole
        again.feed(file)
        check(again.offset == whole.offset && again.verdict == whole.verdict, "fed on past its verdict")
    }
}

@_cdecl("fuzz_image_header_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
