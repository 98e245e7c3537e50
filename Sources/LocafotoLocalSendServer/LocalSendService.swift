import Foundation
import LocafotoClock
import LocafotoCrypto
import LocafotoErrors
import LocafotoLocalSend
import LocafotoNode
import LocafotoSession
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Whether LocalSend is on (`locafoto localsend on`, kept in the agent's settings), and the
/// port it listens on once it is. Changing it wakes `LocalSendService`.
package final class LocalSendSwitch: Sendable {
    package struct State: Sendable, Equatable {
        package var on: Bool
        /// The port the HTTPS server listens on now; nil while it does not.
        package var listeningPort: Int?
        /// Why it is not listening although on (the port is taken, the certificate is damaged).
        package var problem: String?
        /// Devices heard on LocalSend's multicast group while on (their own, unverified word).
        package var heardOnGroup: [LocalSendDiscovery.Heard] = []
        /// Devices that registered over HTTPS (`POST /register`, the apps' answer to the node's
        /// announcement) while on, by fingerprint: as unverified as a datagram, but from where
        /// the device can be reached.
        package var registered: [String: LocalSendDiscovery.Heard] = [:]

        /// Every device heard, either way; the newest word of each.
        package var nearby: [LocalSendDiscovery.Heard] {
            var all = Dictionary(heardOnGroup.map { ($0.device.fingerprint, $0) }) { a, b in a.at > b.at ? a : b }
            for (fp, r) in registered where all[fp].map({ $0.at < r.at }) ?? true { all[fp] = r }
            return all.values.sorted { $0.device.alias < $1.device.alias }
        }
    }

    private let state: Mutex<State>
    private let changed = Waiters()

    package init(on: Bool) { state = Mutex(State(on: on)) }

    package var current: State { state.withLock { $0 } }

    package func set(on: Bool) {
        state.withLock {
            if on, !$0.on { $0.problem = nil }  // turned on again: tried again
            $0.on = on
        }
        changed.wakeAll()
    }

    func listening(_ port: Int?, problem: String? = nil) {
        state.withLock {
            $0.listeningPort = port
            $0.problem = problem
        }
        changed.wakeAll()
    }

    /// What multicast discovery has heard now.
    func heard(_ devices: [LocalSendDiscovery.Heard]) { state.withLock { $0.heardOnGroup = devices } }

    /// A device that registered; at most `LocalSendDiscovery.maxDevices` are kept, the oldest
    /// forgotten first.
    func registered(_ heard: LocalSendDiscovery.Heard) {
        state.withLock { s in
            s.registered[heard.device.fingerprint] = heard
            if s.registered.count > LocalSendDiscovery.maxDevices,
                let oldest = s.registered.min(by: { $0.value.at < $1.value.at })
            {
                s.registered[oldest.key] = nil
            }
        }
    }

    /// LocalSend went off: nothing heard is kept.
    func forgetHeard() {
        state.withLock {
            $0.heardOnGroup = []
            $0.registered = [:]
        }
    }

    /// Returns once it is `on` (at once if it is), or when the task is cancelled.
    func wait(on: Bool) async { await wait { $0.on == on } }

    /// `Waiters` wakes on every change: waits again until `ready`.
    private func wait(until ready: @escaping @Sendable (State) -> Bool) async {
        while !Task.isCancelled, !state.withLock({ ready($0) }) {
            await changed.wait { self.state.withLock { ready($0) } }
        }
    }

    /// Returns once the server has followed a switch to `on`: listening or given up
    /// (`problem`), or closed.
    package func waitUntilSettled(on: Bool) async {
        await wait { s in
            guard s.on == on else { return true }  // switched again meanwhile
            return on ? (s.listeningPort != nil || s.problem != nil) : s.listeningPort == nil
        }
    }
}

/// Runs LocalSend's HTTPS server while the switch is on, and nothing while it is off: off, no
/// port of it is open.
package struct LocalSendService: Service, CustomStringConvertible {
    package var description: String { "LocalSend" }

    let switchboard: LocalSendSwitch
    let host: String
    let port: Int
    let group: any EventLoopGroup
    let logger: Logger
    /// Multicast discovery beside the HTTPS port (off only in tests that run several nodes in one
    /// network namespace without a multicast route).
    let multicast: Bool
    let clock: any AgentClock
    /// The server, made when it is turned on (the certificate is read or made then).
    let makeServer: @Sendable (_ port: Int) throws -> LocalSendServer

    package init(
        switchboard: LocalSendSwitch, host: String, port: Int, group: any EventLoopGroup, logger: Logger,
        multicast: Bool = true, clock: any AgentClock,
        makeServer: @escaping @Sendable (_ port: Int) throws -> LocalSendServer
    ) {
        self.multicast = multicast
        self.clock = clock
        self.switchboard = switchboard
        self.host = host
        self.port = port
        self.group = group
        self.logger = logger
        self.makeServer = makeServer
    }

    /// Why the server or its multicast stopped, in words (the port taken, no permission), never
    /// NIO's `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`.
    static func problem(_ error: any Error, port: Int) -> String {
        if let said = NetworkFailure.listening(error, port: port, option: "`agent --localsend-port`") { return said }
        if let e = error as? any ExplainedError { return e.message }
        if error is NIOSSLError {
            return
                "the LocalSend certificate or key in this node's home cannot be used; removing its localsend folder makes a new one (devices that pinned the old one will refuse it)"
        }
        return NetworkFailure(error)?.connecting ?? "\(error)"
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await switchboard.wait(on: true)
                guard !Task.isCancelled else { break }
                await serveWhileOn()
            }
        }
    }

    private func serveWhileOn() async {
        let switchboard = self.switchboard
        let logger = self.logger
        do {
            let server = try makeServer(port)
            let gate = ConnectionGate(limits: server.reception.portLimits.connections, clock: clock)
            let clock = self.clock
            let app = try server.application(
                host: host, port: port, group: group, gate: gate, logger: logger,
                registered: { device, address in
                    switchboard.registered(.init(device: device, address: address, at: clock.now))
                },
                onServerRunning: { channel in
                    let port = channel.localAddress?.port
                    switchboard.listening(port)
                    logger.info(
                        "LocalSend on: HTTPS on port \(port ?? 0), certificate \(server.device.fingerprint.prefix(16))…"
                    )
                }
            )
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await app.run()
                    } catch {
                        let problem = Self.problem(error, port: port)
                        logger.error("LocalSend's HTTPS server stopped: \(problem)")
                        switchboard.listening(nil, problem: problem)
                    }
                }
                group.addTask { await switchboard.wait(on: false) }
                // The heap is trimmed after a burst of connections has closed, as the peer port's.
                group.addTask {
                    await gate.trimWhenAsked()
                    await switchboard.wait(on: false)
                }
                if multicast {
                    let (group_, clock, host) = (self.group, self.clock, self.host)
                    group.addTask {
                        // Announced only once the HTTPS port accepts: the apps confirm every
                        // device they hear with a `/register` and list it only if that works.
                        await switchboard.waitUntilSettled(on: true)
                        guard switchboard.current.listeningPort != nil else {
                            await switchboard.wait(on: false)
                            return
                        }
                        let presence = LocalSendPresence(listen: host, devices: (try? System.enumerateDevices()) ?? [])
                        if let nowhere = presence.nowhere {
                            logger.notice(
                                "LocalSend's multicast discovery is off: \(nowhere); devices can still send to this node by its address"
                            )
                            await switchboard.wait(on: false)
                            return
                        }
                        do {
                            try await LocalSendMulticast.run(
                                own: server.device, presence: presence, group: group_, clock: clock, logger: logger,
                                heard: { switchboard.heard($0) })
                        } catch is CancellationError {
                        } catch {
                            // The HTTPS port still works: devices reach the node by its address.
                            logger.notice(
                                "LocalSend's multicast discovery is unavailable (\(Self.problem(error, port: LocalSendDiscovery.port))); devices can still send to this node by its address"
                            )
                        }
                        await switchboard.wait(on: false)  // not the end of the server
                    }
                }
                _ = await group.next()
                group.cancelAll()
            }
            switchboard.listening(nil, problem: switchboard.current.problem)
            switchboard.forgetHeard()
            logger.info("LocalSend off: its HTTPS port is closed")
        } catch {
            let problem = Self.problem(error, port: port)
            logger.error("LocalSend could not start: \(problem)")
            switchboard.listening(nil, problem: problem)
        }
        // On, but failed: wait to be switched off (and on again) rather than retry in a loop.
        if switchboard.current.on, switchboard.current.problem != nil { await switchboard.wait(on: false) }
    }
}
