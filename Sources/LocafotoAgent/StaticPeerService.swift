import Foundation
import LocafotoClock
import LocafotoFormats
import LocafotoNode
import LocafotoPeers
import LocafotoSending
import LocafotoSession
import LocafotoTransfers
import Logging
import ServiceLifecycle

extension Agent {
    var peerProbe: PeerProbe { sender.peerProbe }

    @discardableResult
    func probe(_ address: StaticAddress) async throws -> PeerIdentity { try await peerProbe.probe(address) }
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
