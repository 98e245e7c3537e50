import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoMediaWorker
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import Logging

struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent", abstract: "Run the agent in the foreground (SIGTERM or Ctrl-C stops it cleanly).",
        discussion: """
            The agent advertises this node over mDNS (_locafoto._tcp, through avahi-daemon), accepts peer \
            connections, keeps the inbox, and serves the control socket the other commands use. \
            If a vault exists it is unlocked at start from --passphrase-file / LOCAFOTO_PASSPHRASE_FILE, or \
            by a prompt on a terminal; otherwise it starts locked (`locafoto unlock` later). \
            Without a reachable avahi-daemon the agent says so and keeps running.

            The vault locks itself when the machine is about to sleep and when the session's screen \
            is locked (logind's PrepareForSleep and Lock signals on the system bus; --no-lock-on-sleep \
            turns that off), and with --auto-lock after that long without use. Photos that arrive \
            while it is locked wait sealed and are imported on `locafoto unlock`.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var peerPort: PeerPortOptions
    @Option(help: ArgumentHelp("Unlock the vault with the passphrase in this file.", valueName: "file"))
    var passphraseFile: String?
    @Flag(help: "Start with the vault locked even on a terminal.") var locked = false
    @Flag(
        help:
            "Do not show offers as desktop notifications (they are shown, with Accept and Reject, when the session has a notification server)."
    ) var noNotifications = false
    @Option(
        help:
            "Port of the web app on 127.0.0.1 (`locafoto web` logs a browser in); 0 picks a free one. If taken, a free port is used."
    )
    var webPort: Int = 47821
    @Flag(help: "Serve no web app.") var noWeb = false
    @Option(help: "Seconds an undecided offer waits before it expires.") var offerExpiry: Int = 3600
    @Option(
        help: ArgumentHelp(
            "Command that classifies every local import (photo on stdin; exit 0 imports, `tag:NAME` lines tag it; any other exit refuses it).",
            valueName: "command")) var classifyHook: String?
    @Option(
        name: .customLong("peer"),
        help: ArgumentHelp(
            "A peer's address, for networks where mDNS does not pass (repeatable): 192.168.1.20:47820, [fe80::1%eth0]:47820, nas.local:47820.",
            valueName: "host:port")) var peers: [String] = []
    @Option(
        help: ArgumentHelp(
            "Comma-separated interface name prefixes whose mDNS results are ignored (default: container/VM/VPN ones: docker,br-,veth,virbr,vnet,tun,tap,wg,podman,cni,flannel,zt). Empty: use all.",
            valueName: "prefixes")) var skipInterfaces: String?
    @Option(
        help: ArgumentHelp(
            "Cap each outgoing session at this many bytes per second; K, M and G suffixes (1024-based): 500K, 20M.",
            valueName: "rate")) var limitRate: String?
    @Option(
        help: ArgumentHelp(
            "The HTTPS port LocalSend's apps reach this node on, while `locafoto localsend on` (their own: 53317).",
            valueName: "port")) var localsendPort: Int = 53317
    @Flag(
        help:
            "While LocalSend is on, do not announce this node on LocalSend's multicast group (224.0.0.167, UDP 53317) nor answer there; devices then reach it by address only."
    ) var noLocalsendMulticast = false
    @Option(
        name: .customLong("relay"),
        help: ArgumentHelp(
            "A relay this node uses (repeatable; also LOCAFOTO_RELAYS, comma-separated): offers waiting there are collected, a trusted peer that is offline gets deposits there, and receipts come back from it.",
            valueName: "host:port")) var relays: [String] = []
    @Option(help: "Seconds between visits to the relays (collect offers, fetch receipts).") var collectInterval: Int =
        30
    @Option(
        help: ArgumentHelp(
            "Lock the vault after this long without use (no command using the vault, no transfer): 30s, 15m, 1h; off (the default) never.",
            valueName: "duration")) var autoLock: String = "off"
    @Flag(
        help:
            "Do not lock the vault when the machine goes to sleep or the session's screen is locked (logind's PrepareForSleep and Lock signals)."
    )
    var noLockOnSleep = false
    @Flag(help: "Log debug details.") var verbose = false
    @OptionGroup(title: "Connection limits") var connections: ConnectionOptions

    func validate() throws {
        guard (0...65535).contains(webPort) else { throw ValidationError("--web-port must be 0...65535") }
        guard offerExpiry >= 10 else { throw ValidationError("--offer-expiry must be at least 10 seconds") }
        guard (0...65535).contains(localsendPort) else { throw ValidationError("--localsend-port must be 0...65535") }
        guard (1...86400).contains(collectInterval) else {
            throw ValidationError("--collect-interval must be 1...86400 seconds")
        }
        guard let lockAfter = Self.parseDuration(autoLock),
            lockAfter.map({ $0 >= .seconds(1) && $0 <= .seconds(7 * 86400) }) ?? true
        else {
            throw ValidationError("--auto-lock takes a duration of 1s to 7d, e.g. 30s, 15m or 1h, or off")
        }
        if let limitRate, Self.parseRate(limitRate) == nil {
            throw ValidationError("--limit-rate takes bytes per second, at least 1K, e.g. 500K or 20M")
        }
    }

    /// "15m" -> 900 s; "off" -> .some(nil); a bare number is seconds; nil for anything unreadable.
    static func parseDuration(_ text: String) -> Duration?? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "off" || t == "never" || t == "0" { return .some(nil) }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let (digits, unit) = t.last.flatMap { units[$0] }.map { (String(t.dropLast()), $0) } ?? (t, 1)
        guard let n = Int64(digits), n > 0, n <= Int64(Int32.max) else { return nil }
        return .some(.seconds(n * unit))
    }

    /// "500K" -> 512000. nil for anything unreadable or under 1 KiB/s.
    static func parseRate(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let (digits, unit) = t.last.flatMap { units[$0] }.map { (String(t.dropLast()), $0) } ?? (t, 1)
        guard let n = Int64(digits), n > 0, n <= (Int64.max / unit) else { return nil }
        let rate = n * unit
        return rate >= 1024 ? rate : nil
    }

    func run() async throws {
        umask(0o077)  // everything the agent creates is private to its user
        let home = global.nodeHome
        var config = AgentConfiguration(home: home, socketPath: home.socketPath(explicit: global.socket))
        peerPort.apply(to: &config)
        config.notifications = !noNotifications
        config.webPort = noWeb ? nil : webPort
        config.inboxLimits.expiry = .seconds(offerExpiry)
        config.sendRateLimit = limitRate.flatMap(Self.parseRate)
        config.localSendPort = localsendPort
        config.localSendMulticast = !noLocalsendMulticast
        config.autoLock = Self.parseDuration(autoLock) ?? nil
        config.lockOnSleep = !noLockOnSleep
        config.connectionLimits = connections.limits
        ConnectionLimits.raiseOpenFilesLimit()
        config.classifyHook = classifyHook ?? ProcessInfo.processInfo.environment["LOCAFOTO_CLASSIFY_HOOK"]
        // Previews and the vault's thumbnails are decoded in worker processes (MediaWorkerCommand).
        if let worker = MediaWorkerCommand.command { config.media = MediaJobs(workers: MediaWorkers(command: worker)) }
        if let skipInterfaces {
            config.skipInterfaces = skipInterfaces.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        let fromEnvironment = (ProcessInfo.processInfo.environment["LOCAFOTO_PEERS"] ?? "").split(separator: ",").map(
            String.init)
        let relaysFromEnvironment = (ProcessInfo.processInfo.environment["LOCAFOTO_RELAYS"] ?? "").split(separator: ",")
            .map(String.init)
        do {
            config.staticPeers = try (peers + fromEnvironment).filter { !$0.isEmpty }.map(StaticAddress.init(parsing:))
            config.relays = try (relays + relaysFromEnvironment).filter { !$0.isEmpty }.map(
                StaticAddress.init(parsing:))
        }
        config.collectInterval = .seconds(collectInterval)
        SafeLogHandler.bootstrap()
        var logger = Logger(label: "locafoto")
        logger.logLevel = verbose ? .debug : .info
        let agent: Agent
        do {
            let file = passphraseFile ?? ProcessInfo.processInfo.environment["LOCAFOTO_PASSPHRASE_FILE"]
            // A protected identity opens only with the vault unlocked, so the passphrase is needed
            // before the agent exists (Agent.loadIdentity says why there is no locked start).
            var early: SecretBytes?
            if Identity.storedProtection(at: home.identityFile) == .vault {
                if locked {
                    throw CLIError(
                        "the node identity is protected by the vault passphrase (`locafoto identity protect`), so the agent cannot start --locked; drop --locked, or run `locafoto identity unprotect` for a node that starts unattended",
                        code: .invalidRequest)
                }
                if file == nil, isatty(STDIN_FILENO) != 1 {
                    throw CLIError(
                        "the node identity is protected by the vault passphrase, so the agent needs it to start: give --passphrase-file FILE or LOCAFOTO_PASSPHRASE_FILE (the systemd unit's vault-passphrase credential), or start it on a terminal; `locafoto identity unprotect` lets an unattended node start without it",
                        code: .invalidRequest)
                }
                early = try Passphrase.obtain(
                    file: file, prompt: "Vault passphrase (it also unlocks the node identity): ")
            }
            agent = try Agent(configuration: config, logger: logger, passphrase: early)
            if !locked, agent.hasVault, !agent.isVaultUnlocked {
                if file != nil || isatty(STDIN_FILENO) == 1 {
                    let pass = try Passphrase.obtain(file: file, prompt: "Vault passphrase: ")
                    _ = try agent.unlock(passphrase: pass)
                }
            }
        }
        do {
            try await agent.run()
        } catch let e as AgentError {
            throw e
        } catch {
            throw CLIError("the agent stopped: \(error)")
        }
    }
}
