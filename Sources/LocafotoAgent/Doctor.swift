import Foundation
import LocafotoDiscovery
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoWire
import Synchronization

/// What `locafoto doctor` reports: why a peer may be missing.
public struct DoctorReport: Codable, Sendable {
    public struct Interface: Codable, Sendable {
        public var name: String
        public var addresses: [String]
        public var up: Bool
        public var multicast: Bool
        /// Container/VM/VPN interfaces whose mDNS results the agent ignores (see `--skip-interfaces`).
        public var skipped: Bool
    }

    public struct Check: Codable, Sendable {
        public var name: String
        public var ok: Bool
        public var detail: String
    }

    public var name: String
    public var fingerprint: String
    public var port: Int
    public var discovery: String
    /// Where this node's own advertisement was resolved back (what peers will see).
    public var ownAdvertisement: [String]
    public var interfaces: [Interface]
    public var staticPeers: [String]
    public var peersOnline: Int
    public var checks: [Check]
    public var hints: [String]
}

/// Interfaces whose names start with these are skipped by default: container bridges, VMs, VPNs.
public let defaultSkippedInterfacePrefixes = [
    "docker", "br-", "veth", "virbr", "vnet", "tun", "tap", "wg", "podman", "cni", "flannel", "zt",
]

extension Agent {
    func doctor() -> DoctorReport {
        let port = listeningPort.withLock { $0 }
        let discovery = self.discovery.status.withLock { $0 }
        let own = self.discovery.ownAdvertisement.withLock { Array($0).sorted() }
        let interfaces = Self.interfaces().map { i -> DoctorReport.Interface in
            var i = i
            i.skipped = DiscoveryService.skips(i.name, configuration.skipInterfaces)
            return i
        }
        var checks: [DoctorReport.Check] = []
        var hints: [String] = []
        let daemonOK = discovery == "running"
        checks.append(
            .init(
                name: "avahi-daemon", ok: daemonOK,
                detail: daemonOK ? "reachable on the system D-Bus" : "not usable: \(discovery)"))
        if !daemonOK {
            hints.append(
                "Start avahi-daemon (`sudo systemctl start avahi-daemon`, or `scripts/avahi-lo.sh start` for loopback tests); peers can still be reached with `--peer HOST:PORT`."
            )
        }
        checks.append(
            .init(
                name: "own advertisement", ok: !own.isEmpty,
                detail: own.isEmpty
                    ? "this node's _locafoto._tcp service was not seen resolved back yet"
                    : "resolved at \(own.joined(separator: ", "))"))
        let usable = interfaces.filter {
            $0.up && $0.multicast && !$0.skipped && $0.name != "lo" && !$0.addresses.isEmpty
        }
        checks.append(
            .init(
                name: "LAN interfaces", ok: !usable.isEmpty,
                detail: usable.isEmpty
                    ? "no up, multicast-capable interface with an address besides loopback"
                    : usable.map(\.name).joined(separator: ", ")))
        if usable.isEmpty {
            hints.append(
                "Without a multicast-capable LAN interface mDNS cannot find peers: connect to the network, or add peers by address (`locafoto agent --peer HOST:PORT`)."
            )
        }
        hints.append(
            "If a peer is missing: both machines must allow UDP 5353 (mDNS) and TCP \(port) (this agent) through their firewalls, e.g. `sudo nft list ruleset | grep -E '5353|\(port)'`."
        )
        hints.append(
            "Networks with client isolation (guest Wi-Fi) or separate VLANs block multicast: use `--peer HOST:PORT` there."
        )
        if interfaces.contains(where: \.skipped) {
            hints.append(
                "Peers seen only through container/VM/VPN interfaces (\(interfaces.filter(\.skipped).map(\.name).joined(separator: ", "))) are ignored; change with `--skip-interfaces`."
            )
        }
        return DoctorReport(
            name: displayName, fingerprint: identity.fingerprint.description, port: port, discovery: discovery,
            ownAdvertisement: own,
            interfaces: interfaces, staticPeers: configuration.staticPeers.map(\.description),
            peersOnline: directory.online.count,
            checks: checks, hints: hints)
    }

    static func interfaces() -> [DoctorReport.Interface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var byName: [String: DoctorReport.Interface] = [:]
        var order: [String] = []
        for p in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let name = String(cString: p.pointee.ifa_name)
            let flags = Int32(p.pointee.ifa_flags)
            if byName[name] == nil {
                order.append(name)
                byName[name] = .init(
                    name: name, addresses: [], up: flags & Int32(IFF_UP) != 0,
                    multicast: flags & Int32(IFF_MULTICAST) != 0, skipped: false)
            }
            guard let sa = p.pointee.ifa_addr else { continue }
            let family = Int32(sa.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let len = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            if getnameinfo(sa, len, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                byName[name]!.addresses.append(host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
            }
        }
        return order.compactMap { byName[$0] }
    }
}
