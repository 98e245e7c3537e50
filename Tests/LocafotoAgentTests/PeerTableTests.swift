import Foundation
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoFormats
import Testing

@testable import LocafotoAgent
@testable import LocafotoPeers

/// Replays avahi event sequences into the directory's state machine: no avahi, no sockets, and
/// time is whatever the test says it is.
@Suite("Peer table: discovery event orders")
struct PeerTableTests {
    static let own = Fingerprint(publicKey: SigningKey.generate().publicKey)
    static let carol = Fingerprint(publicKey: SigningKey.generate().publicKey)
    static let dave = Fingerprint(publicKey: SigningKey.generate().publicKey)
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A table with a replay log: `at(seconds)` sets the time of the next events.
    struct Replay {
        var table = PeerTable(own: PeerTableTests.own)
        var now = PeerTableTests.t0

        mutating func at(_ seconds: TimeInterval) { now = PeerTableTests.t0.addingTimeInterval(seconds) }

        mutating func new(_ name: String, _ iface: Int32 = 2, _ family: IPFamily = .ipv4) {
            table.apply(.appeared(instanceName: name, interfaceIndex: iface, family: family), at: now)
        }
        mutating func remove(_ name: String, _ iface: Int32 = 2, _ family: IPFamily = .ipv4) {
            table.apply(.removed(instanceName: name, interfaceIndex: iface, family: family), at: now)
        }
        mutating func resolved(
            _ name: String, _ fp: Fingerprint, _ iface: Int32 = 2, _ family: IPFamily = .ipv4, port: UInt16 = 47820,
            address: String? = nil, display: String? = nil, txt: [String: String]? = nil
        ) {
            let txt = txt ?? ["v": "1", "fp": fp.description, "name": display ?? name]
            table.apply(
                .resolved(
                    DiscoveredService(
                        instanceName: name, interfaceIndex: iface, family: family, hostName: "\(name).local",
                        address: address ?? (family == .ipv4 ? "10.77.0.3" : "fe80::3%\(iface)"), port: port, txt: txt,
                        isLocal: false,
                        isOwn: false)),
                at: now)
        }
        mutating func probed(_ address: String, _ fp: Fingerprint, name: String = "carol") throws {
            table.probeSucceeded(fp, name: name, at: try StaticAddress(parsing: address).endpoint, now: now)
        }
        mutating func probeFailed(_ address: String) throws {
            table.probeFailed(at: try StaticAddress(parsing: address).endpoint, now: now)
        }

        func online(_ fp: Fingerprint) -> OnlinePeer? { table.online(fp, at: now) }
        func addresses(_ fp: Fingerprint) -> [String] { online(fp)?.endpoints.map { "\($0.address):\($0.port)" } ?? [] }
    }

    @Test("a restart under the same name, REMOVE of the old instance before NEW of the new one")
    func restartRemoveBeforeNew() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol, port: 47820)
        #expect(r.online(Self.carol) != nil)
        r.at(1)
        r.remove("carol")  // the goodbye of the stopped agent
        #expect(r.online(Self.carol) == nil, "offline between the two instances: nothing advertises it")
        #expect(
            r.table.recentlySeen(at: r.now).map(\.fingerprint) == [Self.carol], "but recently seen: send waits for it")
        r.at(2)
        r.new("carol")
        r.resolved("carol", Self.carol, port: 47821)
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47821"])
        #expect(r.table.recentlySeen(at: r.now).isEmpty)
    }

    @Test("a restart under the same name, NEW of the new instance before REMOVE of the old one")
    func restartNewBeforeRemove() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol, port: 47820)
        r.at(1)
        r.new("carol")  // the new agent announces before the old record's removal is reported
        r.resolved("carol", Self.carol, port: 47821)
        r.at(2)
        r.remove("carol")  // the old instance's REMOVE
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47821"], "the old instance's REMOVE dropped the new one")
        r.remove("carol")
        #expect(r.online(Self.carol) == nil)
    }

    @Test("one peer on several interfaces and families: a partial removal keeps it online where it is still seen")
    func severalInterfacesPartialRemoval() {
        var r = Replay()
        for (iface, family) in [(Int32(1), IPFamily.ipv4), (2, .ipv4), (2, .ipv6)] {
            r.new("carol", iface, family)
            r.resolved("carol", Self.carol, iface, family, address: family == .ipv4 ? "10.0.\(iface).3" : nil)
        }
        #expect(r.addresses(Self.carol) == ["10.0.1.3:47820", "10.0.2.3:47820", "fe80::3%2:47820"], "IPv4 first")
        r.remove("carol", 2, .ipv4)
        #expect(r.addresses(Self.carol) == ["10.0.1.3:47820", "fe80::3%2:47820"])
        r.remove("carol", 1, .ipv4)
        r.remove("carol", 1, .ipv4)  // a repeated REMOVE changes nothing
        #expect(r.addresses(Self.carol) == ["fe80::3%2:47820"])
        r.remove("carol", 2, .ipv6)
        #expect(r.online(Self.carol) == nil)
    }

    @Test("a resolution that arrives after its entry was removed is stale")
    func resolveAfterRemove() {
        var r = Replay()
        r.new("carol")
        r.remove("carol")
        r.resolved("carol", Self.carol)  // the resolver's answer, delivered late
        #expect(r.online(Self.carol) == nil, "a late resolution brought a removed entry back")
        r.new("carol")  // announced again: resolutions count again
        r.resolved("carol", Self.carol)
        #expect(r.online(Self.carol) != nil)
    }

    @Test("a resolution without an announcement (callers that report only resolutions) counts as one")
    func resolveWithoutAnnouncement() {
        var r = Replay()
        r.resolved("carol", Self.carol)
        #expect(r.online(Self.carol) != nil)
        r.remove("carol")
        #expect(r.online(Self.carol) == nil)
    }

    @Test(
        "a name collision renamed by avahi ('carol #2'): each instance is its own entry, the TXT name is the display name"
    )
    func collisionRename() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        r.new("carol #2")
        r.resolved("carol #2", Self.dave, address: "10.77.0.4", display: "carol")
        #expect(r.online(Self.carol)?.name == "carol")
        #expect(r.online(Self.dave)?.name == "carol", "the display name is TXT name, not the instance name")
        #expect(r.addresses(Self.dave) == ["10.77.0.4:47820"])
        r.remove("carol")
        #expect(r.online(Self.carol) == nil)
        #expect(r.online(Self.dave) != nil)
    }

    @Test("a peer restarted and renamed by avahi ('carol #2') before the old instance's REMOVE stays online")
    func sameFingerprintRenamed() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        r.new("carol #2")
        r.resolved("carol #2", Self.carol, port: 47821)
        r.remove("carol")
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47821"])
    }

    @Test("an instance name that now advertises another fingerprint no longer lists the old peer there")
    func fingerprintMovesToAnotherName() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        r.at(5)
        r.resolved("carol", Self.dave, display: "carol")  // same instance, another key (a new identity)
        #expect(r.online(Self.carol) == nil, "the old key stayed online at an address that now proves another one")
        #expect(r.online(Self.dave) != nil)
        #expect(r.table.recentlySeen(at: r.now).first?.lastSeen == r.now)
        // And the first key moves to another instance name: online there.
        r.new("carol-laptop")
        r.resolved("carol-laptop", Self.carol, address: "10.77.0.9")
        #expect(r.addresses(Self.carol) == ["10.77.0.9:47820"])
    }

    @Test("an unreadable TXT replaces what the entry advertised, and is counted")
    func unreadableTXTReplaces() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        r.resolved("carol", Self.carol, txt: ["v": "2", "fp": Self.carol.description])
        #expect(r.online(Self.carol) == nil)
        #expect(r.table.ignoredAdvertisements == 1)
    }

    @Test("our own advertisement is never a peer")
    func ownIsNotAPeer() {
        var r = Replay()
        r.new("me")
        r.resolved("me", Self.own)
        #expect(r.table.online(at: r.now).isEmpty)
    }

    @Test("a daemon outage forgets every mDNS entry; the REMOVEs that follow and late resolutions change nothing")
    func daemonOutage() throws {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        try r.probed("10.77.0.4:47820", Self.dave, name: "dave")
        r.table.apply(.daemonUnavailable("gone"), at: r.now)
        #expect(r.online(Self.carol) == nil)
        #expect(r.online(Self.dave) != nil, "peers reached by address are not mDNS's")
        r.remove("carol")
        r.resolved("carol", Self.carol)
        #expect(r.online(Self.carol) == nil)
        r.table.apply(.daemonRunning, at: r.now)
        r.new("carol")
        r.resolved("carol", Self.carol)
        #expect(r.online(Self.carol) != nil)
        r.remove("carol")
        #expect(r.online(Self.carol) == nil, "the count restarted at the outage")
    }

    @Test("a peer reached by address goes offline at the first failed probe")
    func staticPeerOfflineAtFirstFailure() throws {
        var r = Replay()
        try r.probed("10.77.0.2:47820", Self.carol)
        #expect(r.addresses(Self.carol) == ["10.77.0.2:47820"])
        #expect(r.table.probedEndpoints.map(\.address) == ["10.77.0.2"], "re-probed every round")
        r.at(15)
        try r.probeFailed("10.77.0.2:47820")
        #expect(r.online(Self.carol) == nil, "still online after nothing answered")
        #expect(r.table.probedEndpoints.isEmpty)
    }

    @Test("a peer reached by address once is not online for longer than the probe validity without another success")
    func staticPeerExpires() throws {
        var r = Replay()
        try r.probed("10.77.0.2:47820", Self.carol)
        r.at(PeerTable.probeValidity)
        #expect(r.online(Self.carol) != nil)
        r.at(PeerTable.probeValidity + 1)
        #expect(r.online(Self.carol) == nil, "probes that never finish kept the peer online")
        try r.probed("10.77.0.2:47820", Self.carol)
        #expect(r.online(Self.carol) != nil)
    }

    @Test(
        "a static address and mDNS: losing one keeps the other; another key answering at the address replaces the first"
    )
    func staticAndMDNS() throws {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        try r.probed("192.168.1.3:47820", Self.carol)
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47820", "192.168.1.3:47820"], "mDNS endpoints first")
        try r.probeFailed("192.168.1.3:47820")
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47820"])
        try r.probed("192.168.1.3:47820", Self.carol)
        try r.probed("192.168.1.3:47820", Self.dave, name: "dave")
        #expect(r.addresses(Self.carol) == ["10.77.0.3:47820"])
        #expect(r.addresses(Self.dave) == ["192.168.1.3:47820"])
    }

    @Test("recently seen lasts recentWindow after a peer was last online")
    func recentWindow() {
        var r = Replay()
        r.new("carol")
        r.resolved("carol", Self.carol)
        r.at(100)
        r.remove("carol")
        r.at(100 + PeerTable.recentWindow)
        #expect(r.table.recentlySeen(at: r.now).map(\.name) == ["carol"])
        r.at(101 + PeerTable.recentWindow)
        #expect(r.table.recentlySeen(at: r.now).isEmpty)
    }
}
