import Foundation
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import ServiceLifecycle

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
