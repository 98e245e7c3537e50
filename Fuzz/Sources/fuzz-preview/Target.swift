// PreviewImage.validate on the JPEG of one PREVIEW, as the receiver checks it once the sealed
// box has opened and the hash matched (protocol/messages.md "PREVIEW"): the input is the JPEG.
// Properties: errors are FormatError; an accepted preview is at most 16,384 bytes, starts with
// SOI, ends with EOI, and its frame header's sides are 1...160; the check is deterministic.
import FuzzSupport
import LocafotoFormats

func fuzz(_ input: [UInt8]) {
    guard input.count <= 2 * PreviewImage.maxBytes else { return }
    let size: PreviewImage.Dimensions
    do {
        size = try PreviewImage.validate(input)
    } catch {
        checkError(error, isOneOf: [FormatError.self], "PreviewImage.validate")
        check(
            input.count > PreviewImage.maxBytes || (try? PreviewImage.validate(input)) == nil,
            "validate is not deterministic")
        return
    }
    check(input.count <= PreviewImage.maxBytes, "a preview of \(input.count) bytes was accepted")
    check(input.starts(with: [0xFF, 0xD8]) && input.suffix(2) == [0xFF, 0xD9], "accepted without SOI and EOI")
    check(
        (1...PreviewImage.maxSide).contains(size.width) && (1...PreviewImage.maxSide).contains(size.height),
        "accepted \(size.width)x\(size.height)")
    check((try? PreviewImage.validate(input)) == size, "validate is not deterministic")
}

@_cdecl("fuzz_preview_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
