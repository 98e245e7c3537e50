import Foundation
import Hummingbird
import LocafotoControl
import LocafotoControlServer
import LocafotoDiscovery
import LocafotoFormats
import LocafotoInbox
import LocafotoLocalSendServer
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoRelay
import LocafotoRelayServer
import LocafotoSending
import LocafotoSession
import LocafotoTransfers
import LocafotoWire
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Accepts peer connections on TCP and serves each in its own child task.
/// Connections beyond `ConnectionLimits` are closed as they are accepted, before any byte is
/// read (a refused connection is never handed to a session).
struct PeerListener: Service {
    let server: NIOAsyncChannel<PeerChannel.Async, Never>
    let accepted: AcceptedConnections<ByteBuffer, ByteBuffer>
    /// The role that serves each connection: the receiver, or a relay.
    let serve: @Sendable (PeerChannel.Async) async -> Void
    /// `agent --port`, for the words of a failure.
    let port: Int
    let logger: Logger

    /// The agent's listener: bound to its port (or a free one when that is taken, which it
    /// records), serving with its relay or its receiver.
    static func bind(_ agent: Agent) async throws -> PeerListener {
        let c = agent.configuration
        let accepted = AcceptedConnections<ByteBuffer, ByteBuffer>()
        let transport = agent.sessions.transport
        func bind(port: Int) async throws -> NIOAsyncChannel<PeerChannel.Async, Never> {
            try await transport.bind(
                host: c.listenHost, port: port, gate: agent.connectionGate, accepted: accepted, logger: agent.logger)
        }
        let server: NIOAsyncChannel<PeerChannel.Async, Never>
        do {
            server = try await bind(port: c.port)
        } catch  where c.port != 0 {
            // Two agents on one machine: the second takes a free port; mDNS advertises whichever it got.
            agent.logger.notice("port \(c.port) is in use; listening on a free port instead")
            server = try await bind(port: 0)
        }
        agent.listeningPort.withLock { $0 = server.channel.localAddress?.port ?? 0 }
        let serve: @Sendable (PeerChannel.Async) async -> Void
        if let relay = agent.relay {
            serve = { await relay.serve($0) }
        } else {
            let receiver = agent.receiver
            serve = { await receiver.serve($0) }
        }
        return PeerListener(server: server, accepted: accepted, serve: serve, port: c.port, logger: agent.logger)
    }

    func run() async throws {
        // Cancelling (not just closing the listener) also ends sessions that wait on a decision,
        // so SIGTERM stops the agent promptly; undecided offers stay in the inbox.
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingDiscardingTaskGroup { group in
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            accepted.take(connection)
                            group.addTask { await serve(connection) }
                        }
                    }
                }
            }
        } catch is CancellationError {
        } catch {
            // Refused connections never reach here (they are closed as accepted); what does is
            // the listening socket itself failing: say why before the agent stops.
            let why = NetworkFailure.listening(error, port: port, option: "`agent --port`") ?? "\(error)"
            logger.critical("the peer listener failed: \(why)")
            try? await server.channel.close()
            await accepted.closeLeftovers()
            throw error
        }
        try? await server.channel.close()
        await accepted.closeLeftovers()
    }
}

/// A loop that runs until the agent stops (cancelled on graceful shutdown): housekeeping that
/// belongs to one object but must not outlive the agent or run outside its service group.
struct Routine: Service, CustomStringConvertible {
    let description: String
    let body: @Sendable () async -> Void

    init(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        description = name
        self.body = body
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await body() }
    }
}

/// The control socket (HTTP + JSON on a 0600 Unix socket, served by Hummingbird).
struct ControlService: Service {
    let control: ControlServer
    /// Every route of the control API (a router is made where the server runs).
    let router: @Sendable () -> Router<ControlContext>
    /// Its streams end when the socket closes.
    let events: EventHub
    let logger: Logger

    /// Checks the socket path before any service starts, so that a second agent on one home
    /// fails at once with a clear message.
    static func prepare(_ agent: Agent) throws -> ControlService {
        let control = ControlServer(path: agent.configuration.socketPath, group: agent.group)
        try control.prepare()
        return ControlService(
            control: control, router: { ControlRoutes.router(for: agent) }, events: agent.events, logger: agent.logger)
    }

    func run() async throws {
        defer { unlink(control.path) }
        let app = control.application(router(), logger: logger)
        try await withGracefulShutdownHandler {
            try await app.run()
        } onGracefulShutdown: { [events, control] in
            // No new client finds the socket; open event streams end so that the server's
            // own shutdown does not wait for them.
            unlink(control.path)
            events.finishAll()
        }
    }
}

extension Agent {
    /// The mDNS TXT record (protocol/discovery.md); a relay adds `role=relay`.
    var advertisedTXT: [String: String] {
        var txt = ["v": "\(WireProtocol.version)", "fp": identity.fingerprint.description, "name": displayName]
        if isRelay { txt["role"] = "relay" }
        return txt
    }
}

extension Agent {
    /// LocalSend's HTTPS server, run while `locafoto localsend on` (LocafotoLocalSendServer).
    var localSendService: LocalSendService {
        LocalSendService(
            switchboard: localSendSwitch, host: configuration.listenHost, port: configuration.localSendPort,
            group: group, logger: logger, multicast: configuration.localSendMulticast, clock: clock
        ) { [configuration, store, localSendReception] port in
            let alias = Agent.displayName(store)
            let certificate = try LocalSendIdentity.loadOrCreate(in: configuration.home, alias: alias)
            return LocalSendServer(alias: alias, certificate: certificate, port: port, reception: localSendReception)
        }
    }
}

extension Agent {
    /// Binds the sockets and runs every service until SIGTERM/SIGINT.
    public func run() async throws {
        let listener = try await PeerListener.bind(self)
        let control = try ControlService.prepare(self)
        // Services stop in the reverse order of this list. The web app, like the control socket,
        // ends every event stream when it stops (its open streams would hold its shutdown), so it
        // comes before the services that read events (notifications) and stops after them.
        var services: [any Service] = [listener, control]
        if let web {
            services.append(
                WebService(
                    access: web, router: { [self] in ControlRoutes.router(for: self, web: web) },
                    home: configuration.home,
                    events: events, group: group, logger: logger))
        }
        services.append(staticPeerProbes)
        services += workQueues.map(WorkQueueService.init)
        services.append(Routine("heap trim", connectionGate.trimWhenAsked))
        if let settings = configuration.relay, let relay {
            logger.info(
                "relay '\(displayName)' [\(identity.fingerprint)] listening on port \(listeningPort.withLock { $0 }); control socket \(configuration.socketPath); deposits in \(relay.store.directory); senders: \(relay.store.admission.mode)"
            )
            services.append(RelayDeliveryService(relay: relay, interval: settings.deliveryInterval))
        } else {
            logger.info(
                "agent '\(displayName)' [\(identity.fingerprint)] listening on port \(listeningPort.withLock { $0 }); control socket \(configuration.socketPath); vault \(vaultState.rawValue)"
            )
            services += [
                mediaIndexer, ResumeService(sender: sender), RelayReceiptService(sender: sender),
                RelayCollectService(
                    receiver: receiver, relays: configuration.sending.relays,
                    interval: configuration.sending.collectInterval),
                Routine("upload expiry", uploads.dropWhenDue),
            ]
            if configuration.notifications {
                services.append(
                    NotificationService(
                        events: events, store: store, identity: identity, inbox: controllers.inbox, logger: logger))
            }
            services.append(
                AutoLockService(
                    idle: configuration.autoLock, followLogind: configuration.lockOnSleep, vaults: vaults,
                    vaultActivity: vaultActivity, transferActivity: transferActivity, vaultControl: controllers.vault,
                    clock: clock, logger: logger))
            services.append(localSendService)
        }
        if configuration.discovery {
            services.append(
                DiscoveryService(
                    advertisement: ServiceAdvertisement(
                        name: displayName, port: UInt16(listeningPort.withLock { $0 }), txt: advertisedTXT),
                    directory: directory, state: discovery, skipInterfaces: configuration.skipInterfaces,
                    logger: logger))
        } else {
            discovery.status.withLock { $0 = "disabled" }
        }
        var groupConfig = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfig.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfig)
        try await group.run()
        relayStore?.close()
        logger.info("\(isRelay ? "relay" : "agent") stopped")
    }
}
