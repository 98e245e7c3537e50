import LocafotoClock
import LocafotoMediaWorker
import LocafotoNode
import LocafotoPeers
import LocafotoTransfers
import LocafotoWire
import Logging

/// The sending role: direct sends to one peer or several, resume of interrupted sends, cancel
/// and withdraw, deposits at relays and their receipts. Transfers are listed in the `Outbox`, and
/// run in the sender's own `WorkQueue`; sessions go through `PeerSessions`. It holds no reference to the agent, nor to the receiving role.
package final class Sender: Sendable {
    /// How long a send waits for a known peer that is not online right now (`send --wait`).
    package static let peerWait: Duration = .seconds(10)
    /// The most `send --wait` accepts.
    package static let maxPeerWait: Duration = .seconds(300)
    package let configuration: SendingConfiguration
    package let identity: Identity
    package let store: AgentStore
    package let directory: PeerDirectory
    /// Where this node's transfers are listed; the sender registers each one there.
    package let outbox: Outbox
    /// Where sends, resumes and withdrawals run (`WorkQueueService`: stopping the agent ends
    /// them, leaving a send `interrupted`).
    package let work = WorkQueue()
    package let sessions: PeerSessions
    package let transferActivity: TransferActivity
    /// Photos sent from the vault are read through it.
    package let vaults: VaultHandle
    /// Deadlines, pacing, the resume window and the loops' intervals read it.
    package let clock: any AgentClock
    package let logger: Logger
    /// Learns who answers at an address (a send to HOST:PORT, `pair`, static peers).
    package let peerProbe: PeerProbe
    /// Peers of another protocol that `send` also reaches (LocalSend devices); nil: none.
    package let foreign: (any ForeignSending)?

    package init(
        configuration: SendingConfiguration, identity: Identity, store: AgentStore, directory: PeerDirectory,
        outbox: Outbox, sessions: PeerSessions, transferActivity: TransferActivity, vaults: VaultHandle,
        clock: any AgentClock,
        logger: Logger, foreign: (any ForeignSending)? = nil
    ) {
        self.foreign = foreign
        self.clock = clock
        self.configuration = configuration
        self.identity = identity
        self.store = store
        self.directory = directory
        self.outbox = outbox
        self.sessions = sessions
        self.transferActivity = transferActivity
        self.vaults = vaults
        self.logger = logger
        peerProbe = PeerProbe(sessions: sessions, identity: identity, store: store, directory: directory)
    }
}

/// What the sending role is told by the agent's configuration.
package struct SendingConfiguration: Sendable {
    /// Relays this node uses (`--relay`): deposits for trusted peers that are offline, receipts,
    /// collecting the offers waiting there.
    package var relays: [StaticAddress] = []
    /// How often the relays are asked for offers and receipts.
    package var collectInterval: Duration = .seconds(30)
    /// How often interrupted transfers look for their peer again.
    package var resumeInterval: Duration = .seconds(5)
    /// How long an interrupted transfer may resume (the receiver keeps its partial items as long).
    package var resumeWindow: Duration = InboxLimits().resumeWindow
    /// What a receiver takes in one offer (the same limits this node applies).
    package var offerLimits = OfferLimits()
    /// `--limit-rate`, bytes per second; nil: none.
    package var sendRateLimit: Int64?
    /// Where previews are made.
    package var media: MediaJobs = .inProcess

    package init(
        relays: [StaticAddress] = [], collectInterval: Duration = .seconds(30), resumeInterval: Duration = .seconds(5),
        resumeWindow: Duration = InboxLimits().resumeWindow, offerLimits: OfferLimits = OfferLimits(),
        sendRateLimit: Int64? = nil, media: MediaJobs = .inProcess
    ) {
        self.relays = relays
        self.collectInterval = collectInterval
        self.resumeInterval = resumeInterval
        self.resumeWindow = resumeWindow
        self.offerLimits = offerLimits
        self.sendRateLimit = sendRateLimit
        self.media = media
    }
}
