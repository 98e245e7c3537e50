import Foundation
import LocafotoLocalSend
import Testing

/// Which device `send NAME` means, from what was heard and who was met; no socket.
@Suite("LocalSend: send targets")
struct LocalSendTargetsTests {
    static let t0 = ContinuousClock.now
    static let fpA = String(repeating: "A1", count: 32)
    static let fpB = String(repeating: "B2", count: 32)

    static func heard(_ alias: String, _ fingerprint: String, at address: String, port: Int = 53317, http: Bool = false)
        -> LocalSendDiscovery.Heard
    {
        LocalSendDiscovery.Heard(
            device: LocalSendDevice(
                alias: alias, version: "2.2", deviceModel: nil, deviceType: .mobile, fingerprint: fingerprint,
                port: port, protocol: http ? "http" : "https", download: false),
            address: address, at: t0)
    }

    @Test("an address, with or without the prefix's port, names whoever answers there (certificate learnt)")
    func addresses() {
        #expect(
            LocalSendTargets.resolve("localsend:192.168.1.20", nearby: [], known: [])
                == .target(.init(alias: "192.168.1.20", host: "192.168.1.20", port: 53317, fingerprint: nil)))
        #expect(
            LocalSendTargets.resolve("localsend:10.0.0.2:4000", nearby: [], known: [])
                == .target(.init(alias: "10.0.0.2", host: "10.0.0.2", port: 4000, fingerprint: nil)))
        #expect(
            LocalSendTargets.resolve("localsend:[fe80::1%eth0]:53318", nearby: [], known: [])
                == .target(.init(alias: "fe80::1%eth0", host: "fe80::1%eth0", port: 53318, fingerprint: nil)))
        #expect(LocalSendTargets.resolve("localsend:10.0.0.2:99999", nearby: [], known: []) == .none)
        #expect(LocalSendTargets.resolve("localsend:300.1.1.1", nearby: [], known: []) == .none)
        #expect(LocalSendTargets.resolve("localsend:", nearby: [], known: []) == .none)
    }

    @Test("a name is an alias in any case or a fingerprint prefix, pinned to the certificate heard")
    func names() {
        let nearby = [Self.heard("Pixel", Self.fpA, at: "192.168.1.5", port: 53318)]
        let pixel = LocalSendTargets.Target(alias: "Pixel", host: "192.168.1.5", port: 53318, fingerprint: Self.fpA)
        #expect(LocalSendTargets.resolve("pixel", nearby: nearby, known: []) == .target(pixel))
        #expect(LocalSendTargets.resolve("localsend:Pixel", nearby: nearby, known: []) == .target(pixel))
        #expect(LocalSendTargets.resolve("a1a1", nearby: nearby, known: []) == .target(pixel))
        #expect(LocalSendTargets.resolve("a1a", nearby: nearby, known: []) == .none)  // too short
        #expect(LocalSendTargets.resolve("tablet", nearby: nearby, known: []) == .none)
    }

    @Test("a device met before and not heard now is tried at its last address")
    func known() {
        let known = [LocalSendTargets.Known(fingerprint: Self.fpA, alias: "Pixel", address: "192.168.1.9")]
        #expect(
            LocalSendTargets.resolve("Pixel", nearby: [], known: known)
                == .target(.init(alias: "Pixel", host: "192.168.1.9", port: 53317, fingerprint: Self.fpA)))
        let withPort = [LocalSendTargets.Known(fingerprint: Self.fpA, alias: "Pixel", address: "10.0.0.3", port: 4000)]
        #expect(
            LocalSendTargets.resolve("Pixel", nearby: [], known: withPort)
                == .target(.init(alias: "Pixel", host: "10.0.0.3", port: 4000, fingerprint: Self.fpA)))
        let noAddress = [LocalSendTargets.Known(fingerprint: Self.fpA, alias: "Pixel", address: nil)]
        #expect(LocalSendTargets.resolve("Pixel", nearby: [], known: noAddress) == .none)
    }

    @Test("a known alias heard with another certificate is refused, not sent to")
    func certificateChanged() {
        let known = [LocalSendTargets.Known(fingerprint: Self.fpA, alias: "Pixel", address: "192.168.1.9")]
        let nearby = [Self.heard("Pixel", Self.fpB, at: "192.168.1.66")]
        #expect(
            LocalSendTargets.resolve("Pixel", nearby: nearby, known: known)
                == .certificateChanged(alias: "Pixel", known: Self.fpA, now: Self.fpB))
        // Both heard: two devices by one name.
        let both = nearby + [Self.heard("Pixel", Self.fpA, at: "192.168.1.9")]
        #expect(
            LocalSendTargets.resolve("Pixel", nearby: both, known: known)
                == .ambiguous([("Pixel", Self.fpA), ("Pixel", Self.fpB)]))
    }

    @Test("a device that speaks plain HTTP is named as such, never sent to")
    func plainHTTP() {
        let nearby = [Self.heard("Old phone", Self.fpA, at: "192.168.1.5", http: true)]
        #expect(LocalSendTargets.resolve("old phone", nearby: nearby, known: []) == .plainHTTP(alias: "Old phone"))
        #expect(
            LocalSendTargets.resolve("localsend:192.168.1.5", nearby: nearby, known: [])
                == .plainHTTP(alias: "Old phone"))
    }
}
