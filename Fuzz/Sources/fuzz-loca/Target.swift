// LOCA encrypted files (protocol/formats.md "LOCA"): LOCAHeader(decoding:), the length check
// and LOCA.open with the keys of protocol/vectors/loca.json. Properties: errors are FormatError
// (CryptoError only for AES-GCM on a CPU without AES-NI); a decoded header re-encodes to the
// exact 64 bytes it came from; an opened file re-seals to the same bytes.
import FuzzSupport
import LocafotoCrypto
import LocafotoFormats

let keys = [
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
    "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
].map { SecretBytes(copying: Hex.decode($0)!) }

func fuzz(_ input: [UInt8]) {
    let header: LOCAHeader
    do {
        header = try LOCAHeader(decoding: input)
    } catch {
        checkError(error, isOneOf: [FormatError.self], "LOCAHeader(decoding:)")
        check((try? LOCA.open(input, key: keys[0])) == nil, "LOCA.open accepted a file whose header does not decode")
        return
    }
    check(header.encoded() == Array(input.prefix(LOCAHeader.length)), "LOCA header does not re-encode to its bytes")
    let lengthOK = (try? header.checkFileLength(UInt64(input.count))) != nil
    check(lengthOK == (UInt64(input.count) == header.expectedFileLength()), "checkFileLength")
    for key in keys {
        do {
            let (h, plaintext) = try LOCA.openWithHeader(input, key: key)
            check(lengthOK && h == header, "opened a file of the wrong length or another header")
            let again = try LOCA.seal(
                plaintext: plaintext, key: key, algorithm: h.algorithm, nonce: h.nonce, timestamp: h.timestamp)
            check(again == input, "an opened LOCA file does not re-seal to the same bytes")
        } catch {
            checkError(error, isOneOf: [FormatError.self, CryptoError.self], "LOCA.open")
            if let c = error as? CryptoError { check(c.code == .unavailable, "LOCA.open threw CryptoError \(c.code)") }
        }
    }
}

@_cdecl("fuzz_loca_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
