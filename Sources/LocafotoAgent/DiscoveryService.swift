import Foundation
import LocafotoDiscovery
import LocafotoPeers
import LocafotoWire
import Logging
import ServiceLifecycle
import Synchronization

/// What mDNS discovery knows of itself, for `status` and `doctor`: whether avahi-daemon can be
/// used, and where this node's own advertisement was resolved back (what peers will see).
final class DiscoveryState: Sendable {
    /// `starting`, `running`, `disabled` (`--no-discovery`) or `unavailable: REASON`.
    let status = Mutex<String>("starting")
    /// `ADDRESS:PORT` of each resolution of this node's own service.
    let ownAdvertisement = Mutex<Set<String>>([])
}

/// Publishes this node over mDNS and feeds what it sees into the peer directory. A missing
/// avahi-daemon is reported plainly; the agent keeps running and discovery keeps retrying.
struct DiscoveryService: Service {
    /// This node's service: its name, port and TXT record (protocol/discovery.md).
    let advertisement: ServiceAdvertisement
    let directory: PeerDirectory
    let state: DiscoveryState
    /// Interface name prefixes whose results are ignored (`--skip-interfaces`).
    let skipInterfaces: [String]
    let logger: Logger

    func run() async throws {
        let discovery = Discovery(serviceType: WireProtocol.serviceType, advertisement: advertisement)
        let events = try discovery.start()
        defer { discovery.stop() }
        await withGracefulShutdownHandler {
            var warned = false
            for await event in events {
                if case .resolved(let s) = event {
                    if s.isOwn {
                        state.ownAdvertisement.withLock { _ = $0.insert("\(s.address):\(s.port)") }
                        continue
                    }
                    // Peers seen only through container/VM/VPN interfaces are not on this LAN.
                    if let name = Self.interfaceName(s.interfaceIndex), Self.skips(name, skipInterfaces) { continue }
                }
                directory.apply(event)
                switch event {
                case .daemonUnavailable(let reason):
                    state.status.withLock { $0 = "unavailable: \(reason)" }
                    if !warned {
                        logger.warning(
                            "mDNS discovery is unavailable: \(reason). Peers cannot be found until avahi-daemon runs; the agent keeps running and retries."
                        )
                        warned = true
                    }
                case .daemonRunning:
                    state.status.withLock { $0 = "running" }
                    if warned { logger.notice("avahi-daemon is reachable again") }
                    warned = false
                case .published(let name):
                    state.status.withLock { $0 = "running" }
                    logger.info("advertised as '\(name)' on \(WireProtocol.serviceType)")
                case .collision(let old, let new):
                    logger.notice("the service name '\(old)' is taken on the network; advertising as '\(new)'")
                case .resolved(let s) where !s.isOwn:
                    logger.debug("resolved \(s.instanceName) at \(s.address):\(s.port)")
                default:
                    break
                }
            }
        } onGracefulShutdown: {
            discovery.stop()
        }
    }

    /// Whether results seen through the interface `name` are ignored: it starts with one of
    /// `prefixes` (container bridges, VMs, VPNs by default).
    static func skips(_ name: String, _ prefixes: [String]) -> Bool {
        prefixes.contains { name.hasPrefix($0) }
    }

    static func interfaceName(_ index: Int32) -> String? {
        guard index > 0 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(index), &buf) != nil else { return nil }
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
