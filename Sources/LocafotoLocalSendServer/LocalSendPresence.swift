import LocafotoLocalSend
import NIOCore

/// Where LocalSend's multicast speaks: the interfaces the agent's `--listen` address names. A
/// wildcard (`::`, `0.0.0.0`) is every interface, as before: IPv4 where the route to
/// 224.0.0.0/4 goes, and IPv6 (for `::`) on every interface with multicast and an IPv6 address.
/// A specific address is its interface alone, IPv4 and IPv6 as it has them; one no interface
/// has, or an interface without multicast, is nowhere (the HTTPS port still serves it).
struct LocalSendPresence: Sendable {
    /// One group on one interface (or by route).
    struct Way: Sendable {
        var groupAddress: SocketAddress
        /// nil: where the route to the group goes.
        var interface: NIONetworkDevice?
        /// The interface's name, for IPv6 link-local addresses heard on it.
        var scope: String?
        var label: String
    }

    static let group4 = try! SocketAddress(ipAddress: LocalSendDiscovery.group, port: LocalSendDiscovery.port)
    static let group6 = try! SocketAddress(ipAddress: LocalSendDiscovery.groupV6, port: LocalSendDiscovery.port)

    var ways: [Way] = []
    /// Why there is no way at all; nil when there is one.
    var nowhere: String?

    var label: String { ways.map(\.label).joined(separator: ", ") }

    init(listen host: String, devices: [NIONetworkDevice]) {
        let host = host == "localhost" ? "127.0.0.1" : host
        if ["", "::", "0.0.0.0", "*"].contains(host) {
            ways.append(
                Way(
                    groupAddress: Self.group4, interface: nil, scope: nil,
                    label: "\(LocalSendDiscovery.group) (by route)"))
            guard host != "0.0.0.0" else { return }
            var joined = Set<String>()  // one socket an interface, however many addresses it has
            for d in devices where d.multicastSupported && d.address?.protocol == .inet6 && !Self.isLoopback(d) {
                if joined.insert(d.name).inserted { ways.append(Self.v6(d)) }
            }
            return
        }
        guard let wanted = try? SocketAddress(ipAddress: host, port: 0).ipAddress else {
            // A host name: its interfaces are not known before it is resolved; by route, as before.
            ways.append(
                Way(
                    groupAddress: Self.group4, interface: nil, scope: nil,
                    label: "\(LocalSendDiscovery.group) (by route)"))
            return
        }
        guard let named = devices.first(where: { $0.address?.ipAddress == wanted }) else {
            nowhere = "no interface of this machine has the address \(host) that --listen names"
            return
        }
        let same = devices.filter { $0.name == named.name }
        guard named.multicastSupported else {
            nowhere =
                "\(named.name), the interface of \(host), has no multicast (`ip link set \(named.name) multicast on`)"
            return
        }
        if let d = same.first(where: { $0.multicastSupported && $0.address?.protocol == .inet }) {
            ways.append(
                Way(
                    groupAddress: Self.group4, interface: d, scope: nil,
                    label: "\(LocalSendDiscovery.group) on \(d.name)"))
        }
        if let d = same.first(where: { $0.multicastSupported && $0.address?.protocol == .inet6 }) {
            ways.append(Self.v6(d))
        }
    }

    private static func v6(_ d: NIONetworkDevice) -> Way {
        Way(groupAddress: group6, interface: d, scope: d.name, label: "\(LocalSendDiscovery.groupV6) on \(d.name)")
    }

    private static func isLoopback(_ d: NIONetworkDevice) -> Bool {
        d.name == "lo" || d.address?.ipAddress == "::1" || d.address?.ipAddress?.hasPrefix("127.") == true
    }
}
