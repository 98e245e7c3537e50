import Foundation
import LocafotoFormats
import LocafotoNode
import LocafotoNoise
import LocafotoSession
import LocafotoWire
import NIOCore
import ServiceLifecycle

/// A peer address given by hand (`--peer HOST:PORT`), for networks where multicast does not
/// pass (VLANs, client isolation, containers on a bridge): `192.168.1.20:47820`,
/// `[fe80::1%eth0]:47820`, `nas.local:47820`.
public struct StaticAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let host: Substring, port: Substring
        if t.hasPrefix("[") {
            guard let close = t.firstIndex(of: "]"), t[t.index(after: close)...].hasPrefix(":") else {
                throw AgentError(.invalidRequest, "'\(text)' is not [IPv6]:PORT")
            }
            host = t[t.index(after: t.startIndex)..<close]
            port = t[t.index(close, offsetBy: 2)...]
        } else {
            guard let colon = t.lastIndex(of: ":"), !t[..<colon].contains(":") else {
                throw AgentError(.invalidRequest, "'\(text)' is not HOST:PORT (write IPv6 addresses as [addr]:port)")
            }
            host = t[..<colon]
            port = t[t.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253, !host.contains(where: { $0 == " " || $0 == "/" }),
            let p = UInt16(port), p > 0
        else { throw AgentError(.invalidRequest, "'\(text)' is not HOST:PORT with a port of 1...65535") }
        self.host = String(host)
        self.port = p
    }

    /// Whether `text` looks like an address rather than a peer's name or fingerprint.
    public static func looksLikeAddress(_ text: String) -> Bool {
        (try? StaticAddress(parsing: text)) != nil && text.contains(where: { $0 == "." || $0 == "[" || $0 == ":" })
    }

    /// The port agents listen on unless told otherwise (`agent --port`).
    public static let defaultPort: UInt16 = 47820

    /// An address named by the user: HOST:PORT, or an IP address alone (192.168.1.20, fe80::1,
    /// [fe80::1]), which means the default port. nil for anything else (a peer's name).
    public static func named(_ text: String) -> StaticAddress? {
        if looksLikeAddress(text), let a = try? StaticAddress(parsing: text) { return a }
        var bare = text.trimmingCharacters(in: .whitespaces)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        let ip = bare.split(separator: "%", maxSplits: 1).first.map(String.init) ?? bare  // fe80::1%eth0
        var v4 = in_addr(), v6 = in6_addr()
        guard inet_pton(AF_INET, ip, &v4) == 1 || inet_pton(AF_INET6, ip, &v6) == 1 else { return nil }
        return try? StaticAddress(parsing: bare.contains(":") ? "[\(bare)]:\(defaultPort)" : "\(bare):\(defaultPort)")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var endpoint: PeerEndpoint {
        PeerEndpoint(
            address: host, port: port, family: host.contains(":") ? "ipv6" : "ipv4",
            instanceName: "static:\(description)", interfaceIndex: -1)
    }
}

/// Learns who answers at an address: the handshake, PING, PONG, close, without offering
/// anything; the peer is then listed as online there.
struct PeerProbe: Sendable {
    let sessions: PeerSessions
    let identity: Identity
    let store: AgentStore
    let directory: PeerDirectory

    /// Connects to `address`, runs the handshake (learning who answers), exchanges PING/PONG and
    /// closes without offering anything. The peer is then listed as online at that address.
    @discardableResult
    func probe(_ address: StaticAddress) async throws -> PeerIdentity {
        let peer = try await handshakeAndPing(address.endpoint, expected: nil)
        guard peer.fingerprint != identity.fingerprint else {
            throw AgentError(.invalidRequest, "\(address) is this node itself")
        }
        // A known peer keeps its trust; only its address and name are refreshed.
        try store.sawPeer(
            fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name,
            address: address.description)
        directory.applyStatic(peer: peer, endpoint: address.endpoint)
        return peer
    }

    /// A session that only proves identities (and records the pairing code): handshake, PING,
    /// PONG, close. `expected` pins the answer to a fingerprint, as for a send.
    func handshakeAndPing(_ endpoint: PeerEndpoint, expected: Fingerprint?) async throws -> PeerIdentity {
        try await sessions.withSession(endpoint, expected: expected) { s in
            try await s.send(.ping)
            guard case .pong? = try await s.next() else {
                throw AgentError(.peerUnavailable, "\(endpoint.address):\(endpoint.port) did not answer PING")
            }
            return s.peer
        }
    }
}

extension Agent {
    var peerProbe: PeerProbe { PeerProbe(sessions: sessions, identity: identity, store: store, directory: directory) }

    @discardableResult
    func probe(_ address: StaticAddress) async throws -> PeerIdentity { try await peerProbe.probe(address) }

    /// A handshake with the peer at the first of its addresses that answers (a peer advertises
    /// IPv6 and IPv4 addresses and may listen on one family only, as `send` tries them too).
    func handshakeAtAny(_ endpoints: [PeerEndpoint], expected: Fingerprint) async throws -> PeerIdentity {
        var lastError: (any Error)?
        for endpoint in endpoints {
            do {
                return try await peerProbe.handshakeAndPing(endpoint, expected: expected)
            } catch let e as AgentError where e.code == .identityMismatch {
                throw e  // someone answered for the peer with another key: no other address is tried
            } catch {
                lastError = error
            }
        }
        throw lastError ?? AgentError(.peerUnavailable, "no address to reach the peer at")
    }

    /// `locafoto pair PEER`: a fresh handshake with the peer; both sides now show the same code.
    /// A known peer that is not online this moment is waited for up to `wait`, as by `send`.
    func pair(_ query: String, wait: Duration = Agent.sendWait) async throws -> PairingBook.Entry {
        var q = query
        if let address = StaticAddress.named(query) {
            q = try await probe(address).fingerprint.description
        }
        let choice = try PeerResolver.resolve(
            q, online: directory.online, known: try store.peers(), recent: directory.recentlySeen)
        var endpoints = choice.endpoints
        if endpoints.isEmpty {
            endpoints = await directory.waitUntilOnline(choice.fingerprint, timeout: wait)?.endpoints ?? []
        }
        guard !endpoints.isEmpty else {
            throw AgentError(
                .peerUnavailable,
                "\(choice.name) [\(choice.fingerprint.short)] is not online (waited \(wait.components.seconds) s)")
        }
        let peer = try await handshakeAtAny(endpoints, expected: choice.fingerprint)
        try store.sawPeer(fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil)
        guard let entry = pairing.recent.first(where: { $0.fingerprint == peer.fingerprint.description }) else {
            throw AgentError(.internalError, "no pairing code was recorded")
        }
        return entry
    }
}

/// Probes the configured static peers, and the last-known addresses of trusted peers that mDNS
/// does not show, and the addresses reached once by hand, every `interval`. A peer that stops
/// answering is no longer listed online there (PeerTable's rules).
struct StaticPeerService: Service {
    let agent: Agent
    static let interval: Duration = .seconds(15)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await probeAll()
                try await agent.clock.sleep(for: Self.interval)
            }
        }
    }

    func probeAll() async {
        var addresses = Set(agent.configuration.staticPeers)
        // Addresses reached once (`send HOST:PORT`, `pair HOST:PORT`) are probed again too: the
        // peer stays listed there only while it answers.
        for e in agent.directory.probedEndpoints {
            if let a = try? StaticAddress(parsing: String(e.instanceName.dropFirst("static:".count))) {
                addresses.insert(a)
            }
        }
        // Peers mDNS shows need no probing; a peer listed only at a probed address is re-probed.
        let seenOverMDNS = Set(
            agent.directory.online.filter { $0.endpoints.contains { !$0.instanceName.hasPrefix("static:") } }.map(
                \.fingerprint.description))
        for p in (try? agent.store.peers()) ?? [] where p.trust == .trusted && !seenOverMDNS.contains(p.fingerprint) {
            if let last = p.lastAddress, let a = try? StaticAddress(parsing: last) { addresses.insert(a) }
        }
        await withTaskGroup(of: Void.self) { group in
            for a in addresses {
                group.addTask {
                    do {
                        let peer = try await agent.probe(a)
                        agent.logger.debug("static peer \(a) is \(peer.name) [\(peer.fingerprint.short)]")
                    } catch {
                        agent.directory.removeStatic(endpoint: a.endpoint)
                        agent.logger.debug("static peer \(a) does not answer: \(error)")
                    }
                }
            }
        }
    }
}
