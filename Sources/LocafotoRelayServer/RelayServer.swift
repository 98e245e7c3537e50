import LocafotoClock
import LocafotoNode
import LocafotoPeers
import LocafotoRelay
import LocafotoTransfers
import LocafotoWire
import Logging
import Synchronization

/// The relay role (`locafoto relay`): takes deposits sealed to their recipients, hands them on to
/// recipients that collect them or that it finds online, and gives senders their receipts
/// (protocol/messages.md "Relay"). It owns its store and its claims, reaches peers through the
/// session layer, and runs its deliveries in its own work queue; it knows nothing else of the agent.
package final class RelayServer: Sendable {
    package let store: RelayStore
    package let sessions: PeerSessions
    /// Where recipients are found online (mDNS, `--peer`).
    package let directory: PeerDirectory
    /// Where deliveries run (`WorkQueueService`: stopping the agent ends them).
    package let work = WorkQueue()
    package let offerLimits: OfferLimits
    /// `--limit-rate` (bytes per second) for deliveries; nil: none.
    package let sendRateLimit: Int64?
    /// Pings, pacing, expiry and the delivery loop read it.
    package let clock: any AgentClock
    package let logger: Logger
    /// Deposits being handed on, and recipients a delivery session is open to, so that two
    /// sessions never deliver the same deposit.
    private let claims = Mutex<Set<String>>([])

    package init(
        store: RelayStore, sessions: PeerSessions, directory: PeerDirectory, offerLimits: OfferLimits,
        sendRateLimit: Int64?, clock: any AgentClock, logger: Logger
    ) {
        self.clock = clock
        self.store = store
        self.sessions = sessions
        self.directory = directory
        self.offerLimits = offerLimits
        self.sendRateLimit = sendRateLimit
        self.logger = logger
    }

    /// Takes `key` (a deposit or a recipient) for one session; false if another holds it.
    package func claim(_ key: String) -> Bool { claims.withLock { $0.insert(key).inserted } }
    package func release(_ key: String) { _ = claims.withLock { $0.remove(key) } }
}

/// What `locafoto relay` is told: who may deposit, how much, for how long.
public struct RelayConfiguration: Sendable {
    public var limits: RelayLimits
    public var admission: RelayAdmission
    /// How often the relay tries to hand deposits to recipients that are online.
    public var deliveryInterval: Duration = .seconds(10)

    public init(limits: RelayLimits, admission: RelayAdmission) {
        self.limits = limits
        self.admission = admission
    }
}
