import LocafotoClock
import LocafotoNode
import LocafotoPeers
import LocafotoRelay
import LocafotoWire
import Logging
import Synchronization

/// The relay role (`locafoto relay`): takes deposits sealed to their recipients, hands them on to
/// recipients that collect them or that it finds online, and gives senders their receipts
/// (protocol/messages.md "Relay"). It owns its store and its claims, reaches peers through the
/// session layer, and runs its deliveries on the outbox; it knows nothing else of the agent.
final class RelayServer: Sendable {
    let store: RelayStore
    let sessions: PeerSessions
    /// Where recipients are found online (mDNS, `--peer`).
    let directory: PeerDirectory
    /// Where deliveries run (`OutboxService`: stopping the agent ends them).
    let outbox: Outbox
    let offerLimits: OfferLimits
    /// `--limit-rate` (bytes per second) for deliveries; nil: none.
    let sendRateLimit: Int64?
    /// Pings, pacing, expiry and the delivery loop read it.
    let clock: any AgentClock
    let logger: Logger
    /// Deposits being handed on, and recipients a delivery session is open to, so that two
    /// sessions never deliver the same deposit.
    private let claims = Mutex<Set<String>>([])

    init(
        store: RelayStore, sessions: PeerSessions, directory: PeerDirectory, outbox: Outbox, offerLimits: OfferLimits,
        sendRateLimit: Int64?, clock: any AgentClock, logger: Logger
    ) {
        self.clock = clock
        self.store = store
        self.sessions = sessions
        self.directory = directory
        self.outbox = outbox
        self.offerLimits = offerLimits
        self.sendRateLimit = sendRateLimit
        self.logger = logger
    }

    /// Takes `key` (a deposit or a recipient) for one session; false if another holds it.
    func claim(_ key: String) -> Bool { claims.withLock { $0.insert(key).inserted } }
    func release(_ key: String) { _ = claims.withLock { $0.remove(key) } }
}
