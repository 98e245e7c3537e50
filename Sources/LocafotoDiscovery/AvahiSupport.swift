// Small conversions between Swift values and Avahi's C types, plus validation
// done before anything reaches the daemon (so mistakes surface as thrown
// errors in start() instead of as silent failures on the poll thread).
import CAvahi
import LocafotoErrors

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

typealias StringList = UnsafeMutablePointer<AvahiStringList>

/// Builds an AvahiStringList for `txt` and passes it to `body`, then frees it.
/// Keys are added in reverse-sorted order because `avahi_string_list_add*`
/// prepends: the wire order then comes out sorted, which keeps records stable.
func withStringList<R>(_ txt: [String: String], _ body: (StringList?) -> R) -> R {
    var list: StringList? = nil
    for key in txt.keys.sorted(by: >) {
        list = avahi_string_list_add_pair(list, key, txt[key] ?? "")
    }
    defer { avahi_string_list_free(list) }
    return body(list)
}

/// TXT list → map. A bare "key" (boolean attribute) maps to "". RFC 6763 §6.4
/// says only the first occurrence of a key counts; Avahi hands the list over
/// in reverse wire order, so later list items (earlier on the wire) win.
func dictionary(from list: StringList?) -> [String: String] {
    var result: [String: String] = [:]
    var item = list
    while let current = item {
        let size = avahi_string_list_get_size(current)
        if let text = avahi_string_list_get_text(current), size > 0 {
            let bytes = UnsafeBufferPointer(start: text, count: size)
            if let eq = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let key = String(decoding: bytes[..<eq], as: UTF8.self)
                result[key] = String(decoding: bytes[(eq + 1)...], as: UTF8.self)
            } else {
                result[String(decoding: bytes, as: UTF8.self)] = ""
            }
        }
        item = avahi_string_list_get_next(current)
    }
    return result
}

/// TXT RDATA as it arrives in an mDNS answer (length-prefixed strings), read by avahi's own
/// parser into the list its resolver hands over, then into a map as `dictionary(from:)` does.
/// nil when avahi refuses the data. For the fuzz target, which feeds the resolver's input.
func dictionary(fromRDATA rdata: [UInt8]) -> [String: String]? {
    var list: StringList?
    let rc = rdata.withUnsafeBytes { avahi_string_list_parse($0.baseAddress, $0.count, &list) }
    defer { avahi_string_list_free(list) }
    return rc == 0 ? dictionary(from: list) : nil
}

/// Numeric form of a resolved address; link-local IPv6 gets "%ifindex" because
/// it is meaningless (and unconnectable) without its interface.
func numericAddress(_ address: UnsafePointer<AvahiAddress>, interface: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
    let text = buffer.withUnsafeMutableBufferPointer { buf -> String in
        guard avahi_address_snprint(buf.baseAddress, buf.count, address) != nil else { return "" }
        return String(cString: buf.baseAddress!)
    }
    if lf_avahi_address_is_ipv6_link_local(address) != 0 && interface > 0 {
        return "\(text)%\(interface)"
    }
    return text
}

func ipFamily(_ proto: AvahiProtocol) -> IPFamily {
    proto == AvahiProtocol(AVAHI_PROTO_INET6) ? .ipv6 : .ipv4
}

func validate(serviceType: String) -> DiscoveryError? {
    if avahi_is_valid_service_type_strict(serviceType) != 0 { return nil }
    return DiscoveryError(
        .invalidServiceType,
        "'\(serviceType)' is not a DNS-SD service type; use the form \"_name._tcp\" or \"_name._udp\"")
}

func validate(_ ad: ServiceAdvertisement) -> DiscoveryError? {
    if avahi_is_valid_service_name(ad.name) == 0 {
        return DiscoveryError(
            .invalidAdvertisement,
            "service name '\(ad.name)' is invalid: it must be 1-63 bytes of UTF-8")
    }
    for (key, value) in ad.txt {
        // RFC 6763 §6.4: printable US-ASCII except '=', not empty.
        let keyOK = !key.isEmpty && key.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "=") }
        if !keyOK {
            return DiscoveryError(
                .invalidAdvertisement,
                "TXT key '\(key)' is invalid: use non-empty printable ASCII without '='")
        }
        if key.utf8.count + 1 + value.utf8.count > 255 {
            return DiscoveryError(
                .invalidAdvertisement,
                "TXT entry '\(key)=…' is longer than 255 bytes; shorten the value")
        }
    }
    return nil
}

/// Last-resort diagnostics for failures on the poll thread that have no event
/// of their own. write(2) because `stderr` is a global var Swift 6 rejects.
func warn(_ message: String) {
    let line = "LocafotoDiscovery: \(message)\n"
    _ = line.utf8CString.withUnsafeBufferPointer { buf in
        write(2, buf.baseAddress, buf.count - 1)
    }
}
