import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoSending
import LocafotoSession
import LocafotoTransfers

/// `/v1/peers`, `/v1/pairing` and `/v1/policy`: the peers this node knows or sees, trust,
/// pairing codes, and who may make offers.
package struct PeersController: Sendable {
    let store: AgentStore
    let directory: PeerDirectory
    let probe: PeerProbe
    let pairing: PairingBook
    let inbox: Inbox

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/peers") { _ in .json(try list()) }
        t.post("/v1/peers/:peer/pair") { r in .json(try await pair(try r.parameter("peer")).answer) }
        t.get("/v1/pairing") { _ in .json(pairing.recent.map(\.answer)) }
        for action in TrustChange.allCases {
            t.post("/v1/peers/:peer/\(action.rawValue)") { r in .json(try await change(try r.parameter("peer"), action))
            }
        }
        t.get("/v1/policy") { _ in .json(PolicyAnswer(policy: try inbox.policy)) }
        t.put("/v1/policy") { r in try setPolicy(r) }
        t.post("/v1/policy") { r in try setPolicy(r) }
    }

    func setPolicy(_ r: ControlRequest) throws -> ControlResponse {
        let policy = try ControlJSON.decode(PolicyAnswer.self, r.body).policy
        try store.setSetting("policy", policy.rawValue)
        return .json(PolicyAnswer(policy: policy))
    }

    /// What `peers` shows for a peer met: `trusted`, `known`, or `relayed` for a key met only
    /// through a relay.
    package static func trust(_ peer: PeerRecord) -> PeerSummary.Trust {
        switch peer.trust {
        case .trusted: .trusted
        case .known: peer.metDirectly ? .known : .relayed
        }
    }

    package func list() throws -> [PeerSummary] {
        let known = try store.peers()
        let knownByFP = Dictionary(known.map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [PeerSummary] = []
        var seen = Set<String>()
        for p in directory.online {
            let fp = p.fingerprint.description
            seen.insert(fp)
            let k = knownByFP[fp]
            var warning: String?
            if k == nil, let other = known.first(where: { $0.name.caseInsensitiveCompare(p.name) == .orderedSame }) {
                warning = "the name '\(p.name)' belongs to known peer \(other.fingerprint); this one has another key"
            }
            out.append(
                PeerSummary(
                    name: p.name, fingerprint: fp, online: true, trust: k.map(Self.trust) ?? .new,
                    addresses: p.endpoints.map {
                        $0.family == "ipv6" ? "[\($0.address)]:\($0.port)" : "\($0.address):\($0.port)"
                    },
                    lastSeenAt: p.lastSeen, warning: warning))
        }
        for k in known where !seen.contains(k.fingerprint) {
            out.append(
                PeerSummary(
                    name: k.name, fingerprint: k.fingerprint, online: false, trust: Self.trust(k),
                    addresses: k.lastAddress.map { [$0] } ?? [], lastSeenAt: k.lastSeen))
        }
        return out
    }

    package func change(_ query: String, _ action: TrustChange) async throws -> PeerSummary {
        let choice = try PeerResolver.resolve(query, online: directory.online, known: try store.peers())
        let fp = choice.fingerprint.description
        switch action {
        case .forget:
            guard try store.forgetPeer(fp) else { throw AgentError(.notFound, "\(choice.name) is not a known peer") }
        case .trust, .untrust:
            // A peer seen online but never met (under policy `trusted` or `off` a stranger's own
            // handshake leaves no record): meet it now, pinned to the fingerprint it advertises.
            if try store.peer(fp) == nil, !choice.endpoints.isEmpty {
                let peer = try await probe.handshakeAtAny(choice.endpoints, expected: choice.fingerprint)
                try store.sawPeer(
                    fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil)
            }
            if try store.peer(fp) == nil {
                throw AgentError(
                    .notFound,
                    "\(choice.name) [\(choice.fingerprint.short)] has never completed a handshake with this node; exchange photos once (or compare fingerprints) before trusting it"
                )
            }
            try store.setTrust(fp, action == .trust ? .trusted : .known)
        }
        return try list().first { $0.fingerprint == fp }
            ?? PeerSummary(
                name: choice.name, fingerprint: fp, online: !choice.endpoints.isEmpty, trust: .new, addresses: [])
    }

    /// `locafoto pair PEER`: a fresh handshake with the peer; both sides now show the same code.
    /// A known peer that is not online this moment is waited for up to `wait`, as by `send`.
    package func pair(_ query: String, wait: Duration = Sender.peerWait) async throws -> PairingBook.Entry {
        var q = query
        if let address = StaticAddress.named(query) {
            q = try await probe.probe(address).fingerprint.description
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
        let peer = try await probe.handshakeAtAny(endpoints, expected: choice.fingerprint, waitingUpTo: wait)
        try store.sawPeer(fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil)
        guard let entry = pairing.recent.first(where: { $0.fingerprint == peer.fingerprint.description }) else {
            throw AgentError(.internalError, "no pairing code was recorded")
        }
        return entry
    }
}
