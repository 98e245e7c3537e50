// EXIF blocks (libexif through LocafotoMedia's EXIF): EXIF.fields(of:) (what `locafoto show`
// and the indexer report) and EXIF.removingGPS(from:) (the rewrite used for JPEG, PNG and
// WebP), on blocks with or without the "Exif\0\0" prefix. Properties: reading never fails; a
// rewritten block reads back without a GPS IFD and with the same other fields, and rewriting it
// again is a no-op; errors are MediaError.
import FuzzSupport

@testable import LocafotoMedia

func fuzz(_ input: [UInt8]) {
    guard input.count <= 0xFFFF else { return }  // an APP1 segment holds at most 65533 bytes
    let before = EXIF.fields(of: input)
    let rewritten: [UInt8]?
    do {
        rewritten = try EXIF.removingGPS(from: input)
    } catch {
        checkError(error, isOneOf: [MediaError.self], "EXIF.removingGPS")
        return
    }
    guard let block = rewritten else {
        check(!before.hasGPSIFD, "a block with a GPS IFD was left unchanged")
        return
    }
    check(before.hasGPSIFD, "a block without GPS IFD was rewritten")
    check(EXIF.hasPrefix(block) == EXIF.hasPrefix(input), "the Exif prefix convention changed")
    let after = EXIF.fields(of: block)
    check(!after.hasGPSIFD && !after.hasLocation, "the rewritten block still has GPS")
    check(
        after.orientation == before.orientation && after.make == before.make && after.model == before.model
            && after.captureDate == before.captureDate,
        "removing GPS changed other fields: \(before) -> \(after)")
    do {
        let again = try EXIF.removingGPS(from: block)
        check(again == nil, "a rewritten block was rewritten again")
    } catch {
        check(
            false,
            "a rewritten block cannot be read back: \(error); block: \(block.map { String($0, radix: 16) }.joined(separator: " "))"
        )
    }
}

@_cdecl("fuzz_exif_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
