// Value types exchanged with users of LocafotoDiscovery. No Avahi here.

/// What we publish on the LAN: one DNS-SD service instance.
public struct ServiceAdvertisement: Sendable, Equatable {
    /// Desired instance name. Avahi may rename it on a collision ("name #2");
    /// the name actually in use is reported by `DiscoveryEvent.published`.
    public var name: String
    public var port: UInt16
    /// TXT key=value pairs. DNS-SD TXT is unordered, so a map is the honest type.
    public var txt: [String: String]

    public init(name: String, port: UInt16, txt: [String: String]) {
        self.name = name
        self.port = port
        self.txt = txt
    }
}

public enum IPFamily: String, Sendable, Codable {
    case ipv4, ipv6
}

/// One resolved instance as seen on one interface with one IP family.
/// The same instance shows up once per (interfaceIndex, family).
public struct DiscoveredService: Sendable, Hashable {
    public var instanceName: String
    public var interfaceIndex: Int32
    public var family: IPFamily
    public var hostName: String
    /// Numeric address. IPv6 link-local addresses carry a "%<ifindex>" scope so
    /// they can be passed to getaddrinfo/connect as they are.
    public var address: String
    public var port: UInt16
    public var txt: [String: String]
    /// Announced by this host (AVAHI_LOOKUP_RESULT_LOCAL).
    public var isLocal: Bool
    /// Published by this very `Discovery` (AVAHI_LOOKUP_RESULT_OUR_OWN).
    public var isOwn: Bool

    public init(
        instanceName: String, interfaceIndex: Int32, family: IPFamily, hostName: String,
        address: String, port: UInt16, txt: [String: String], isLocal: Bool, isOwn: Bool
    ) {
        self.instanceName = instanceName
        self.interfaceIndex = interfaceIndex
        self.family = family
        self.hostName = hostName
        self.address = address
        self.port = port
        self.txt = txt
        self.isLocal = isLocal
        self.isOwn = isOwn
    }
}

public enum DiscoveryEvent: Sendable, Equatable {
    /// The daemon cannot be used; discovery keeps retrying. Yielded once per outage,
    /// followed by `.removed` for every service seen before (their data is stale).
    case daemonUnavailable(String)
    /// Connected to a running avahi-daemon (again).
    case daemonRunning
    /// Our service is established under this (possibly renamed) name.
    case published(name: String)
    /// Our name was taken; we re-publish as `new`.
    case collision(old: String, new: String)
    /// The browser reported an instance on one interface and family (avahi's NEW), before
    /// it is resolved. Yielded for every NEW: avahi may report an instance again before the
    /// REMOVE of an earlier one (a restart under the same name), so users count them.
    case appeared(instanceName: String, interfaceIndex: Int32, family: IPFamily)
    /// A service appeared, or its data (address, port, TXT…) changed. Always after the
    /// `.appeared` of the same (instanceName, interfaceIndex, family); `instanceName` is the
    /// browser's spelling, so it matches `.appeared` and `.removed`.
    case resolved(DiscoveredService)
    /// The browser's REMOVE of one instance on one interface and family (one per `.appeared`).
    case removed(instanceName: String, interfaceIndex: Int32, family: IPFamily)
}
