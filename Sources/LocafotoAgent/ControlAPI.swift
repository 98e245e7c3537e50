import Foundation
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoFormats
import LocafotoInbox
import LocafotoMedia
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoRelay
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWeb
import LocafotoWire
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// The control API (protocol/control-api.md): what the CLI and scripts may ask of the agent.
extension Agent {
    var status: NodeStatus {
        var s = NodeStatus(
            name: displayName, fingerprint: identity.fingerprint.description, port: listeningPort.withLock { $0 },
            vault: vaultState, discovery: discovery.status.withLock { $0 },
            policy: (try? inbox.policy) ?? .everyone,
            home: configuration.home.directory,
            pendingOffers: (try? store.offers(states: [.pending]).count) ?? 0, version: WireProtocol.version,
            role: isRelay ? .relay : .node, relays: configuration.relays.map(\.description), web: web?.baseURL)
        s.identity = identityProtection.rawValue
        if !isRelay {
            s.autoLockSeconds = configuration.autoLock.map { Int($0.components.seconds) }
            s.lockOnSleep = configuration.lockOnSleep
        }
        // `vaults.unlocked()`, not `unlockedVault()`: asking for the status is not a use of the
        // vault (a tray icon polling it must not hold off --auto-lock).
        if let totals = try? vaults.unlocked().totals() {
            s.photoCount = totals.photoCount
            s.originalBytes = totals.originalBytes
            s.encryptedBytes = totals.encryptedBytes
        }
        return s
    }

    var idInfo: NodeID {
        NodeID(
            name: displayName, fingerprint: identity.fingerprint.description,
            publicKey: Data(identity.publicKey.bytes).base64EncodedString())
    }
}
