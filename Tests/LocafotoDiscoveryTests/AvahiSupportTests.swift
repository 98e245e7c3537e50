// Pure conversions (no daemon): TXT lists and address formatting.
import CAvahi
import Testing

@testable import LocafotoDiscovery

@Suite("Avahi conversions")
struct AvahiSupportTests {
    @Test("TXT map survives a round trip through an AvahiStringList")
    func txtRoundTrip() {
        let txt = ["v": "1", "pk": "a=b==", "empty": "", "utf8": "Grüße"]
        let back = withStringList(txt) { dictionary(from: $0) }
        #expect(back == txt)
    }

    @Test("bare keys map to \"\", and the first occurrence on the wire wins")
    func txtParsing() {
        // avahi_string_list_add prepends: the list is in reverse wire order,
        // so the wire order here is: "k=first", "bare", "k=second".
        var list: StringList? = nil
        list = avahi_string_list_add(list, "k=first")
        list = avahi_string_list_add(list, "bare")
        list = avahi_string_list_add(list, "k=second")
        defer { avahi_string_list_free(list) }
        #expect(dictionary(from: list) == ["k": "first", "bare": ""])
    }

    @Test("IPv4 is plain, IPv6 link-local gets a %ifindex scope")
    func addresses() {
        var a = AvahiAddress()
        #expect(avahi_address_parse("127.0.0.1", AvahiProtocol(AVAHI_PROTO_UNSPEC), &a) != nil)
        #expect(numericAddress(&a, interface: 1) == "127.0.0.1")
        #expect(avahi_address_parse("fe80::1", AvahiProtocol(AVAHI_PROTO_UNSPEC), &a) != nil)
        #expect(numericAddress(&a, interface: 3) == "fe80::1%3")
        #expect(avahi_address_parse("fd00::2", AvahiProtocol(AVAHI_PROTO_UNSPEC), &a) != nil)
        #expect(numericAddress(&a, interface: 3) == "fd00::2")
    }
}
