import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoLocalSendServer
import LocafotoMediaWorker
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoRelay
import LocafotoRelayServer
import LocafotoSending
import LocafotoSession
import LocafotoTransfers
import LocafotoVault
import LocafotoWeb
import LocafotoWire
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Everything `locafoto agent` can be told on its command line.
public struct AgentConfiguration: Sendable {
    public var home: NodeHome
    public var socketPath: String
    /// Address for peer connections; "::" listens on every interface (IPv4 and IPv6).
    public var listenHost = "::"
    /// 0 picks a free port; the port is advertised over mDNS either way.
    public var port = 47820
    public var displayName: String?
    public var discovery = true
    /// Show each offer as a desktop notification with Accept and Reject (needs a session bus
    /// and a notification server; without them the agent says so once and carries on).
    public var notifications = true
    /// Lock the vault after this long without use through the control API and without a
    /// transfer (`--auto-lock`); nil: never (see `AutoLockService`).
    public var autoLock: Duration?
    /// Lock the vault when logind says the machine is going to sleep or the session is locked
    /// (`--no-lock-on-sleep` turns it off).
    public var lockOnSleep = true
    /// Command run for every local import (see `ClassifyHook`); nil: none.
    public var classifyHook: String?
    /// Peers reached by address, for networks where multicast does not pass.
    public var staticPeers: [StaticAddress] = []
    /// Interface name prefixes whose mDNS results are ignored (container/VM/VPN interfaces).
    public var skipInterfaces: [String] = defaultSkippedInterfacePrefixes
    /// Upper bound on the sending rate of each session, bytes per second (`--limit-rate`); nil: none.
    public var sendRateLimit: Int64?
    /// Seconds without a byte from a peer after which its connection is closed (a cut link).
    public var idleTimeout = 60
    /// How often interrupted outgoing transfers look for their peer again.
    public var resumeInterval: Duration = .seconds(5)
    public var inboxLimits = InboxLimits()
    public var offerLimits = OfferLimits()
    public var connectionLimits = ConnectionLimits()
    /// The web app's port on 127.0.0.1 (`--web-port`; 0 picks a free one); nil: no web app.
    /// A relay never serves one.
    public var webPort: Int?
    /// Set: this agent is a store-and-forward relay (`locafoto relay`): no vault, no inbox of
    /// its own; it holds deposits for recipients and hands them on.
    public var relay: RelayConfiguration?
    /// Relays this node uses (`--relay`): it collects offers waiting there, deposits there for
    /// a trusted peer that is offline, and fetches the receipts of its deposits.
    public var relays: [StaticAddress] = []
    /// How often the configured relays are asked for offers and receipts.
    public var collectInterval: Duration = .seconds(30)
    /// Announce HELLO cap `late-hash` (direct offers to this node may leave item hashes out;
    /// it computes them as the photos arrive). Off only to stand in for a peer that predates
    /// the cap, in tests.
    public var announcesLateHash = true
    /// Announce HELLO cap `late-preview` (previews may follow a direct offer); off only in tests
    /// of the previews sent before the decision.
    public var announcesLatePreview = true
    /// Where photos are decoded for previews and the vault's indexer: in worker processes (the
    /// hidden command `media-worker`) for the agent (`locafoto agent` sets them), in this process
    /// otherwise.
    public var media: MediaJobs = .inProcess
    /// LocalSend's HTTPS port while `locafoto localsend on` (`--localsend-port`); 53317 is the
    /// one LocalSend's apps use. Its address is `listenHost`'s.
    public var localSendPort = 53317
    /// LocalSend's multicast discovery while it is on (`--no-localsend-multicast` turns it off).
    public var localSendMulticast = true

    public init(home: NodeHome, socketPath: String) {
        self.home = home
        self.socketPath = socketPath
    }

    /// What of it the sending role uses.
    var sending: SendingConfiguration {
        SendingConfiguration(
            relays: relays, collectInterval: collectInterval, resumeInterval: resumeInterval,
            resumeWindow: inboxLimits.resumeWindow, offerLimits: offerLimits, sendRateLimit: sendRateLimit,
            media: media)
    }
}

/// One node: identity, inbox, vault handle, discovery, and the transfers in flight.
/// Long-running parts are `Service`s (see `AgentServices.swift`); this type holds the state
/// they share and the operations the control API exposes.
public final class Agent: Sendable {
    public let configuration: AgentConfiguration
    /// What every timer of this node reads (the machine's time; a test's own in tests).
    let clock: any AgentClock
    public let identity: Identity
    /// How identity.json keeps the key (it cannot change while the agent runs: `identity
    /// protect` needs it stopped).
    let identityProtection: Identity.Protection
    let store: AgentStore
    let inbox: Inbox
    let directory: PeerDirectory
    let logger: Logger
    let group: MultiThreadedEventLoopGroup
    let vaults: VaultHandle
    /// Where verified items go: the vault, or the spool while it is locked.
    let importer: Importer
    /// Heads of received JPEGs for the media indexer (MediaHeads.swift).
    let mediaHeads = MediaHeads()
    /// Reads the facts of imported photos, off the import and transfer paths.
    let mediaIndexer: MediaIndexer
    /// Probes static peers and the addresses of trusted peers mDNS does not show.
    let staticPeerProbes: StaticPeerService
    /// What mDNS discovery knows of itself (`status`, `doctor`).
    let discovery = DiscoveryState()
    let listeningPort = Mutex<Int>(0)
    /// Pairing codes of recent handshakes (`locafoto pair`).
    let pairing: PairingBook
    /// Whether photo bytes are moving; the media indexer waits while they are.
    let transferActivity = TransferActivity()
    /// This node's outgoing transfers, as `GET /v1/transfers` lists them.
    let outbox: Outbox
    /// What happens, for `GET /v1/events` (offers, decisions, progress, peers, lock state).
    public let events: EventHub
    /// Relay mode: the deposits this agent holds for others.
    let relayStore: RelayStore?
    /// Relay mode: the relay role, on `relayStore`.
    let relay: RelayServer?
    /// The receiving role (not in relay mode): offers to this node, into the inbox and the vault.
    let receiver: Receiver
    /// The sending role: sends, resumes, deposits at relays and their receipts, collecting.
    let sender: Sender
    /// Inbound peer connections open, against `configuration.connectionLimits`.
    let connectionGate: ConnectionGate
    /// How every role reaches peers and is reached (the session layer).
    let sessions: PeerSessions
    /// The web app's logins and sessions; nil without a web app.
    let web: WebAccess?
    /// When the vault was last used, for `--auto-lock`.
    let vaultActivity: VaultActivity
    /// Photos uploaded through the web app, waiting to be sent.
    let uploads: UploadStore
    /// The control API's controllers, one per resource (what is the node's own is in `ControlRoutes`).
    let controllers: Controllers
    /// LocalSend on or off (`locafoto localsend`); always off in a relay.
    let localSendSwitch: LocalSendSwitch
    /// Offers from LocalSend devices into the inbox and the vault.
    let localSendReception: LocalSendReception
    /// Held for the agent's life: one agent per home, whatever socket path it was started with.
    private let homeLock: HomeLock

    /// - Parameter passphrase: the vault passphrase, needed at start when the node identity is
    ///   protected (`locafoto identity protect`): the vault is unlocked here, before the identity
    ///   is read, and the agent starts unlocked. nil otherwise (`unlock` later, as before).
    ///   - clock: what every timer reads; tests give one they move themselves.
    public init(
        configuration: AgentConfiguration, logger: Logger, passphrase: SecretBytes? = nil,
        clock: any AgentClock = SystemClock()
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        pairing = PairingBook(clock: clock)
        vaultActivity = VaultActivity(clock: clock)
        uploads = UploadStore(clock: clock)
        try configuration.home.prepare()
        // Before anything changes in the home: a second agent must leave the running one alone
        // (its name, its inbox, its transfers).
        homeLock = try HomeLock.acquire(configuration.home)
        connectionGate = ConnectionGate(limits: configuration.connectionLimits, clock: clock)
        web = configuration.relay == nil ? configuration.webPort.map { WebAccess(port: $0, clock: clock) } : nil
        let vaults = VaultHandle(directory: configuration.home.vaultDirectory)
        self.vaults = vaults
        let unlockedAtStart: Bool
        (identity, unlockedAtStart) = try Agent.loadIdentity(configuration, vaults: vaults, passphrase: passphrase)
        identityProtection = Identity.storedProtection(at: configuration.home.identityFile) ?? .clear
        store = try AgentStore(path: configuration.home.storeFile)
        if let name = configuration.displayName {
            try store.setSetting("name", try Agent.validName(name))
        }
        try store.interruptUnfinished(now: clock.date)
        if let relay = configuration.relay {
            do {
                relayStore = try RelayStore(
                    directory: configuration.home.relayDirectory, limits: relay.limits, admission: relay.admission)
            } catch let e as RelayError {
                throw AgentError(.io, e.message)
            }
        } else {
            relayStore = nil
        }
        let events = EventHub(clock: clock)
        self.events = events
        outbox = Outbox(events: events, clock: clock)
        inbox = Inbox(
            store: store, limits: configuration.inboxLimits, spoolDirectory: configuration.home.spoolDirectory,
            events: events, clock: clock)
        directory = PeerDirectory(own: identity.fingerprint, events: events, clock: clock)
        group = MultiThreadedEventLoopGroup.singleton
        importer = Importer(
            store: store, identity: identity, vaults: vaults, spoolDirectory: configuration.home.spoolDirectory,
            logger: logger,
            mediaHeads: mediaHeads)
        // A relay takes relayed offers only, and those always carry their hashes; it holds their
        // previews sealed for the recipient.
        let caps =
            relayStore != nil
            ? [Capability.relay, Capability.resume, Capability.preview]
            : [Capability.resume, Capability.preview] + (configuration.announcesLateHash ? [Capability.lateHash] : [])
                + (configuration.announcesLatePreview ? [Capability.latePreview] : [])
        let hello: @Sendable () -> Hello = { [store, identity] in
            Hello(ed25519: identity.publicKey.bytes, name: Agent.displayName(store), caps: caps)
        }
        sessions = PeerSessions(
            transport: PeerTransport(
                group: group, key: identity.agreementKey, hello: hello,
                idleTimeout: .seconds(Int64(configuration.idleTimeout)),
                limits: configuration.connectionLimits,
                handshakeCompleted: { [pairing] in pairing.record($0, handshakeHash: $1) }),
            logger: logger)
        receiver = Receiver(
            inbox: inbox, importer: importer, store: store, identity: identity, sessions: sessions,
            transferActivity: transferActivity, offerLimits: configuration.offerLimits,
            acceptsLateHash: configuration.announcesLateHash, acceptsLatePreviews: configuration.announcesLatePreview,
            resumeWindow: configuration.inboxLimits.resumeWindow,
            events: events, clock: clock, logger: logger)
        localSendSwitch = LocalSendSwitch(
            on: relayStore == nil && (try? store.setting(LocalSendController.setting)) == "on")
        let localSendDelivery = LocalSendDelivery(
            switchboard: localSendSwitch, store: store, group: group, clock: clock, logger: logger
        ) { [configuration, store, localSendSwitch] in
            let alias = Agent.displayName(store)
            let certificate = try LocalSendIdentity.loadOrCreate(in: configuration.home, alias: alias)
            let port = localSendSwitch.current.listeningPort ?? configuration.localSendPort
            return (LocalSendServer.describe(alias: alias, certificate: certificate, port: port), certificate)
        }
        sender = Sender(
            configuration: configuration.sending, identity: identity, store: store, directory: directory,
            outbox: outbox,
            sessions: sessions, transferActivity: transferActivity, vaults: vaults, clock: clock,
            logger: logger, foreign: relayStore == nil ? localSendDelivery : nil)
        if let relayStore {
            relay = RelayServer(
                store: relayStore, sessions: sessions, directory: directory,
                offerLimits: configuration.offerLimits,
                sendRateLimit: configuration.sendRateLimit, clock: clock, logger: logger)
        } else {
            relay = nil
        }
        localSendReception = LocalSendReception(
            store: store, inbox: inbox, vaults: vaults, events: events, clock: clock, logger: logger,
            pin: LocalSendController.storedPIN(store))
        mediaIndexer = MediaIndexer(
            vaults: vaults, transferActivity: transferActivity, mediaHeads: mediaHeads, media: configuration.media,
            events: events, clock: clock, logger: logger)
        staticPeerProbes = StaticPeerService(
            staticPeers: configuration.staticPeers, directory: directory, store: store, probe: sender.peerProbe,
            clock: clock, logger: logger)
        controllers = Controllers(
            store: store, identity: identity, home: configuration.home, clock: clock, events: events, logger: logger,
            vaults: vaults, activity: vaultActivity, importer: importer, mediaHeads: mediaHeads,
            media: configuration.media,
            hook: configuration.classifyHook.flatMap { $0.isEmpty ? nil : ClassifyHook(command: $0) }, inbox: inbox,
            receiver: receiver, directory: directory, pairing: pairing, outbox: outbox, sender: sender,
            uploads: uploads, sendsNothing: relayStore != nil, localSendSwitch: localSendSwitch,
            localSendReception: localSendReception, alias: { [store] in Agent.displayName(store) })
        if unlockedAtStart {
            logger.info("vault unlocked")
            // What arrived while the agent was stopped with the vault locked, as `unlock` does.
            _ = importer.importQueued()
        }
    }

    /// The identity, and whether the vault had to be unlocked for it. A protected identity is
    /// wrapped under the vault master key, so the peer side (Noise static key, HELLO, sealed
    /// previews) cannot exist before the vault is unlocked: rather than start a node that
    /// serves only its control socket, the agent refuses to start without the passphrase.
    static func loadIdentity(
        _ configuration: AgentConfiguration, vaults: VaultHandle, passphrase: SecretBytes?
    ) throws -> (Identity, unlocked: Bool) {
        let path = configuration.home.identityFile
        guard FileManager.default.fileExists(atPath: path), try Identity.read(at: path).protection == .vault else {
            return (try Identity.loadOrCreate(at: path), false)
        }
        if configuration.relay != nil {
            throw AgentError(
                .refused,
                "the node identity \(path) is protected by a vault passphrase, but a relay has no vault and runs unattended; give the relay a home of its own (--home), or run `locafoto identity unprotect` in this one"
            )
        }
        guard let passphrase else {
            throw AgentError(
                .vaultLocked,
                "the node identity is protected by the vault passphrase (`locafoto identity protect`), so the agent cannot start locked: give --passphrase-file FILE or LOCAFOTO_PASSPHRASE_FILE (the systemd unit's vault-passphrase credential), or start it on a terminal to be asked; `locafoto identity unprotect` lets an unattended node start without it"
            )
        }
        guard Vault.exists(at: configuration.home.vaultDirectory) else {
            // Only that vault's master key opens it; a new vault would not.
            throw AgentError(
                .noVault,
                "the node identity \(path) is protected under this node's vault, and there is no vault in \(configuration.home.vaultDirectory); restore it (`locafoto restore`) to start with this identity"
            )
        }
        let v = try vaults.vault()
        do {
            try v.unlock(passphrase: passphrase)
        } catch let e as VaultError {
            throw AgentError(e)
        }
        return (try Identity.load(at: path, vault: v), true)
    }

    static func validName(_ name: String) throws -> String {
        let n = name.trimmingCharacters(in: .whitespaces)
        guard !n.isEmpty, n.utf8.count <= Hello.maxNameBytes, PeerText.isClean(n) else {
            throw AgentError(.invalidRequest, "a display name is 1 to \(Hello.maxNameBytes) bytes of printable text")
        }
        return n
    }

    public var displayName: String { Agent.displayName(store) }

    /// The name set with `agent --name`, else the host's name.
    static func displayName(_ store: AgentStore) -> String {
        if let n = try? store.setting("name") { return n }
        var buf = [CChar](repeating: 0, count: 256)
        gethostname(&buf, 255)
        let host = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // A host name may be 64 bytes (HOST_NAME_MAX); a HELLO name is at most 63, cut as any name.
        return DisplayName.sanitize(host, fallback: "locafoto")
    }

    // MARK: vault

    /// The vault, opened lazily so that `locafoto vault init` works while the agent runs.
    func vault() throws -> Vault { try vaults.vault() }

    /// The vault for a call of the control API: a use, which restarts the idle time of
    /// `--auto-lock`. Background work (the media indexer) uses `vaults.unlocked()`.
    func unlockedVault() throws -> Vault { try vaults.unlocked(for: vaultActivity) }

    var vaultState: VaultLockState {
        guard let v = try? vault() else { return .absent }
        return v.isUnlocked ? .unlocked : .locked
    }

    /// Unlocks the vault and imports what was received while it was locked.
    public func unlock(passphrase: SecretBytes) throws -> Int { try controllers.vault.unlock(passphrase: passphrase) }

    /// Locks the vault (`reason`: why auto-lock did; nil: the user asked).
    public func lock(reason: String? = nil) throws { try controllers.vault.lock(reason: reason) }

    // MARK: transfers

    /// How long `send` waits for a known peer that is not online right now (`send --wait`).
    public static let sendWait: Duration = Sender.peerWait
    /// The most `send --wait` accepts.
    public static let maxSendWait: Duration = Sender.maxPeerWait

    /// Starts sending `paths` to the peer named `query` (see `Sender.send`).
    public func send(
        to query: String, paths: [String], vaultPhotos: [PhotoRecord] = [], transform: SendTransform? = nil,
        via: String? = nil,
        wait: Duration? = nil, previews: Bool = true
    ) throws -> OutgoingTransfer {
        try sender.send(
            to: query, paths: paths, vaultPhotos: vaultPhotos, transform: transform, via: via, wait: wait,
            previews: previews)
    }

    /// Sends the same photos to several peers (see `Sender.send`).
    public func send(
        to queries: [String], paths: [String], vaultPhotos: [PhotoRecord] = [], transform: SendTransform? = nil,
        via: String? = nil,
        wait: Duration? = nil, previews: Bool = true
    ) throws -> [OutgoingTransfer] {
        try sender.send(
            to: queries, paths: paths, vaultPhotos: vaultPhotos, transform: transform, via: via, wait: wait,
            previews: previews)
    }

    func cancelTransfer(_ idPrefix: String, wait: Duration = .seconds(15)) async throws -> OutgoingTransfer {
        try await sender.cancelTransfer(idPrefix, wait: wait)
    }

    func transfer(_ id: String) -> OutgoingTransfer? { outbox.transfer(id) }

    /// The roles' work queues: the sender's, and the relay's in relay mode (each a service).
    var workQueues: [WorkQueue] { [sender.work] + (relay.map { [$0.work] } ?? []) }
}

extension Agent {
    public var hasVault: Bool { (try? vault()) != nil }
    public var isVaultUnlocked: Bool { (try? vault())?.isUnlocked ?? false }
    public var isRelay: Bool { relayStore != nil }

    /// Gives up this home's lock, as the process exit would (tests restart an agent in-process).
    func releaseHome() { homeLock.release() }
}
