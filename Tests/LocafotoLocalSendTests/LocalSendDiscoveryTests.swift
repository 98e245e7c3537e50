import Foundation
import LocafotoLocalSend
import Testing

/// Multicast discovery without a socket: datagrams and instants in, what to multicast out.
@Suite("LocalSend: multicast discovery")
struct LocalSendDiscoveryTests {
    static let t0 = ContinuousClock.now
    static let own = LocalSendDevice(
        alias: "desk", version: "2.1", deviceModel: "Locafoto", deviceType: .desktop, fingerprint: "OWN", port: 53317,
        protocol: "https", download: false)

    static func datagram(_ fields: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: fields))
    }

    static func phone(announce: Bool?, fingerprint: String = "PHONE") -> [UInt8] {
        var f: [String: Any] = [
            "alias": "Pixel", "version": "2.2", "deviceModel": "Google", "deviceType": "mobile",
            "fingerprint": fingerprint, "port": 53317, "protocol": "https", "download": false,
        ]
        if let announce { f["announce"] = announce }
        return datagram(f)
    }

    @Test("the node's announcement says who it is, with announce true")
    func announcement() throws {
        let d = LocalSendDiscovery(own: Self.own)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(d.announcement)) as? [String: Any])
        #expect(json["fingerprint"] as? String == "OWN")
        #expect(json["announce"] as? Bool == true)
        #expect(json["port"] as? Int == 53317)
        #expect(json["protocol"] as? String == "https")
    }

    @Test("an announcement is answered once on the group (announce false) and the device remembered")
    func answers() throws {
        var d = LocalSendDiscovery(own: Self.own)
        let actions = d.receive(Self.phone(announce: true), from: "192.168.1.20", now: Self.t0)
        guard case .multicast(let bytes) = try #require(actions.first) else { return }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json["announce"] as? Bool == false)
        #expect(json["fingerprint"] as? String == "OWN")
        #expect(d.heard["PHONE"]?.address == "192.168.1.20")
        #expect(d.heard["PHONE"]?.device.alias == "Pixel")
        // A flood from the same address is answered once per interval.
        for i in 1...50 {
            #expect(d.receive(Self.phone(announce: true), from: "192.168.1.20", now: Self.t0 + .milliseconds(i)) == [])
        }
        #expect(
            d.receive(
                Self.phone(announce: true), from: "192.168.1.20", now: Self.t0 + LocalSendDiscovery.answerInterval
            )
            .count == 1)
    }

    @Test("answers, the node's own datagrams, junk and oversized datagrams bring no answer")
    func silent() {
        var d = LocalSendDiscovery(own: Self.own)
        #expect(d.receive(Self.phone(announce: false), from: "10.0.0.2", now: Self.t0) == [])
        #expect(d.heard["PHONE"] != nil)  // remembered, not answered
        #expect(d.receive(Self.phone(announce: nil, fingerprint: "P2"), from: "10.0.0.3", now: Self.t0) == [])
        #expect(d.receive(Self.phone(announce: true, fingerprint: "OWN"), from: "10.0.0.4", now: Self.t0) == [])
        #expect(d.heard["OWN"] == nil)
        #expect(d.receive(Array("not json".utf8), from: "10.0.0.5", now: Self.t0) == [])
        #expect(
            d.receive(
                [UInt8](repeating: 0x20, count: LocalSendDiscovery.maxDatagramBytes + 1), from: "10.0.0.6", now: Self.t0
            ) == [])
        let v1 = Self.datagram(["alias": "old", "version": "1.0", "fingerprint": "V1", "announce": true])
        #expect(d.receive(v1, from: "10.0.0.7", now: Self.t0) == [])
        #expect(d.heard["V1"] == nil)
    }

    @Test("at most maxDevices are remembered, the oldest go first")
    func bounded() {
        var d = LocalSendDiscovery(own: Self.own)
        for i in 0..<(LocalSendDiscovery.maxDevices + 10) {
            _ = d.receive(
                Self.phone(announce: false, fingerprint: "F\(i)"), from: "10.0.\(i / 250).\(i % 250)",
                now: Self.t0 + .seconds(i))
        }
        #expect(d.heard.count == LocalSendDiscovery.maxDevices)
        #expect(d.heard["F0"] == nil)
        #expect(d.heard["F\(LocalSendDiscovery.maxDevices + 9)"] != nil)
    }
}
