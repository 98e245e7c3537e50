import Foundation
import LocafotoDiscovery
import LocafotoFormats
import LocafotoNode

/// One mDNS browse entry: avahi reports the same instance once per interface and address family.
package struct BrowseKey: Hashable, Sendable {
    package var instance: String
    package var interface: Int32
    package var family: IPFamily
}

/// Who is online and where, as a pure state machine: discovery events and probe outcomes go in
/// (with the time they happened), answers come out. No avahi, no sockets, no clock of its own.
///
/// Rules (protocol/discovery.md "Tracking peers"):
/// - mDNS: each browse entry (instance, interface, family) counts its `.appeared` minus its
///   `.removed`; it is present while that count is above zero, so a restarted peer whose new
///   announcement (NEW) comes before the old one's REMOVE stays present, and a REMOVE on one
///   interface or family leaves the others. A present entry's latest resolution says which
///   fingerprint it advertises; a resolution for an entry already removed is stale and ignored
///   (one for an entry never announced counts as its announcement). A resolution with another
///   fingerprint or an unreadable TXT replaces what the entry said before. A resolver failure is
///   not a removal: nothing changes. `.daemonUnavailable` forgets every mDNS entry.
/// - Peers reached by address (probes, `send HOST:PORT`): online at that address only while the
///   latest probe there succeeded, and for at most `probeValidity` after it; the first failed
///   probe or connection marks it offline there at once.
/// - A peer is online while it has at least one endpoint; it is "recently seen" for
///   `recentWindow` after it was last online.
package struct PeerTable: Sendable {
    package struct Advertised: Sendable {
        var fingerprint: Fingerprint
        var name: String
        var endpoint: PeerEndpoint
    }

    package struct Probed: Sendable {
        var fingerprint: Fingerprint
        var name: String
        var endpoint: PeerEndpoint
        var confirmedAt: Date
    }

    package struct Sighting: Sendable {
        var name: String
        var at: Date
    }

    /// Three probe rounds (StaticPeerService.interval): a probe that hangs cannot keep a peer online.
    package static let probeValidity: TimeInterval = 45
    /// How long a peer that went offline still counts as known to `send` (which then waits for it).
    package static let recentWindow: TimeInterval = 600

    package let own: Fingerprint
    private(set) var announced: [BrowseKey: Int] = [:]
    /// Entries removed and not announced since: their late resolutions are stale.
    private(set) var withdrawn: Set<BrowseKey> = []
    private(set) var advertised: [BrowseKey: Advertised] = [:]
    /// By the endpoint's instance name ("static:HOST:PORT").
    private(set) var probed: [String: Probed] = [:]
    private(set) var sightings: [Fingerprint: Sighting] = [:]
    /// Advertisements whose TXT record could not be read.
    private(set) var ignoredAdvertisements = 0

    package init(own: Fingerprint) {
        self.own = own
    }

    // MARK: Inputs

    package mutating func apply(_ event: DiscoveryEvent, at now: Date) {
        switch event {
        case .appeared(let instance, let interface, let family):
            let key = BrowseKey(instance: instance, interface: interface, family: family)
            announced[key, default: 0] += 1
            withdrawn.remove(key)
        case .resolved(let s):
            resolved(s, at: now)
        case .removed(let instance, let interface, let family):
            let key = BrowseKey(instance: instance, interface: interface, family: family)
            guard let count = announced[key] else { return }  // already forgotten (daemon outage)
            if count > 1 {
                announced[key] = count - 1
                return
            }
            announced[key] = nil
            withdrawn.insert(key)
            if let gone = advertised.removeValue(forKey: key) { saw(gone.fingerprint, gone.name, at: now) }
        case .daemonUnavailable:
            for (_, gone) in advertised { saw(gone.fingerprint, gone.name, at: now) }
            withdrawn.formUnion(announced.keys)
            announced.removeAll()
            advertised.removeAll()
        case .daemonRunning, .published, .collision:
            break
        }
    }

    private mutating func resolved(_ s: DiscoveredService, at now: Date) {
        guard !s.isOwn else { return }
        let key = BrowseKey(instance: s.instanceName, interface: s.interfaceIndex, family: s.family)
        guard !withdrawn.contains(key) else { return }
        if announced[key] == nil { announced[key] = 1 }
        let previous = advertised.removeValue(forKey: key)
        if let previous { saw(previous.fingerprint, previous.name, at: now) }
        guard s.txt["v"] == "1", let text = s.txt["fp"], let fp = try? Fingerprint(parsing: text) else {
            ignoredAdvertisements += 1
            return
        }
        guard fp != own else { return }
        let name = PeerDirectory.displayName(s.txt["name"], fallback: s.instanceName)
        let endpoint = PeerEndpoint(
            address: s.address, port: s.port, family: s.family.rawValue, instanceName: s.instanceName,
            interfaceIndex: s.interfaceIndex)
        advertised[key] = Advertised(fingerprint: fp, name: name, endpoint: endpoint)
        saw(fp, name, at: now)
    }

    /// A handshake at `endpoint` (an address given by hand) proved `fingerprint`.
    package mutating func probeSucceeded(_ fingerprint: Fingerprint, name: String, at endpoint: PeerEndpoint, now: Date)
    {
        if let previous = probed[endpoint.instanceName], previous.fingerprint != fingerprint {
            saw(previous.fingerprint, previous.name, at: now)
        }
        probed[endpoint.instanceName] = Probed(
            fingerprint: fingerprint, name: name, endpoint: endpoint, confirmedAt: now)
        saw(fingerprint, name, at: now)
    }

    /// Nothing answered a probe or a connection at `endpoint`: offline there at once.
    package mutating func probeFailed(at endpoint: PeerEndpoint, now: Date) {
        guard let gone = probed.removeValue(forKey: endpoint.instanceName) else { return }
        if isOnline(gone, at: now) { saw(gone.fingerprint, gone.name, at: now) }
    }

    private mutating func saw(_ fp: Fingerprint, _ name: String, at now: Date) {
        sightings[fp] = Sighting(name: name, at: max(now, sightings[fp]?.at ?? now))
    }

    // MARK: Answers

    private func isOnline(_ p: Probed, at now: Date) -> Bool {
        now.timeIntervalSince(p.confirmedAt) <= Self.probeValidity
    }

    /// Every peer online at `now`, sorted by name; endpoints: mDNS IPv4, mDNS IPv6, then probed
    /// addresses (link-local IPv6 needs a scope and is the more fragile path).
    package func online(at now: Date) -> [OnlinePeer] {
        var endpoints: [Fingerprint: [(rank: Int, endpoint: PeerEndpoint)]] = [:]
        var names: [Fingerprint: String] = [:]
        for (_, a) in advertised {
            endpoints[a.fingerprint, default: []].append(
                (a.endpoint.family == IPFamily.ipv4.rawValue ? 0 : 1, a.endpoint))
            names[a.fingerprint] = names[a.fingerprint] ?? a.name
        }
        for (_, p) in probed where isOnline(p, at: now) {
            endpoints[p.fingerprint, default: []].append((2, p.endpoint))
            names[p.fingerprint] = names[p.fingerprint] ?? p.name
        }
        return endpoints.map { fp, list in
            let sorted = list.sorted {
                ($0.rank, $0.endpoint.instanceName, $0.endpoint.interfaceIndex) < (
                    $1.rank, $1.endpoint.instanceName, $1.endpoint.interfaceIndex
                )
            }
            return OnlinePeer(
                fingerprint: fp, name: sightings[fp]?.name ?? names[fp]!, endpoints: sorted.map(\.endpoint),
                lastSeen: sightings[fp]?.at ?? now)
        }.sorted { ($0.name, $0.fingerprint) < ($1.name, $1.fingerprint) }
    }

    package func online(_ fp: Fingerprint, at now: Date) -> OnlinePeer? {
        online(at: now).first { $0.fingerprint == fp }
    }

    /// Peers offline at `now` that were online within `recentWindow` (no endpoints).
    package func recentlySeen(at now: Date) -> [OnlinePeer] {
        let on = Set(online(at: now).map(\.fingerprint))
        return sightings.compactMap { fp, s in
            guard !on.contains(fp), now.timeIntervalSince(s.at) <= Self.recentWindow else { return nil }
            return OnlinePeer(fingerprint: fp, name: s.name, endpoints: [], lastSeen: s.at)
        }.sorted { ($0.name, $0.fingerprint) < ($1.name, $1.fingerprint) }
    }

    /// Addresses where a probe succeeded and has not failed since: re-probed every round, so a
    /// peer reached once by address goes offline at the first probe nobody answers.
    package var probedEndpoints: [PeerEndpoint] {
        probed.values.map(\.endpoint).sorted { $0.instanceName < $1.instanceName }
    }
}
