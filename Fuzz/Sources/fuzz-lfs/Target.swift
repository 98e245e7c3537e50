// `.lfs` shared-key files (protocol/formats.md, seed 001): LFSFile.keyName(of:), the length
// check, open and openInPlace with the keys of protocol/vectors/lfs.json; and SharedKeyHex.parse
// on the same bytes as text (what `key import` reads). Properties: errors are FormatError
// (CryptoError only without AES-NI); a key name re-encodes to its header; open and openInPlace
// agree; an opened file re-seals to the same bytes; a parsed key prints as its hex digits.
import FuzzSupport
import LocafotoCrypto
import LocafotoFormats

let keys = [
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100",
].map { SecretBytes(copying: Hex.decode($0)!) }

func allowed(_ error: any Error, _ what: String) {
    checkError(error, isOneOf: [FormatError.self, CryptoError.self], what)
    if let c = error as? CryptoError { check(c.code == .unavailable, "\(what) threw CryptoError \(c.code)") }
}

func fuzz(_ input: [UInt8]) {
    var name: String?
    do {
        name = try LFSFile.keyName(of: input)
        let header = try LFSFile.encodeHeader(keyName: name!)
        check(header == Array(input.prefix(LFSFile.headerLength)), "key name does not re-encode to its header")
    } catch {
        allowed(error, "LFSFile.keyName")
    }
    let lengthOK = (try? LFSFile.checkFileLength(UInt64(input.count))) != nil
    check(lengthOK == (input.count >= LFSFile.overhead), "checkFileLength")
    for key in keys {
        var opened: [UInt8]?
        do {
            opened = try LFSFile.open(input, key: key)
        } catch {
            allowed(error, "LFSFile.open")
        }
        var copy = input
        let inPlace: [UInt8]? = copy.withUnsafeMutableBytes { buffer in
            do {
                let range = try LFSFile.openInPlace(buffer, key: key)
                return Array(buffer[range])
            } catch {
                allowed(error, "LFSFile.openInPlace")
                return nil
            }
        }
        check(opened == inPlace, "open and openInPlace disagree")
        if let plaintext = opened {
            check(name != nil && lengthOK, "opened a file with a bad header or length")
            let nonceStart = input.count - LFSFile.tagLength - LFSFile.nonceLength
            let again = try? LFSFile.seal(
                plaintext: plaintext, keyName: name!, key: key,
                nonce: Array(input[nonceStart..<(input.count - LFSFile.tagLength)]))
            check(again == input, "an opened .lfs file does not re-seal to the same bytes")
        }
    }
    let text = String(decoding: input, as: UTF8.self)
    do {
        let key = try SharedKeyHex.parse(text)
        let digits = text.unicodeScalars.filter { !" \t\r\n".unicodeScalars.contains($0) }.map {
            Character($0).lowercased()
        }.joined()
        check(SharedKeyHex.format(key) == digits, "a parsed shared key does not print as its digits")
    } catch {
        checkError(error, isOneOf: [FormatError.self], "SharedKeyHex.parse")
    }
}

@_cdecl("fuzz_lfs_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
