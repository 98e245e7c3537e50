// The web app's login and session checks (WebAccess, cookies): what a browser, or any local
// program, puts in a `Cookie` header and a login URL's `code`. Input: the Cookie header line,
// a 0x00 byte, then the code (no 0x00: all of it is the Cookie line and the code is empty).
// Properties: a cookie value read is trimmed, holds no ';' and follows its name in the line;
// a code decodes to exactly 32 bytes and re-encodes to itself, or not at all; only the code
// that was minted opens a session, once; no fuzzed cookie is a session.
import Foundation
import FuzzSupport
import LocafotoWeb

let access = WebAccess(port: 47821)
let minted = access.mintCode()

func fuzz(_ input: [UInt8]) {
    guard input.count <= 16384 else { return }
    let split = input.firstIndex(of: 0) ?? input.endIndex
    let line = String(decoding: input[..<split], as: UTF8.self)
    let code = split < input.endIndex ? String(decoding: input[(split + 1)...], as: UTF8.self) : ""

    if let value = cookieValue(access.cookieName, in: [line]) {
        check(!value.contains(";"), "cookie value with ';': \(value.debugDescription)")
        check(value == value.trimmingCharacters(in: .whitespaces), "cookie value not trimmed")
        check(line.utf8.count <= 8192, "a Cookie line over 8 KiB was read")
        check(line.contains(access.cookieName), "a value for a cookie the line does not name")
        check(!access.isSession(value), "a fuzzed cookie opened a session")
    }
    if let bytes = WebAccess.decode(code) {
        check(bytes.count == WebAccess.secretBytes, "decoded \(bytes.count) bytes")
        check(WebAccess.encode(bytes) == code, "decode/encode does not round-trip \(code.debugDescription)")
    }
    if code != minted {
        check(access.redeem(code) == nil, "a code that was never minted opened a session")
    }
}

@_cdecl("fuzz_web_login_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
