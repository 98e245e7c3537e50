// mDNS TXT records (protocol/discovery.md). The input is TXT RDATA as it arrives in an mDNS
// answer (length-prefixed strings); avahi's own parser turns it into the AvahiStringList the
// resolver callback receives, then LocafotoDiscovery's dictionary(from:) and LocafotoPeers'
// PeerDirectory read it, as they do for every resolved service. Properties: the dictionary is
// the RFC 6763 reading of the record (first occurrence of a key wins, bare keys map to ""), and a
// peer is listed exactly when v=1 and fp parses as a fingerprint other than this node's, under
// that fingerprint and a display-safe name.
import FuzzSupport
import LocafotoClock
import LocafotoFormats
import LocafotoWire

@testable import LocafotoDiscovery
@testable import LocafotoPeers

let own = try! Fingerprint(parsing: "KZDVVJO-2UMNDUL-YAUF35U-O36K6KX")

/// RFC 6763 §6.3-6.4, written out independently of avahi and LocafotoDiscovery.
func reference(_ rdata: [UInt8]) -> [String: String]? {
    var out: [String: String] = [:]
    var i = 0
    while i < rdata.count {
        let n = Int(rdata[i])
        i += 1
        guard n <= rdata.count - i else { return nil }
        let s = rdata[i..<(i + n)]
        i += n
        guard !s.isEmpty else { continue }
        let key: String
        let value: String
        if let eq = s.firstIndex(of: UInt8(ascii: "=")) {
            key = String(decoding: s[..<eq], as: UTF8.self)
            value = String(decoding: s[(eq + 1)...], as: UTF8.self)
        } else {
            key = String(decoding: s, as: UTF8.self)
            value = ""
        }
        if out[key] == nil { out[key] = value }
    }
    return out
}

func fuzz(_ input: [UInt8]) {
    guard input.count <= 0xFFFF else { return }
    let expected = reference(input)
    guard let txt = dictionary(fromRDATA: input) else {
        check(expected == nil, "avahi refused TXT data that is well formed")
        return
    }
    check(txt == expected, "TXT dictionary \(txt) differs from the RFC 6763 reading \(String(describing: expected))")

    let directory = PeerDirectory(own: own, clock: SystemClock())
    directory.apply(
        .resolved(
            DiscoveredService(
                instanceName: "fuzz", interfaceIndex: 2, family: .ipv4, hostName: "fuzz.local", address: "192.0.2.1",
                port: 47820,
                txt: txt, isLocal: false, isOwn: false)))
    let online = directory.online
    let fp = txt["fp"].flatMap { try? Fingerprint(parsing: $0) }
    if txt["v"] == "1", let fp, fp != own {
        check(
            online.count == 1 && online[0].fingerprint == fp,
            "a valid advertisement was not listed under its fingerprint")
        let reparsed = try? Fingerprint(parsing: fp.description)
        check(reparsed == fp, "fingerprint round trip")
        let name = online[0].name
        check(!name.isEmpty && name.utf8.count <= Hello.maxNameBytes, "peer name length")
        check(
            !name.unicodeScalars.contains(where: isUnsafePeerText),
            "peer name keeps control/format characters")
    } else {
        check(online.isEmpty, "an advertisement without v=1 and a valid fingerprint was listed")
    }
}

@_cdecl("fuzz_txt_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
