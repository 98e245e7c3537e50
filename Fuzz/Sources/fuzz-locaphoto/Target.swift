// `.locaphoto` bundles (protocol/formats.md): LocaphotoFile.decode (JSON, base64 fields,
// limits, signature) and, as `locafoto open` does next, BundleOpener with the recipient key of
// protocol/vectors/bundle.json. Properties: errors are FormatError / CryptoError; a decoded
// bundle has a valid header and signature, re-encodes and decodes to the same header and data,
// and opens only for its recipient.
import Foundation
import FuzzSupport
import LocafotoCrypto
import LocafotoFormats

let recipient = try! SigningKey(
    seed: SecretBytes(copying: Hex.decode("df375dc0ed568f6a76e2206bebbe35b2e8febef6ba2cc71a7cdffc6d4b00568f")!))

func fuzz(_ input: [UInt8]) {
    let data = Data(input)
    for requireData in [true, false] {
        let header: BundleHeader
        let payload: [UInt8]?
        do {
            (header, payload) = try LocaphotoFile.decode(data, requireData: requireData)
        } catch {
            checkError(error, isOneOf: [FormatError.self, CryptoError.self], "LocaphotoFile.decode")
            continue
        }
        check((try? header.validate()) != nil, "decoded bundle does not validate")
        check((try? header.verifySignature()) != nil, "decoded bundle's signature does not verify")
        check(payload != nil || !requireData, "requireData without data")
        if let payload { check(payload.count == Int(header.metadata.originalSize), "data size") }
        do {
            let (h2, p2) = try LocaphotoFile.decode(
                try LocaphotoFile.encode(header, encryptedData: payload), requireData: requireData)
            check(h2 == header && p2 == payload, "bundle round trip")
        } catch {
            check(false, "re-encoded bundle does not decode: \(error)")
        }
        do {
            let opener = try BundleOpener(
                algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
                recipientPublicKey: header.recipient,
                recipient: recipient)
            check(header.recipient == recipient.publicKey, "opened a bundle addressed to another key")
            if var ciphertext = payload, opener.isStreaming {
                ciphertext.withUnsafeMutableBytes { opener.decrypt($0) }
                _ = try opener.finish(header: header)
            }
        } catch {
            checkError(error, isOneOf: [FormatError.self, CryptoError.self], "BundleOpener")
        }
    }
}

@_cdecl("fuzz_locaphoto_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
