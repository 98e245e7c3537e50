import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoPeers
import LocafotoRelay
import LocafotoRelayServer
import LocafotoSession
import Logging

struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Hold photos for peers that are offline (a store-and-forward relay), or show its queue.",
        discussion: """
            A relay keeps offers that senders leave for a recipient (`locafoto send PEER --via RELAY`) and \
            hands them on when the recipient comes to collect them (`locafoto agent --relay RELAY`) or is \
            seen online (mDNS, --peer). It holds no vault and no passphrase, and cannot open or alter what \
            it holds: photos are sealed to the recipient and signed by the sender, and the recipient's \
            answer comes back to the sender signed. See protocol/messages.md, "Relay".
            """,
        subcommands: [RelayRun.self, RelayStatusCommand.self], defaultSubcommand: RelayRun.self)
}

struct RelayRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the relay in the foreground (SIGTERM or Ctrl-C stops it; nothing held is lost).",
        discussion: """
            Who may deposit must be chosen: --allow FINGERPRINT for each sender (their `locafoto id`), \
            or --open for anyone with a key. Quotas and expiry bound what the relay holds; a deposit over \
            a limit is refused with a message naming the limit. Environment: LOCAFOTO_RELAY_ALLOW \
            (comma-separated fingerprints), LOCAFOTO_RELAY_OPEN=1, LOCAFOTO_PEERS (comma-separated HOST:PORT).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var peerPort: PeerPortOptions
    @Option(
        name: .customLong("peer"),
        help: ArgumentHelp(
            "A recipient's address, for networks where mDNS does not pass (repeatable): deposits for it are handed on there.",
            valueName: "host:port")) var peers: [String] = []
    @Option(
        name: .customLong("allow"),
        help: ArgumentHelp("A sender allowed to deposit, by fingerprint (repeatable).", valueName: "fingerprint"))
    var allowed: [String] = []
    @Flag(help: "Let anyone deposit (quotas still apply). Must be chosen explicitly.") var open = false
    @Option(
        help: ArgumentHelp("Bytes one sender may have held at once; K, M, G suffixes (default 2G).", valueName: "size"))
    var maxSenderBytes: String?
    @Option(help: ArgumentHelp("Photos one sender may have held at once (default 1000).", valueName: "n"))
    var maxSenderItems: Int?
    @Option(help: ArgumentHelp("Bytes the relay holds in all (default 20G).", valueName: "size")) var maxTotalBytes:
        String?
    @Option(help: ArgumentHelp("Photos the relay holds in all (default 10000).", valueName: "n")) var maxTotalItems:
        Int?
    @Option(
        help: ArgumentHelp(
            "Seconds a deposit waits for its recipient before it is dropped (default 7 days).", valueName: "seconds"))
    var expiry: Int?
    @Option(help: "Seconds between attempts to hand deposits to recipients that are online.") var deliveryInterval:
        Int = 10
    @OptionGroup(title: "Connection limits") var connections: ConnectionOptions
    @Flag(help: "Log debug details.") var verbose = false

    func validate() throws {
        guard (1...86400).contains(deliveryInterval) else {
            throw ValidationError("--delivery-interval must be 1...86400 seconds")
        }
        for (flag, value) in [("--max-sender-bytes", maxSenderBytes), ("--max-total-bytes", maxTotalBytes)] {
            if let value, Self.parseSize(value) == nil {
                throw ValidationError("\(flag) takes a size such as 500M or 2G")
            }
        }
        if let n = maxSenderItems, n < 1 { throw ValidationError("--max-sender-items must be at least 1") }
        if let n = maxTotalItems, n < 1 { throw ValidationError("--max-total-items must be at least 1") }
        if let e = expiry, e < 60 { throw ValidationError("--expiry must be at least 60 seconds") }
    }

    /// "2G" -> 2147483648 (1024-based); nil for anything unreadable or under 1 byte.
    static func parseSize(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let (digits, unit) = t.last.flatMap { units[$0] }.map { (String(t.dropLast()), $0) } ?? (t, 1)
        guard let n = Int64(digits), n > 0, n <= (Int64.max / unit) else { return nil }
        return n * unit
    }

    func run() async throws {
        umask(0o077)
        let env = ProcessInfo.processInfo.environment
        var limits = RelayLimits()
        if let v = maxSenderBytes.flatMap(Self.parseSize) { limits.maxBytesPerSender = v }
        if let v = maxTotalBytes.flatMap(Self.parseSize) { limits.maxBytesTotal = v }
        if let v = maxSenderItems { limits.maxItemsPerSender = v }
        if let v = maxTotalItems { limits.maxItemsTotal = v }
        if let v = expiry { limits.expiry = TimeInterval(v) }
        let allowList =
            allowed
            + (env["LOCAFOTO_RELAY_ALLOW"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let openMode = open || ["1", "true", "yes"].contains((env["LOCAFOTO_RELAY_OPEN"] ?? "").lowercased())
        let admission: RelayAdmission
        do {
            try limits.validate()
            admission = try RelayAdmission.parse(open: openMode, allowed: allowList.filter { !$0.isEmpty })
        } catch let e as RelayError {
            throw CLIError(e.message, code: .invalidRequest)
        }
        if admission.isRefusingEveryone {
            throw CLIError(
                "say who may deposit: --allow FINGERPRINT for each sender (their `locafoto id`; or LOCAFOTO_RELAY_ALLOW), or --open for anyone (LOCAFOTO_RELAY_OPEN=1)",
                code: .invalidRequest)
        }
        let home = global.nodeHome
        var config = AgentConfiguration(home: home, socketPath: home.socketPath(explicit: global.socket))
        peerPort.apply(to: &config)
        config.connectionLimits = connections.limits
        ConnectionLimits.raiseOpenFilesLimit()
        var relay = RelayConfiguration(limits: limits, admission: admission)
        relay.deliveryInterval = .seconds(deliveryInterval)
        config.relay = relay
        let fromEnvironment = (env["LOCAFOTO_PEERS"] ?? "").split(separator: ",").map(String.init)
        do {
            config.staticPeers = try (peers + fromEnvironment).filter { !$0.isEmpty }.map(StaticAddress.init(parsing:))
        } catch let e as AgentError {
            throw CLIError(e.message, code: .invalidRequest)
        }
        SafeLogHandler.bootstrap()
        var logger = Logger(label: "locafoto-relay")
        logger.logLevel = verbose ? .debug : .info
        do {
            let agent = try Agent(configuration: config, logger: logger)
            try await agent.run()
        } catch let e as AgentError {
            throw e
        } catch {
            throw CLIError("the relay stopped: \(error)")
        }
    }
}

struct RelayStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "What the relay holds: queue per recipient, totals, deliveries, refusals.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let answer = try global.fetch(RelayStatus.self, "/v1/relay")
        if global.json { return global.printJSON(answer) }
        let s = answer.value
        print("senders: \(s.admission)\(s.allowed.map { " (\($0))" } ?? "")")
        print("holding: \(s.totals.offers) offer(s), \(s.totals.items) photo(s), \(Format.bytes(s.totals.bytes))")
        print(
            "delivered: \(s.deliveries), rejected by recipients: \(s.rejected), expired: \(s.expired), lost: \(s.lost)"
        )
        let refusals = s.refusals.map { "\($0.key) \($0.value)" }.sorted()
        print("refused deposits: \(refusals.isEmpty ? "none" : refusals.joined(separator: ", "))")
        print("receipts waiting for their senders: \(s.receiptsWaiting)")
        if !s.queues.isEmpty {
            print(
                Format.table(
                    ["RECIPIENT", "OFFERS", "PHOTOS", "SIZE", "OLDEST"],
                    s.queues.map { q in
                        [
                            q.recipient.fingerprint, "\(q.offers)", "\(q.items)", Format.bytes(q.bytes),
                            Format.age(q.oldestAt),
                        ]
                    }))
        }
        for d in s.damaged {
            print("DAMAGED: offer \(d.offer) for \(d.recipient.fingerprint): \(d.problem)")
        }
    }
}
