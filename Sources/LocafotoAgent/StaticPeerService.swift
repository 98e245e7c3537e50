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
}

/// Probes the configured static peers, and the last-known addresses of trusted peers that mDNS
/// does not show, and the addresses reached once by hand, every `interval`. A peer that stops
/// answering is no longer listed online there (PeerTable's rules).
struct StaticPeerService: Service {
    static let interval: Duration = .seconds(15)
    /// `--peer`: the addresses to probe always.
    let staticPeers: [StaticAddress]
    let directory: PeerDirectory
    let store: AgentStore
    let probe: PeerProbe
    let clock: any AgentClock
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await probeAll()
                try await clock.sleep(for: Self.interval)
            }
        }
    }

    func probeAll() async {
        var addresses = Set(staticPeers)
        // Addresses reached once (`send HOST:PORT`, `pair HOST:PORT`) are probed again too: the
        // peer stays listed there only while it answers.
        for e in directory.probedEndpoints {
            if let a = try? StaticAddress(parsing: String(e.instanceName.dropFirst("static:".count))) {
                addresses.insert(a)
            }
        }
        // Peers mDNS shows need no probing; a peer listed only at a probed address is re-probed.
        let seenOverMDNS = Set(
            directory.online.filter { $0.endpoints.contains { !$0.instanceName.hasPrefix("static:") } }.map(
                \.fingerprint.description))
        for p in (try? store.peers()) ?? [] where p.trust == .trusted && !seenOverMDNS.contains(p.fingerprint) {
            if let last = p.lastAddress, let a = try? StaticAddress(parsing: last) { addresses.insert(a) }
        }
        await withTaskGroup(of: Void.self) { group in
            for a in addresses {
                group.addTask {
                    do {
                        let peer = try await probe.probe(a)
                        logger.debug("static peer \(a) is \(peer.name) [\(peer.fingerprint.short)]")
                    } catch {
                        directory.removeStatic(endpoint: a.endpoint)
                        logger.debug("static peer \(a) does not answer: \(error)")
                    }
                }
            }
        }
    }
}
