import Foundation
import LocafotoDiscovery
import LocafotoFormats
import LocafotoWire
import Synchronization

/// One address where a peer was resolved over mDNS.
public struct PeerEndpoint: Codable, Sendable, Hashable {
    public var address: String
    public var port: UInt16
    public var family: String
    var instanceName: String
    var interfaceIndex: Int32
}

/// A peer as discovery sees it right now.
public struct OnlinePeer: Sendable {
    public var fingerprint: Fingerprint
    public var name: String
    public var endpoints: [PeerEndpoint]
    public var lastSeen: Date
}

/// Peers currently advertised on the network, keyed by the fingerprint in their TXT record.
/// The fingerprint is only a claim until a handshake proves it (the session checks it).
public final class PeerDirectory: Sendable {
    private let own: Fingerprint
    private let state = Mutex<[Fingerprint: OnlinePeer]>([:])
    /// Advertisements whose TXT record could not be read, for `locafoto doctor`-style diagnostics.
    private let ignored = Mutex<Int>(0)

    public init(own: Fingerprint) {
        self.own = own
    }

    public func apply(_ event: DiscoveryEvent) {
        switch event {
        case .resolved(let s):
            guard s.txt["v"] == "1", let fpText = s.txt["fp"], let fp = try? Fingerprint(parsing: fpText) else {
                ignored.withLock { $0 += 1 }
                return
            }
            guard fp != own, !s.isOwn else { return }
            let name = Self.displayName(s.txt["name"], fallback: s.instanceName)
            let endpoint = PeerEndpoint(
                address: s.address, port: s.port, family: s.family.rawValue, instanceName: s.instanceName,
                interfaceIndex: s.interfaceIndex)
            state.withLock { peers in
                var p = peers[fp] ?? OnlinePeer(fingerprint: fp, name: name, endpoints: [], lastSeen: Date())
                p.name = name
                p.lastSeen = Date()
                p.endpoints.removeAll {
                    $0.instanceName == endpoint.instanceName && $0.interfaceIndex == endpoint.interfaceIndex && $0.family == endpoint.family
                }
                // IPv4 first: link-local IPv6 needs a scope and is the more fragile path.
                if endpoint.family == IPFamily.ipv4.rawValue { p.endpoints.insert(endpoint, at: 0) } else { p.endpoints.append(endpoint) }
                peers[fp] = p
            }
        case .removed(let instance, let iface, let family):
            state.withLock { peers in
                for (fp, var p) in peers {
                    p.endpoints.removeAll { $0.instanceName == instance && $0.interfaceIndex == iface && $0.family == family.rawValue }
                    peers[fp] = p.endpoints.isEmpty ? nil : p
                }
            }
        case .daemonUnavailable:
            // What mDNS said is stale now; peers reached by address stay.
            state.withLock { peers in
                for (fp, var p) in peers {
                    p.endpoints.removeAll { !$0.instanceName.hasPrefix("static:") }
                    peers[fp] = p.endpoints.isEmpty ? nil : p
                }
            }
        default:
            break
        }
    }

    /// A peer proven by a handshake at a configured address (no mDNS involved).
    func applyStatic(peer: PeerIdentity, endpoint: PeerEndpoint) {
        state.withLock { peers in
            var p = peers[peer.fingerprint] ?? OnlinePeer(fingerprint: peer.fingerprint, name: peer.name, endpoints: [], lastSeen: Date())
            p.lastSeen = Date()
            if p.endpoints.allSatisfy({ $0.instanceName != endpoint.instanceName }) { p.endpoints.append(endpoint) }
            if p.endpoints.count == 1 { p.name = peer.name }
            peers[peer.fingerprint] = p
        }
    }

    func removeStatic(endpoint: PeerEndpoint) {
        state.withLock { peers in
            for (fp, var p) in peers {
                p.endpoints.removeAll { $0.instanceName == endpoint.instanceName }
                peers[fp] = p.endpoints.isEmpty ? nil : p
            }
        }
    }

    public var online: [OnlinePeer] {
        state.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }

    public func online(_ fp: Fingerprint) -> OnlinePeer? {
        state.withLock { $0[fp] }
    }

    static func displayName(_ txt: String?, fallback: String) -> String {
        DisplayName.sanitize(txt?.isEmpty == false ? txt! : fallback, fallback: DisplayName.sanitize(fallback))
    }
}

/// The result of naming a peer on the command line.
struct PeerChoice: Sendable {
    var fingerprint: Fingerprint
    var name: String
    var endpoints: [PeerEndpoint]
    var known: PeerRecord?
}

enum PeerResolver {
    /// Finds the one peer meant by `query`: a display name (case-insensitive) or a fingerprint
    /// prefix (at least 4 characters). Ambiguity is an error that lists the candidates; a name
    /// that belongs to a known peer but now comes with another key is refused.
    static func resolve(_ query: String, online: [OnlinePeer], known: [PeerRecord]) throws -> PeerChoice {
        let q = query.trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty else { throw AgentError(.invalidRequest, "name a peer by display name or fingerprint") }
        var byFP: [Fingerprint: PeerChoice] = [:]
        let knownByFP = Dictionary(known.compactMap { k in (try? Fingerprint(parsing: k.fingerprint)).map { ($0, k) } }, uniquingKeysWith: { a, _ in a })
        let isPrefix = Fingerprint.normalise(q).count >= 4
        for p in online where p.name.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && p.fingerprint.matches(prefix: q)) {
            byFP[p.fingerprint] = PeerChoice(fingerprint: p.fingerprint, name: p.name, endpoints: p.endpoints, known: knownByFP[p.fingerprint])
        }
        for (fp, k) in knownByFP where byFP[fp] == nil && (k.name.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && fp.matches(prefix: q))) {
            byFP[fp] = PeerChoice(fingerprint: fp, name: k.name, endpoints: [], known: k)
        }
        let matches = byFP.values.sorted { $0.fingerprint < $1.fingerprint }
        if matches.isEmpty {
            throw AgentError(.notFound, "no peer named '\(q)' is visible; run `locafoto peers` to see who is on the network")
        }
        if matches.count > 1 {
            let online = matches.filter { !$0.endpoints.isEmpty }
            let knownNamed = matches.filter { $0.known != nil && $0.known!.name.caseInsensitiveCompare(q) == .orderedSame }
            // A known peer is offline and an unknown one now uses its name: the loud refusal.
            if online.count == 1, online[0].known == nil, let k = knownNamed.first, k.endpoints.isEmpty {
                throw AgentError(
                    .identityMismatch,
                    "REFUSED: '\(q)' is known as \(k.fingerprint), but the peer now answering to that name presents another key (\(online[0].fingerprint)). It may be an impostor. If \(q) really has a new key, verify it and send to the full fingerprint, or run `locafoto forget \(k.fingerprint)`.")
            }
            let list = matches.map { "  \($0.name)  \($0.fingerprint)\($0.endpoints.isEmpty ? " (offline)" : "")" }.joined(separator: "\n")
            throw AgentError(.ambiguous, "'\(q)' matches several peers; name one by fingerprint:\n\(list)")
        }
        return matches[0]
    }
}
