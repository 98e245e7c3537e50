import LocafotoClock
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import Logging

/// The sending role: direct sends to one peer or several, resume of interrupted sends, cancel
/// and withdraw, deposits at relays and their receipts, and collecting the offers waiting for
/// this node at its relays (handed to the `Receiver`). Transfers live in the `Outbox`; sessions
/// go through `PeerSessions`. It holds no reference to the agent.
final class Sender: Sendable {
    let configuration: AgentConfiguration
    let identity: Identity
    let store: AgentStore
    let directory: PeerDirectory
    let outbox: Outbox
    let sessions: PeerSessions
    let transferActivity: TransferActivity
    /// Offers collected from relays are received as any other.
    let receiver: Receiver
    /// Photos sent from the vault are read through it.
    let vaults: VaultHandle
    /// Deadlines, pacing, the resume window and the loops' intervals read it.
    let clock: any AgentClock
    let logger: Logger

    init(
        configuration: AgentConfiguration, identity: Identity, store: AgentStore, directory: PeerDirectory,
        outbox: Outbox, sessions: PeerSessions, transferActivity: TransferActivity, receiver: Receiver,
        vaults: VaultHandle, clock: any AgentClock,
        logger: Logger
    ) {
        self.clock = clock
        self.configuration = configuration
        self.identity = identity
        self.store = store
        self.directory = directory
        self.outbox = outbox
        self.sessions = sessions
        self.transferActivity = transferActivity
        self.receiver = receiver
        self.vaults = vaults
        self.logger = logger
    }

    var peerProbe: PeerProbe { PeerProbe(sessions: sessions, identity: identity, store: store, directory: directory) }
}
