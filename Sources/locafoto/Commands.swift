import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoNode
import LocafotoQuery
import LocafotoVault

/// The one way a command fails. Its error becomes one line on stderr, with `--json` the same
/// error as JSON on stdout (`{"error": {"code", "message"}}`, the control API's shape), and
/// the exit status of its code (`ErrorCode`, one table). A command simply throws: `main`
/// reports what reaches it here.
enum Failure {
    /// `ExitCode` for an error it reports; errors of the command line (ArgumentParser's) pass
    /// unchanged, for ArgumentParser to word.
    static func report(_ error: any Error) -> any Error {
        let message: String
        let code: ErrorCode
        let printed: Bool
        switch error {
        case let e as CLIError: (message, code, printed) = (e.description, e.code, e.printedJSON)
        case let e as AgentError: (message, code, printed) = (e.message, e.code, false)
        case let e as VaultError:
            let a = AgentError(e)
            (message, code, printed) = (a.message, a.code, false)
        default: return error
        }
        if !printed, CommandLine.arguments.dropFirst().contains("--json") {
            printJSONError(code: code, message: message)
        }
        writeStderr("locafoto: \(message)\n")
        return ExitCode(code.exitStatus)
    }
}

struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault", abstract: "Create the encrypted vault, or change its passphrase.",
        subcommands: [VaultInit.self, VaultPasswd.self])

    struct VaultPasswd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd", abstract: "Change the vault passphrase (through the running agent).",
            discussion: """
                The current passphrase is read from the terminal or --passphrase-file / LOCAFOTO_PASSPHRASE_FILE, the new one \
                from the terminal (twice) or --new-passphrase-file; never from the command line. Only the master key is \
                re-wrapped: no photo is re-encrypted, and the change is atomic (after a crash the old or the new passphrase \
                works). Wrong current passphrases count towards the unlock throttle. Backups written before the change \
                still open with the old passphrase.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("Read the current passphrase from this file.", valueName: "file"))
        var passphraseFile: String?
        @Option(help: ArgumentHelp("Read the new passphrase from this file.", valueName: "file")) var newPassphraseFile:
            String?

        func run() throws {
            let old = try Passphrase.obtain(file: passphraseFile, prompt: "Current vault passphrase: ")
            let new = try Passphrase.obtain(
                file: newPassphraseFile, prompt: "New vault passphrase: ", confirm: newPassphraseFile == nil,
                environment: false)
            if newPassphraseFile != nil { Passphrase.warnIfShort(new) }
            let body = PassphraseChangeRequest(
                passphrase: old.withUnsafeBytes { String(decoding: $0, as: UTF8.self) },
                newPassphrase: new.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
            let r = try global.fetch(VaultState.self, "/v1/passwd", body: body)
            global.say(r) { _ in
                "Vault passphrase changed. Backups written before now still open with the old passphrase."
            }
        }
    }

    struct VaultInit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init", abstract: "Create this node's vault, protected by a passphrase.",
            discussion:
                "The passphrase is read from the terminal (twice), or from --passphrase-file / LOCAFOTO_PASSPHRASE_FILE. It is never accepted on the command line. The master key is random and wrapped with Argon2id of the passphrase."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("Read the passphrase from this file (first line).", valueName: "file"))
        var passphraseFile: String?
        @Option(help: "Argon2id strength: interactive (64 MiB), moderate (256 MiB, default) or sensitive (1 GiB).")
        var kdf: String = "moderate"

        func run() throws {
            let params: PasswordKDF.Parameters =
                switch kdf {
                case "interactive": .interactive
                case "moderate": .moderate
                case "sensitive": .sensitive
                default: throw CLIError("--kdf must be interactive, moderate or sensitive", code: .invalidRequest)
                }
            let home = global.nodeHome
            try home.prepare()
            guard !Vault.exists(at: home.vaultDirectory) else {
                throw CLIError("a vault already exists in \(home.vaultDirectory)")
            }
            let pass = try Passphrase.obtain(file: passphraseFile, prompt: "New vault passphrase: ", confirm: true)
            _ = try Vault.create(at: home.vaultDirectory, passphrase: pass, kdf: params)
            if global.json {
                struct Created: Encodable {
                    var vault: String
                    var state = "created"
                }
                try global.printEncoded(Created(vault: home.vaultDirectory))
            } else {
                print("Created the vault in \(home.vaultDirectory).")
                print("If the agent is running, unlock it with `locafoto unlock`.")
            }
        }
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show what the agent is doing.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let answer = try global.fetch(NodeStatus.self, "/v1/status")
        if global.json { return global.printJSON(answer) }
        let s = answer.value
        print(
            """
            name:        \(s.name)
            fingerprint: \(s.fingerprint)
            port:        \(s.port)
            vault:       \(s.vault.rawValue)\(s.photoCount.map { n in "  \(n) photo(s), \(Format.bytes(s.originalBytes ?? 0)) (\(Format.bytes(s.encryptedBytes ?? 0)) on disk)" } ?? "")\(Self.locking(s))
            identity:    \(s.identity == "vault" ? "protected by the vault passphrase" : "in clear (locafoto identity protect)")
            discovery:   \(s.discovery)
            policy:      \(s.policy.rawValue)
            inbox:       \(s.pendingOffers) pending offer(s)
            home:        \(s.home)
            """)
    }
}

extension StatusCommand {
    /// When the vault locks by itself, as the agent was started.
    static func locking(_ s: NodeStatus) -> String {
        var when: [String] = []
        if let seconds = s.autoLockSeconds { when.append("after \(Format.duration(Double(seconds))) idle") }
        if s.lockOnSleep == true { when.append("on suspend or session lock") }
        return when.isEmpty ? "" : "; locks \(when.joined(separator: " and "))"
    }
}

struct IDCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id", abstract: "Show this node's name and fingerprint.",
        discussion: "Compare fingerprints with a peer over another channel (in person, by phone) before trusting it.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let answer = try global.fetch(NodeID.self, "/v1/id")
        global.say(answer) { "\($0.name)  \($0.fingerprint)" }
    }
}

struct PeersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers", abstract: "List peers found over mDNS and peers met before.",
        discussion: "trust: new (never met), known (handshake done), trusted (offers accepted without asking).")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let list = try global.printList(
            PeerSummary.self, "/v1/peers",
            empty: "No peers yet. Is another agent running on this network? (`locafoto status` shows discovery state)",
            ["NAME", "FINGERPRINT", "STATE", "TRUST", "ADDRESS"]
        ) {
            [$0.name, $0.fingerprint, $0.online ? "online" : "offline", $0.trust.rawValue, $0.addresses.first ?? "-"]
        }
        for p in list ?? [] {
            if let w = p.warning { print("WARNING: \(w)") }
        }
    }
}

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Offer photos to one or more peers and wait until they are imported.",
        discussion: """
            `locafoto send PEER... FILE...`: one or more peers, then the photo files. A peer is a display \
            name, a fingerprint prefix (4+ characters) or HOST:PORT; an ambiguous name is an error that \
            lists the candidates. The first argument is always a peer; the next ones are peers too until \
            the first that is an existing file or looks like one (contains "/" or ends in an image or \
            .lfs extension). Sent to several peers, each photo is checked once and each peer gets \
            its own offer and decision. Photos are sniffed (extensions are not trusted), offered, and \
            streamed once the peer accepts. Each photo is offered with a small preview (made here: at most \
            160 px and 16 KiB, without metadata or location) that the peer sees before deciding; to a \
            locafoto peer the previews follow the offer, and none is made when it accepts at once (you \
            are trusted there). --no-preview withholds them. Photos already in your vault are sent with --photo ID or any \
            filter of `list`: `locafoto send bob --album Trip`.

            On a terminal, Ctrl-C asks whether to cancel; answering no goes on waiting. Elsewhere Ctrl-C \
            stops waiting and the agent carries on; `locafoto cancel ID` cancels in any state.

            A trusted peer that is offline gets the photos through the first relay of `agent --relay` \
            without --via; an untrusted or unknown one never does unless you name the relay. \
            A peer that is known (met before, or seen on the network in the last 10 minutes) but not \
            online at this moment, e.g. restarting, is waited for up to --wait seconds (10) before the send \
            fails or goes to a relay; a peer never seen fails at once. Within the same time, a peer whose \
            announced addresses all refuse the connection is waited for at another address. A peer named \
            by HOST:PORT is whoever answers there (one session: its handshake says who, then the offer).

            While `locafoto localsend on`, a peer may also be a LocalSend device (a phone with the \
            LocalSend app): its name as heard nearby or met before, localsend:NAME, or \
            localsend:ADDRESS[:PORT] for whoever answers there. A name of a locafoto peer means that \
            peer. The device's certificate is pinned; a known name with another certificate is \
            refused (77). When the device asks for a PIN, `send` asks for it at the terminal (or reads \
            --pin-file); it is never given on the command line.

            Exit status: 0 when every photo reached every peer (imported, or queued for a peer's locked \
            vault) or a relay holds them (--via); 66 when the peer or a file does not exist; 65 when a \
            file is not a photo; 69 when the peer cannot be reached; 1 when a peer rejected the offer, an \
            item failed or the transfer was cancelled.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Photos from the vault (instead of or besides files)") var filter: FilterOptions
    @Argument(
        help: ArgumentHelp("Recipients, then the photo files to send.", valueName: "peer-or-file"),
        completion: Completions.peersAndFiles) var targets: [String]
    @Option(name: .customLong("photo"), help: "A vault photo to send, by id (repeatable).") var photos: [String] = []
    @Flag(help: "Return at once with the transfer id (one per peer) instead of waiting.") var noWait = false
    @Flag(help: "Compress before sending: longest side 1500 px, JPEG (metadata kept unless --strip-location).")
    var compress = false
    @Option(help: "JPEG quality for --compress, 60...90 (default 75).") var quality: Int?
    @Flag(help: "Remove GPS location data before sending (pixels are not re-encoded unless --compress).")
    var stripLocation = false
    @Flag(
        help:
            "Offer the photos without previews (by default each of the first 100 photos comes with one where its embedded thumbnail or a bounded decode gives it: at most 160 px, 16 KiB, no metadata)."
    ) var noPreview = false
    @Option(
        help: ArgumentHelp(
            "Leave the photos at this relay for the peer (HOST:PORT, or a relay's name or fingerprint); the peer gets them when it collects them or comes online.",
            valueName: "relay")) var via: String?
    @Option(
        help: ArgumentHelp(
            "How long to wait for a known peer that is not online at this moment, or for another address of a peer whose addresses refuse (0...300, default 10; 0 fails at once).",
            valueName: "seconds")) var wait: Double?
    @Option(
        help: ArgumentHelp(
            "The PIN a LocalSend device asks for: the first line of this file (without it, `send` asks at the prompt when the device wants one).",
            valueName: "file")) var pinFile: String?

    func validate() throws {
        if let quality {
            guard compress else { throw ValidationError("--quality needs --compress") }
            guard (60...90).contains(quality) else { throw ValidationError("--quality must be 60...90") }
        }
        if let wait, !(0...300).contains(wait) { throw ValidationError("--wait must be 0...300 seconds") }
        if targets.isEmpty { throw ValidationError("name the peer to send to, then the photo files") }
    }

    /// Extensions that make an argument a file even when it does not exist (the agent then says so).
    static let fileExtensions: Set<String> = [
        "jpg", "jpeg", "png", "heic", "heif", "avif", "webp", "gif", "tif", "tiff", "lfs", "locaphoto",
    ]

    /// Splits the arguments into peers (the first, and those after it up to the first file) and files.
    static func split(_ targets: [String]) -> (peers: [String], files: [String]) {
        func isFile(_ a: String) -> Bool {
            if FileManager.default.fileExists(atPath: a) || a.contains("/") { return true }
            guard let dot = a.lastIndex(of: ".") else { return false }
            return fileExtensions.contains(a[a.index(after: dot)...].lowercased())
        }
        var peers = Array(targets.prefix(1))
        var rest = targets.dropFirst()
        while let next = rest.first, !isFile(next) {
            peers.append(next)
            rest = rest.dropFirst()
        }
        return (peers, Array(rest))
    }

    func run() throws {
        let (peers, files) = Self.split(targets)
        let paths = files.map { NodeHome.absolute($0) }
        var body = SendRequest(
            files: paths, compress: compress, quality: quality, stripLocation: stripLocation, via: via, wait: wait)
        if noPreview { body.preview = false }
        if peers.count == 1 { body.peer = peers[0] } else { body.peers = peers }
        if !photos.isEmpty || !filter.isEmpty { body.selection = try filter.selection(ids: photos) }
        guard !paths.isEmpty || body.selection != nil else {
            throw CLIError(
                "name photo files after the peer(s), or vault photos with --photo ID or a filter (--album, --tag, …)",
                code: .invalidRequest)
        }
        if let pinFile { body.pin = try Self.pin(file: pinFile, prompt: "") }
        var (started, answerJSON, ended, watch) = try start(body, several: peers.count > 1)
        // A LocalSend device that asks for a PIN: asked for at the prompt, and sent again.
        while let t = ended.first, peers.count == 1, pinFile == nil, t.state == .failed,
            t.code == .unauthenticated, SenderLabel.isLocalSend(t.peer.fingerprint ?? ""),
            isatty(STDIN_FILENO) == 1, !global.json
        {
            print(t.message ?? "\(t.peer.name) asks for a PIN")
            body.pin = try Self.pin(file: nil, prompt: "PIN for \(t.peer.name): ")
            // The device that asked, by its certificate: the PIN goes to no other.
            if let fingerprint = t.peer.fingerprint { body.peer = fingerprint }
            (started, answerJSON, ended, watch) = try start(body, several: false)
        }
        guard let watch else {
            if global.json { return printRawJSON(String(decoding: answerJSON, as: UTF8.self)) }
            for t in started { print(t.id) }
            return
        }
        let delivered = ended.allSatisfy { $0.state == .done || $0.state == .held }
        if global.json, delivered {
            if peers.count == 1 {
                try global.printEncoded(ended[0])
            } else {
                try global.printEncoded(TransferList(transfers: ended))
            }
        } else if global.json {
            // The one error shape, with the transfers as they ended beside it.
            let status = Self.exitStatus(ended)
            let failed = ended.filter { $0.state != .done && $0.state != .held }
            let message = failed.map { t in
                let m = t.message ?? t.state.rawValue
                return ended.count > 1 && !m.contains(t.peer.name) ? "\(t.peer.name): \(m)" : m
            }.joined(separator: "; ")
            let code =
                failed.first?.code.flatMap { status == $0.exitStatus ? $0 : nil }
                ?? ExitStatus.code(for: status)
            printJSONError(
                code: code, message: message,
                detail: peers.count == 1 ? ("transfer", ended[0]) : ("transfers", ended))
        } else {
            for t in ended {
                if ended.count > 1 { print("\(t.peer.name):") }
                let indent = ended.count > 1 ? "  " : ""
                for line in Self.itemLines(t) { print(indent + line) }
                print(indent + (t.message ?? t.state.rawValue))
            }
            if let summary = watch.summary(ended) { print(summary) }
            let before = ended[0].originalBytes
            let after = ended[0].totalBytes
            if compress, before > 0 {
                print(
                    "compressed \(Format.bytes(before)) to \(Format.bytes(after)) (\(max(0, (before - after) * 100 / before))% saved)"
                )
            }
        }
        guard delivered else { throw ExitCode(Self.exitStatus(ended)) }
    }

    /// Starts the send and, unless --no-wait, follows it to its end (`watch` nil: not followed).
    private func start(_ body: SendRequest, several: Bool) throws -> (
        started: [TransferSnapshot], answer: Data, ended: [TransferSnapshot], watch: SendWatch?
    ) {
        // Subscribed before the send starts: none of its events can be missed.
        let events = noWait ? nil : try global.client.events(kinds: ["transfer"])
        defer { events?.close() }
        // One peer: the transfer; several: {"transfers": [...]}, one per peer.
        let started: [TransferSnapshot]
        let answerJSON: Data
        if !several {
            let answer = try global.fetch(TransferSnapshot.self, "/v1/send", body: body)
            (started, answerJSON) = ([answer.value], answer.json)
        } else {
            let answer = try global.fetch(TransferList.self, "/v1/send", body: body)
            (started, answerJSON) = (answer.value.transfers, answer.json)
        }
        guard let events else { return (started, answerJSON, [], nil) }
        let watch = SendWatch(global: global, started: started, events: events)
        return (started, answerJSON, try watch.run(), watch)
    }

    /// A LocalSend device's PIN, from the first line of `file` or typed at the prompt.
    static func pin(file: String?, prompt: String) throws -> String {
        let secret = try Passphrase.obtain(file: file, prompt: prompt, environment: false)
        let pin = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        guard !pin.isEmpty else { throw CLIError("the PIN is empty", code: .invalidRequest) }
        return pin
    }

    /// A line per photo that reached the peer or failed on its own; the photos that never moved
    /// because the transfer ended early (rejected, cancelled, failed before sending) as one line
    /// per state (`40 photos not sent (offered)`) instead of one each. A transfer that ended
    /// before its offer went out has nothing to say of its items.
    static func itemLines(_ t: TransferSnapshot) -> [String] {
        // What the receiver or a relay said of the item.
        let moved: Set<TransferSnapshot.ItemStatus> = [.imported, .duplicate, .queued, .held, .delivered, .failed]
        var lines: [String] = []
        var unsent: [(status: TransferSnapshot.ItemStatus, count: Int)] = []
        for item in t.items where item.status != .preparing {
            if t.state == .done || t.state == .held || moved.contains(item.status) {
                let extra = item.message.map { " (\($0))" } ?? ""
                lines.append(
                    "\(item.status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(item.name)\(extra)")
            } else if let i = unsent.firstIndex(where: { $0.status == item.status }) {
                unsent[i].count += 1
            } else {
                unsent.append((item.status, 1))
            }
        }
        for group in unsent {
            lines.append("\(group.count == 1 ? "1 photo" : "\(group.count) photos") not sent (\(group.status))")
        }
        return lines
    }

    /// The exit status of a send that did not deliver everything: the table's status for the
    /// cause the agent gave (a peer or file not found 66, not a photo 65, a peer that cannot be
    /// reached 69) when every transfer that failed gave the same one; 1 otherwise (a rejection,
    /// a cancel, an item refused by the peer).
    static func exitStatus(_ ended: [TransferSnapshot]) -> Int32 {
        let bad = ended.filter { $0.state != .done && $0.state != .held }
        let codes = Set(bad.map { $0.state == .failed ? $0.code : nil })
        guard codes.count == 1, let code = codes.first ?? nil else { return ExitStatus.failed }
        return code.exitStatus
    }
}

struct InboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inbox", abstract: "List offers waiting for your decision and those being received.",
        discussion:
            "Offers expire after an hour if nobody decides. Accept with `locafoto accept ID` (a unique prefix of the id is enough), or watch with --watch.\n\n"
            + InboxWatch.discussion)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Also show decided offers.") var all = false
    @Flag(help: "Keep running: ask about each offer as it arrives (the same as `locafoto receive`).") var watch = false

    func run() throws {
        if watch { return try InboxWatch(global: global).run() }
        var parameters: [String: String] = all ? ["all": "1"] : [:]
        if global.json { return try global.printJSONPages("/v1/inbox", parameters) }
        // The table names a few items per offer; an offer of 10,000 items need not come whole.
        parameters["items"] = "5"
        var list: [InboxOffer] = []
        try global.pages("/v1/inbox", parameters, as: InboxOffer.self) { page, _ in list += page }
        guard !list.isEmpty else { return print("The inbox is empty.") }
        print(
            Format.table(
                ["ID", "FROM", "FINGERPRINT", "ITEMS", "SIZE", "AGE", "STATE"],
                list.map { o in
                    [
                        String(o.id.prefix(8)),
                        o.sender.name
                            + SenderLabel.suffix(fingerprint: o.sender.fingerprint, trusted: o.sender.trusted)
                            + (o.via.map { " via relay \($0.name)" } ?? ""),
                        o.sender.fingerprint, "\(o.itemCount)", Format.bytes(o.totalBytes),
                        Format.age(o.receivedAt),
                        (o.state == "accepted" ? "receiving" : o.state) + (o.connected ? "" : ", sender gone"),
                    ]
                }))
        for o in list {
            let names = o.items.map { item in
                switch item.status {
                case "needsKey": "\(item.name) (\(item.error ?? "needs a key"))"
                // The inbox keeps no name of an imported photo; the vault has it, sealed.
                case "imported" where item.name.isEmpty:
                    "photo \(item.photo.map { String($0.prefix(8)) } ?? "?") (its name is in the vault: locked, or the photo was deleted)"
                default: item.name
                }
            }
            let count = o.itemCount
            print(
                "  \(String(o.id.prefix(8))): \(names.prefix(5).joined(separator: ", "))\(count > 5 ? ", … (\(count) items)" : "")"
            )
            let coming = o.previewsPending.map { ", \($0) more coming" } ?? ""
            if let n = o.previewCount, n > 0 || !coming.isEmpty {
                print(
                    "  \(String(o.id.prefix(8))): \(n) of \(count) with a preview\(coming): locafoto preview \(String(o.id.prefix(8))) N -o FILE"
                )
            }
        }
    }
}

struct RejectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject", abstract: "Reject an offer, or stop a transfer being received; the sender is told.",
        discussion:
            "A pending offer is refused. A transfer being received is stopped: photos already imported stay, the partial one is deleted, the sender's transfer ends cancelled. An interrupted transfer is dropped with its partial photos."
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Offer id (or a unique prefix, 4+ characters).", completion: Completions.pendingOffers) var offer:
        String

    func run() throws {
        let answer = try global.fetch(OfferDecision.self, "/v1/inbox/\(offer)/reject", method: "POST")
        global.say(answer) { $0.message }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the photos in the vault (newest taken first; filters and sort orders below).",
        discussion:
            "Examples: `locafoto list --album Holidays --sort size`, `locafoto list --tag beach --since 2025-06-01`, `locafoto list --search IMG_12`."
    )
    @OptionGroup var global: GlobalOptions
    @OptionGroup var filter: FilterOptions

    func run() throws {
        var parameters = try filter.query().urlParameters
        parameters["limit"] = nil
        if global.json { return try global.printJSONPages("/v1/photos", parameters, limit: filter.limit) }
        var list: [PhotoRow] = []
        try global.pages("/v1/photos", parameters, limit: filter.limit, as: PhotoRow.self) { page, _ in list += page
        }
        guard !list.isEmpty else { return print(filter.isEmpty ? "The vault is empty." : "No photo matches.") }
        print(
            Format.table(
                ["ID", "NAME", "FORMAT", "SIZE", "TAKEN", "IMPORTED", "FROM", "TAGS"],
                list.map {
                    [
                        String($0.id.prefix(8)) + ($0.favorite == true ? "*" : ""),
                        $0.name ?? "-", $0.format, Format.bytes($0.originalBytes),
                        $0.capturedAt.map { String($0.prefix(10)) } ?? "-",
                        Format.age($0.importedAt), $0.sender?.name ?? "(local)",
                        ($0.tags ?? []).joined(separator: ","),
                    ]
                }))
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write decrypted copies of photos into a folder.",
        discussion: """
            `locafoto export PHOTO... DIR`, or `locafoto export --album NAME DIR` (any filter of `list`). \
            Files are named after the photos' original names (made safe: no path components); an \
            existing file is never overwritten unless --overwrite. --strip-location removes GPS data \
            without re-encoding the pixels (JPEG, PNG, WebP; HEIC/TIFF have the GPS fields blanked). \
            The folder is created when missing (mode 0700), and each file's modification time is \
            the photo's capture time. --filter NAME writes filtered JPEGs (`NAME-FILTER.jpg`; \
            `locafoto filter --list`).

            `locafoto export ID -` writes one photo to standard output (`locafoto export ID - | feh -`): \
            the agent decrypts it in memory and sends it over the control socket; no plaintext file \
            is written anywhere.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: FilterOptions
    @Argument(help: "Photo ids (or unique prefixes), then the destination folder.") var arguments: [String]
    @Flag(help: "Replace existing files of the same name.") var overwrite = false
    @Flag(help: "Remove GPS location data from the copies.") var stripLocation = false
    @Option(help: ArgumentHelp("Write a .lfs file sealed with this named key (one photo).", valueName: "key")) var lfs:
        String?
    @Option(help: ArgumentHelp("Apply this filter to the copies (see `locafoto filter --list`).", valueName: "name"))
    var filter: String?

    func run() throws {
        guard let dir = arguments.last else { throw CLIError("name the destination folder", code: .invalidRequest) }
        let ids = Array(arguments.dropLast())
        if dir == "-" {
            // To standard output: one photo, straight from the agent's memory.
            guard ids.count == 1, lfs == nil else {
                throw CLIError(
                    "export to standard output (-) takes one photo id and no --lfs", code: .invalidRequest)
            }
            if isatty(STDOUT_FILENO) == 1 {
                throw CLIError(
                    "standard output is a terminal: redirect it (`| feh -`), or name a folder",
                    code: .invalidRequest)
            }
            let id = RawOutput.query(ids[0])
            let path = filter.map {
                "/v1/photos/\(id)/filtered?filter=\(RawOutput.query($0))"
                    + (stripLocation ? "&stripLocation=1" : "")
            }
            guard path != nil || !stripLocation else {
                throw CLIError(
                    "--strip-location to standard output needs --filter (the original is sent as stored)",
                    code: .invalidRequest)
            }
            if let path { return try RawOutput.write(try RawOutput.get(global, path), to: "-") }
            // The original streams through: any size, never whole in memory here.
            let r = try global.client.download("/v1/photos/\(id)/original", to: STDOUT_FILENO)
            guard r.status == 200 else {
                try global.check(r)
                throw CLIError("the agent answered \(r.status)")
            }
            return
        }
        let directory = NodeHome.absolute(dir)
        if let lfs {
            guard ids.count == 1 else { throw CLIError("--lfs exports one photo at a time", code: .invalidRequest) }
            guard filter == nil else {
                throw CLIError("--lfs exports the photo as stored; --filter does not apply", code: .invalidRequest)
            }
            let r = try global.fetch(
                PhotoFile.self, "/v1/photos/\(ids[0])/export",
                body: ExportPhotoRequest(directory: directory, lfsKey: lfs))
            return global.say(r) { $0.path ?? "" }
        }
        let answer = try global.fetch(
            [PhotoFile].self, "/v1/export",
            body: ExportRequest(
                selection: try selection.selection(ids: ids), directory: directory, overwrite: overwrite,
                stripLocation: stripLocation, filter: filter))
        let r = answer.value
        let failed = r.filter { $0.error != nil }
        // The table's status when every photo failed for the same reason (74: the folder
        // cannot be written), 1 for a mix.
        let codes = Set(failed.map(\.code))
        let status =
            failed.isEmpty
            ? ExitStatus.ok : codes.count == 1 ? (codes.first!).map(\.exitStatus) ?? 1 : 1
        if global.json, status != ExitStatus.ok {
            let message = "\(failed.count) of \(r.count) photo(s) not exported: \(failed[0].error ?? "")"
            printJSONError(
                code: failed[0].code.flatMap { $0.exitStatus == status ? $0 : nil }
                    ?? ExitStatus.code(for: status),
                message: message, detail: ("photos", r))
        } else if global.json, ids.count == 1, let one = r.first {
            try global.printEncoded(one)  // the single-photo shape scripts use
        } else if global.json {
            global.printJSON(answer)
        }
        for o in r {
            if let e = o.error {
                writeStderr("not exported \(String(o.photo.prefix(8))): \(e)\n")
            } else if !global.json {
                print(o.path ?? "")
            }
        }
        if status != ExitStatus.ok { throw ExitCode(status) }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import photos from files and folders, or one photo from standard input (`-`).",
        discussion: """
            Folders are walked recursively (hidden files skipped). Photos already in the vault (same \
            content) and files that are not supported images are skipped with a reason; `.lfs` files are \
            decrypted with the vault's key of the name in their header. A summary ends the run; on a \
            terminal a progress bar shows meanwhile.

            From standard input the photo is streamed straight into the encrypted vault: no plaintext \
            copy is written to disk (e.g. `fswebcam - | locafoto import -`).

            --remove-originals deletes each source file after its import committed. Deleting a file \
            does not erase its blocks: on SSDs and copy-on-write file systems (btrfs, ZFS) the old data \
            may survive until overwritten; use full-disk encryption if that matters.

            Exit status: 0 when every file was imported or skipped as already in the vault; else, \
            after importing the rest, 65 when the files skipped are not photos, 66 when they do not \
            exist, 74 when they cannot be read, 1 for a mix.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Photo files or folders, or - for standard input.") var files: [String]
    @Option(help: "Name to record for a photo read from standard input.") var name: String?
    @Flag(help: "Do not descend into subfolders.") var noRecursive = false
    @Flag(help: "Remove each original after it was imported (see above for what this does not guarantee).")
    var removeOriginals = false
    @Flag(help: "Import content that is already in the vault again.") var keepDuplicates = false
    @Flag(name: [.short, .long], help: "Print only the summary.") var quiet = false
    @Option(
        help: ArgumentHelp(
            "Apply this filter on the way in: only the filtered photo is stored (see `locafoto filter --list`).",
            valueName: "name")) var filter: String?

    func run() throws {
        if files == ["-"] {
            var parameters: [String] = []
            if let name { parameters.append("name=\(RawOutput.query(name))") }
            if let filter { parameters.append("filter=\(RawOutput.query(filter))") }
            let q = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
            let r = try global.typed(
                PhotoRecord.self, "/v1/import", try global.client.upload("/v1/import\(q)", from: STDIN_FILENO))
            global.say(r) { "imported \(String($0.id.prefix(8)))  \($0.format)  \(Format.bytes($0.originalSize))" }
            return
        }
        guard !files.contains("-") else {
            throw CLIError("`-` (standard input) cannot be mixed with files", code: .invalidRequest)
        }
        // Subscribed before the import starts: its progress and end cannot be missed.
        let events = try global.client.events(kinds: ["import"])
        defer { events.close() }
        // The job may have ended already (nothing to import): its answer is then the result.
        var answer = try global.fetch(
            ImportSnapshot.self, "/v1/imports",
            body: ImportRequest(
                paths: files.map { NodeHome.absolute($0) }, recursive: !noRecursive,
                removeOriginals: removeOriginals,
                skipDuplicates: !keepDuplicates, filter: filter))
        let started = answer.value
        let tty = isatty(STDERR_FILENO) == 1 && !global.json && !quiet
        var shown = false
        while answer.value.finishedAt == nil {
            guard let e = try events.next() else {
                throw CLIError(
                    "the agent stopped before the import ended; photos imported so far stay in the vault (`locafoto list`)"
                )
            }
            switch e.kind {
            case .importProgress where e.job == started.id:
                guard tty, let found = e.items, found > 0 else { continue }
                let done = e.item ?? 0
                writeStatusLine(
                    "Importing  \(Format.bar(Double(done) / Double(found)))  \(done)/\(found)  \(Format.bytes(e.bytes ?? 0))"
                )
                shown = true
            case .importFinished where e.job == started.id, .missed:
                answer = try global.fetch(ImportSnapshot.self, "/v1/imports/\(started.id)")
            default:
                continue
            }
        }
        if shown { clearStatusLine() }
        let job = answer.value
        // Skipping duplicates is success; any other file skipped is not, after the rest were
        // imported: the table's status when every such file was skipped for the same reason
        // (65 not a photo, 66 not found, 74 unreadable), 1 for a mix.
        let problems = job.skipped.filter { !$0.isDuplicate }
        let codes = Set(problems.map(\.code))
        let status =
            problems.isEmpty
            ? ExitStatus.ok : codes.count == 1 ? (codes.first!).map(\.exitStatus) ?? 1 : 1
        if global.json, status != ExitStatus.ok {
            printJSONError(
                code: ExitStatus.code(for: status),
                message:
                    "\(problems.count) file(s) not imported (\(problems[0].path): \(problems[0].reason ?? "")); \(job.imported.count) imported",
                detail: ("import", job))
        } else if global.json {
            global.printJSON(answer)
        }
        if !global.json {
            if !quiet {
                for e in job.imported { print("imported \(String((e.photo ?? "").prefix(8)))  \(e.path)") }
                for e in job.skipped { writeStderr("skipped \(e.path): \(e.reason ?? "")\n") }
            }
            print("\(job.imported.count) imported, \(job.skipped.count) skipped, \(Format.bytes(job.bytes))")
        }
        if status != ExitStatus.ok { throw ExitCode(status) }
    }
}

struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock", abstract: "Unlock the running agent's vault.",
        discussion:
            "Photos received while the vault was locked are imported now. The passphrase goes to the agent over its private socket; it is never in argv or logs."
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Read the passphrase from this file.", valueName: "file")) var passphraseFile: String?

    func run() throws {
        let pass = try Passphrase.obtain(file: passphraseFile, prompt: "Vault passphrase: ")
        var body = Array("{\"passphrase\":".utf8)
        pass.withUnsafeBytes { raw in
            body += Array(
                (try? JSONSerialization.data(
                    withJSONObject: String(decoding: raw, as: UTF8.self), options: [.fragmentsAllowed])) ?? Data())
        }
        body += Array("}".utf8)
        defer { secureZeroArray(&body) }
        let r = try global.typed(
            VaultState.self, "/v1/unlock", try global.client.request("POST", "/v1/unlock", body: Data(body)))
        global.say(r) {
            let n = $0.importedQueued ?? 0
            return "Vault unlocked." + (n > 0 ? " Imported \(n) photo(s) received while it was locked." : "")
        }
    }
}

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock the vault (the agent forgets the master key); received photos wait until unlock.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let r = try global.fetch(VaultState.self, "/v1/lock", method: "POST")
        global.say(r) { _ in "Vault locked." }
    }
}

typealias TrustCommand = VerbCommand<Trust>
enum Trust: Verb {
    static let configuration = CommandConfiguration(
        commandName: "trust", abstract: "Trust a known peer: its offers are accepted without asking.",
        discussion:
            "Compare the peer's fingerprint (`locafoto id` on their machine) with `locafoto peers` before trusting it.")
    static func run(_ t: PeerName, _ global: GlobalOptions) throws { try peerAction(global, t, .trust, "now trusted") }
}

typealias UntrustCommand = VerbCommand<Untrust>
enum Untrust: Verb {
    static let configuration = CommandConfiguration(
        commandName: "untrust", abstract: "Stop trusting a peer (its offers wait in the inbox again).")
    static func run(_ t: PeerName, _ global: GlobalOptions) throws {
        try peerAction(global, t, .untrust, "no longer trusted")
    }
}

typealias ForgetCommand = VerbCommand<Forget>
enum Forget: Verb {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Forget a known peer (e.g. after it was reinstalled with a new key).")
    static func run(_ t: PeerName, _ global: GlobalOptions) throws { try peerAction(global, t, .forget, "forgotten") }
}

private func peerAction(_ global: GlobalOptions, _ target: PeerName, _ action: TrustChange, _ done: String) throws {
    let q = target.peer.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target.peer
    let answer = try global.fetch(PeerSummary.self, "/v1/peers/\(q)/\(action.rawValue)", method: "POST")
    global.say(answer) { "\($0.name) [\($0.fingerprint)] is \(done)." }
}

struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "Show or set who may send you photos.",
        discussion:
            "everyone: offers wait in the inbox (trusted peers' are accepted at once) — the default; trusted: only trusted peers; off: refuse everything."
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "everyone, trusted or off.", transform: { try ReceivePolicy.named($0, field: "policy") })
    var policy: ReceivePolicy?

    func run() throws {
        let r =
            try policy.map {
                try global.fetch(PolicyAnswer.self, "/v1/policy", method: "PUT", body: PolicyAnswer(policy: $0))
            }
            ?? global.fetch(PolicyAnswer.self, "/v1/policy")
        global.say(r) { $0.policy.rawValue }
    }
}

struct BundleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Seal a photo (a file, or a vault photo with --photo) for a known peer into a .locaphoto file.",
        discussion: """
            The file can travel any way (USB stick, mail); only that peer can open it, and it proves it came from you. \
            A vault photo is decrypted in memory only. The bundle's metadata carries the photo's capture date, width \
            and height when its EXIF has them (visible to whoever holds the file, like its name and size).
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Photo file (or --photo ID).") var file: String?
    @Option(help: "A vault photo's id (or a unique prefix) instead of a file.") var photo: String?
    @Option(name: .long, help: "Recipient: display name or fingerprint prefix of a known peer.") var to: String
    @Option(name: [.short, .long], help: "Output file (must not exist).") var output: String

    func validate() throws {
        guard (file == nil) != (photo == nil) else {
            throw ValidationError("name a photo file, or a vault photo with --photo ID (not both)")
        }
    }

    func run() throws {
        let r = try global.fetch(
            BundleWritten.self, "/v1/bundle",
            body: BundleWriteRequest(
                file: file.map { NodeHome.absolute($0) }, photo: photo, peer: to, output: NodeHome.absolute(output))
        )
        global.say(r) { $0.path }
    }
}

struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open", abstract: "Verify a .locaphoto file addressed to this node and import it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ".locaphoto file.") var file: String

    func run() throws {
        let r = try global.fetch(PhotoRecord.self, "/v1/open", body: PathRequest(path: NodeHome.absolute(file)))
        global.say(r) { "imported \(String($0.id.prefix(8))) from \($0.senderName ?? $0.senderFingerprint ?? "?")" }
    }
}
