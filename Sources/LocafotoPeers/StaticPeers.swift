import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoNode
import LocafotoNoise
import LocafotoSession
import LocafotoWire
import NIOCore

/// A peer address given by hand (`--peer HOST:PORT`), for networks where multicast does not
/// pass (VLANs, client isolation, containers on a bridge): `192.168.1.20:47820`,
/// `[fe80::1%eth0]:47820`, `nas.local:47820`.
public struct StaticAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let host: Substring
        let port: Substring
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
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, ip, &v4) == 1 || inet_pton(AF_INET6, ip, &v6) == 1 else { return nil }
        return try? StaticAddress(parsing: bare.contains(":") ? "[\(bare)]:\(defaultPort)" : "\(bare):\(defaultPort)")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    package var endpoint: PeerEndpoint {
        PeerEndpoint(
            address: host, port: port, family: host.contains(":") ? "ipv6" : "ipv4",
            instanceName: "static:\(description)", interfaceIndex: -1)
    }
}

/// Learns who answers at an address: the handshake, PING, PONG, close, without offering
/// anything; the peer is then listed as online there.
package struct PeerProbe: Sendable {
    package let sessions: PeerSessions
    package let identity: Identity
    package let store: AgentStore
    package let directory: PeerDirectory

    package init(sessions: PeerSessions, identity: Identity, store: AgentStore, directory: PeerDirectory) {
        self.sessions = sessions
        self.identity = identity
        self.store = store
        self.directory = directory
    }

    /// Connects to `address`, runs the handshake (learning who answers), exchanges PING/PONG and
    /// closes without offering anything. The peer is then listed as online at that address.
    @discardableResult
    package func probe(_ address: StaticAddress) async throws -> PeerIdentity {
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
    package func handshakeAndPing(_ endpoint: PeerEndpoint, expected: Fingerprint?) async throws -> PeerIdentity {
        try await sessions.withSession(endpoint, expected: expected) { s in
            try await s.send(.ping)
            guard case .pong? = try await s.next() else {
                throw AgentError(.peerUnavailable, "\(endpoint.address):\(endpoint.port) did not answer PING")
            }
            return s.peer
        }
    }

    /// A handshake with the peer at the first of its addresses that answers (a peer advertises
    /// IPv6 and IPv4 addresses and may listen on one family only, as `send` tries them too).
    package func handshakeAtAny(
        _ endpoints: [PeerEndpoint], expected: Fingerprint, waitingUpTo wait: Duration = .zero
    ) async throws -> PeerIdentity {
        // A peer that just started may announce an address it does not listen on (IPv6
        // link-local, for an agent on IPv4 only) before the one it does: with `wait`, addresses
        // listed later are tried too, as `send` does.
        let deadline = directory.clock.now.advanced(by: wait)
        var failures: [any Error] = []
        var tried: Set<PeerEndpoint> = []
        var listed = endpoints
        while true {
            for endpoint in listed where !tried.contains(endpoint) {
                tried.insert(endpoint)
                do {
                    return try await handshakeAndPing(endpoint, expected: expected)
                } catch let e as AgentError where e.code == .identityMismatch {
                    throw e  // someone answered for the peer with another key: no other address is tried
                } catch {
                    failures.append(error)
                }
            }
            let left = deadline - directory.clock.now
            guard left > .zero,
                let next = await directory.waitForEndpoints(of: expected, otherThan: listed, timeout: left)
            else { break }
            listed = next
        }
        throw Self.unreachable(failures)
    }

    /// Every address failed: what happened at each (a person, or a test's log, needs to know
    /// whether one address refused and another timed out, not only the last).
    package static func unreachable(_ failures: [any Error]) -> any Error {
        guard failures.count > 1 else {
            return failures.first ?? AgentError(.peerUnavailable, "no address to reach the peer at")
        }
        let code = (failures.first as? AgentError)?.code ?? .peerUnavailable
        return AgentError(
            code,
            "none of the peer's \(failures.count) addresses answered: "
                + failures.map { "\($0)" }.joined(separator: "; "))
    }
}
