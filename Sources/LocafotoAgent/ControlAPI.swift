import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import LocafotoRelay
import LocafotoVault
import LocafotoWire
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// The control API (protocol/control-api.md): what the CLI and scripts may ask of the agent.
extension Agent {
    func handle(_ r: ControlRequest) async -> ControlResponse {
        do {
            return try await route(r)
        } catch let e as AgentError {
            return .error(e)
        } catch let e as VaultError {
            return .error(Agent.map(e))
        } catch let e as FormatError {
            return .error(AgentError(.invalidRequest, e.message))
        } catch {
            return .error(AgentError(.internalError, "\(error)"))
        }
    }

    static func map(_ e: VaultError) -> AgentError {
        let code: AgentError.Code = switch e.code {
        case .wrongPassphrase: .refused
        case .locked: .vaultLocked
        case .notFound: .noVault
        case .photoNotFound: .notFound
        case .ambiguousPhoto: .ambiguous
        case .exists, .alreadyExists: .conflict
        case .unsupportedContent, .tooLarge, .malformedFile: .unsupported
        case .unknownKey: .notFound
        case .keyExists, .keyInUse: .conflict
        case .invalidKeyName, .invalidKey: .invalidRequest
        case .decryptionFailed: .corrupt
        case .throttled: .throttled
        case .albumLocked: .refused
        case .albumNotFound: .notFound
        case .albumExists, .conflict: .conflict
        case .invalidArgument: .invalidRequest
        case .duplicate: .conflict
        default: .io
        }
        return AgentError(code, e.message)
    }

    private func route(_ r: ControlRequest) async throws -> ControlResponse {
        guard r.path.first == "v1" else { throw AgentError(.notFound, "unknown API path; this agent speaks /v1/…") }
        let p = Array(r.path.dropFirst())
        if let handled = try organisationRoute(r, p) { return handled }
        switch (r.method, p.count, p.first) {
        case (.GET, 1, "status"): return .json(status)
        case (.GET, 1, "id"): return .json(idInfo)
        case (.GET, 1, "doctor"): return .json(doctor())
        case (.GET, 1, "peers"): return .json(try peerList())
        case (.POST, 1, "send"):
            struct Body: Decodable {
                var peer: String?
                /// Several recipients: the photos are prepared once, each peer gets a transfer.
                var peers: [String]?
                var files: [String]?
                var selection: SelectionJSON?
                var compress: Bool?
                var quality: Int?
                var stripLocation: Bool?
                var via: String?
                var wait: Double?  // seconds; see Agent.sendWait
            }
            let b = try decode(Body.self, r.body)
            if let w = b.wait, !(0...Double(Agent.maxSendWait.components.seconds)).contains(w) {
                throw AgentError(.invalidRequest, "wait must be 0...\(Agent.maxSendWait.components.seconds) seconds")
            }
            if isRelay { throw AgentError(.invalidRequest, "this agent is a relay; it does not send photos of its own") }
            var photos: [PhotoRecord] = []
            if let selection = try b.selection?.selection() {
                let v = try unlockedVault()
                switch selection {
                case .ids(let ids): photos = try ids.map { try v.photo(matching: $0) }
                case .query(let q): photos = try v.photos(matching: q)
                }
                guard !photos.isEmpty else { throw AgentError(.notFound, "no photo in the vault matches") }
            }
            var transform: SendTransform?
            if b.compress == true || b.stripLocation == true {
                var options: CompressionOptions?
                if b.compress == true {
                    var o = CompressionOptions()
                    if let q = b.quality { o.quality = q }
                    do { try o.validate() } catch { throw AgentError(.invalidRequest, "\(error)") }
                    options = o
                }
                transform = SendTransform(compression: options, stripLocation: b.stripLocation ?? false)
            }
            guard (b.peer == nil) != (b.peers == nil) else { throw AgentError(.invalidRequest, "give either peer or peers") }
            let wait = b.wait.map { Duration.milliseconds(Int64($0 * 1000)) }
            let started = try sender.send(
                to: b.peers ?? [b.peer!], paths: b.files ?? [], vaultPhotos: photos, transform: transform, via: b.via, wait: wait)
            if b.peers != nil {
                struct Started: Encodable { var transfers: [OutgoingTransfer.Snapshot] }
                return .json(Started(transfers: started.map(\.current)), status: 202)
            }
            return .json(started[0].current, status: 202)
        case (.GET, 1, "relay"):
            guard let relayStore else { throw AgentError(.notFound, "this agent is not a relay; start one with `locafoto relay`") }
            do { return .json(try relayStore.status()) } catch let e as RelayError { throw AgentError(.io, e.message) }
        case (.GET, 1, "transfers"): return .json(allTransfers)
        case (.GET, 2, "transfers"):
            guard let t = transfer(p[1]) else { throw AgentError(.notFound, "no transfer \(p[1])") }
            // `?after=N&wait=S`: answer once the phase is past N, or after S seconds (≤ 60).
            guard let after = r.query["after"] else { return .json(t.current) }
            guard let phase = Int(after), let wait = Double(r.query["wait"] ?? "30"), (0...60).contains(wait) else {
                throw AgentError(.invalidRequest, "after must be a phase number and wait 0...60 seconds")
            }
            // A stopping agent answers at once: shutdown waits for open control requests.
            let snapshot = await cancelWhenGracefulShutdown {
                await t.snapshot(after: phase, timeout: .milliseconds(Int64(wait * 1000)))
            }
            return .json(snapshot)
        case (.POST, 3, "transfers") where p[2] == "cancel":
            return .json(try await sender.cancelTransfer(p[1]).current)
        case (.GET, 1, "inbox"):
            return .json(try await inboxList(all: r.query["all"] != nil, page: try ListPage(r.query), itemLimit: try ListPage.count(r.query, "items")))
        case (.POST, 3, "inbox") where p[2] == "accept" || p[2] == "reject":
            return .json(try await decideOffer(p[1], p[2] == "accept" ? .accepted : .rejected))
        case (.POST, 3, "photos") where p[2] == "export":
            struct Body: Decodable { var directory: String; var overwrite: Bool?; var lfsKey: String? }
            let b = try decode(Body.self, r.body)
            let v = try unlockedVault()
            let photo = try v.photo(matching: p[1])
            let dir = NodeHome.absolute(b.directory)
            let path: String
            if let key = b.lfsKey {
                path = try v.exportLFS(photo.id, keyName: key, to: dir + "/" + Vault.lfsFileName(for: photo))
            } else {
                path = try v.export(photo.id, toDirectory: dir, overwrite: b.overwrite ?? false)
            }
            struct Out: Encodable { var photo: String; var path: String }
            return .json(Out(photo: photo.id, path: path))
        case (.POST, 1, "imports"):
            struct Body: Decodable { var paths: [String]; var recursive: Bool?; var removeOriginals: Bool?; var skipDuplicates: Bool? }
            let b = try decode(Body.self, r.body)
            var options = ImportJob.Options()
            options.recursive = b.recursive ?? true
            options.removeOriginals = b.removeOriginals ?? false
            options.skipDuplicates = b.skipDuplicates ?? true
            return .json(try startImport(paths: b.paths, options: options).current, status: 202)
        case (.GET, 2, "imports"):
            guard let job = importJob(p[1]) else { throw AgentError(.notFound, "no import \(p[1])") }
            return .json(job.current)
        case (.POST, 1, "unlock"):
            struct Body: Decodable { var passphrase: String }
            var body = r.body
            defer { secureZero(&body) }
            var bytes = Array(try decode(Body.self, body).passphrase.utf8)
            let imported = try unlock(passphrase: SecretBytes(consuming: &bytes))
            struct Out: Encodable { var vault: String; var importedQueued: Int }
            return .json(Out(vault: "unlocked", importedQueued: imported))
        case (.POST, 1, "lock"):
            try lock()
            return .json(["vault": "locked"])
        case (.POST, 3, "peers") where p[2] == "pair":
            return .json(try await pair(p[1]))
        case (.GET, 1, "pairing"):
            return .json(pairing.recent)
        case (.POST, 3, "peers") where ["trust", "untrust", "forget"].contains(p[2]):
            return .json(try await changePeer(p[1], p[2]))
        case (.GET, 1, "policy"): return .json(["policy": try await inbox.policy.rawValue])
        case (.PUT, 1, "policy"), (.POST, 1, "policy"):
            struct Body: Decodable { var policy: String }
            let b = try decode(Body.self, r.body)
            guard let policy = ReceivePolicy(rawValue: b.policy) else {
                throw AgentError(.invalidRequest, "policy must be one of: \(ReceivePolicy.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            try store.setSetting("policy", policy.rawValue)
            return .json(["policy": policy.rawValue])
        case (.GET, 1, "keys"): return .json(try unlockedVault().keys())
        case (.POST, 2, "keys"):
            return try keyAction(p[1], r.body)
        case (.POST, 1, "backup"):
            struct Body: Decodable { var path: String }
            return .json(try unlockedVault().writeBackup(to: NodeHome.absolute(try decode(Body.self, r.body).path)), status: 201)
        case (.POST, 1, "bundle"):
            struct Body: Decodable, BundleRequest { var file: String; var peer: String; var output: String }
            return .json(try writeBundle(try decode(Body.self, r.body)))
        case (.POST, 1, "open"):
            struct Body: Decodable { var path: String }
            return .json(try openBundle(at: NodeHome.absolute(try decode(Body.self, r.body).path)))
        default:
            throw AgentError(.notFound, "no such API call: \(r.method) /\(r.path.joined(separator: "/"))")
        }
    }

    /// Streaming import of one photo from the request body (`locafoto import -`).
    func streamingRoute(_ r: ControlRequest) throws -> (any ControlBodySink)? {
        guard r.method == .POST, r.path == ["v1", "import"] else { return nil }
        let name = r.query["name"].flatMap { $0.isEmpty ? nil : $0 }
        return StreamImport(try unlockedVault().beginImport(name: name))
    }

    private func decode<T: Decodable>(_ type: T.Type = T.self, _ body: [UInt8]) throws -> T {
        try decodeBody(type, body)
    }

    struct Status: Encodable {
        var name: String
        var fingerprint: String
        var port: Int
        var vault: String
        var discovery: String
        var policy: String
        var home: String
        var pendingOffers: Int
        var version: Int
        /// "node", or "relay" for `locafoto relay`.
        var role: String
        /// The relays this node uses (`--relay`).
        var relays: [String]
    }

    var status: Status {
        Status(
            name: displayName, fingerprint: identity.fingerprint.description, port: listeningPort.withLock { $0 },
            vault: vaultState, discovery: discoveryStatus.withLock { $0 },
            policy: (try? store.setting("policy")) ?? ReceivePolicy.everyone.rawValue, home: configuration.home.directory,
            pendingOffers: (try? store.offers(states: [.pending]).count) ?? 0, version: WireProtocol.version,
            role: isRelay ? "relay" : "node", relays: configuration.relays.map(\.description))
    }

    struct IDInfo: Encodable {
        var name: String
        var fingerprint: String
        var publicKey: String
    }

    var idInfo: IDInfo {
        IDInfo(name: displayName, fingerprint: identity.fingerprint.description, publicKey: Data(identity.publicKey.bytes).base64EncodedString())
    }

    struct PeerInfo: Encodable {
        var name: String
        var fingerprint: String
        var online: Bool
        var trust: String
        var addresses: [String]
        var lastSeen: Date?
        var warning: String?
    }

    func peerList() throws -> [PeerInfo] {
        let known = try store.peers()
        let knownByFP = Dictionary(known.map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        var out = [PeerInfo]()
        var seen = Set<String>()
        for p in directory.online {
            let fp = p.fingerprint.description
            seen.insert(fp)
            let k = knownByFP[fp]
            var warning: String?
            if k == nil, let other = known.first(where: { $0.name.caseInsensitiveCompare(p.name) == .orderedSame }) {
                warning = "the name '\(p.name)' belongs to known peer \(other.fingerprint); this one has another key"
            }
            out.append(PeerInfo(
                name: p.name, fingerprint: fp, online: true, trust: k?.trust.rawValue ?? "new",
                addresses: p.endpoints.map { $0.family == "ipv6" ? "[\($0.address)]:\($0.port)" : "\($0.address):\($0.port)" },
                lastSeen: p.lastSeen, warning: warning))
        }
        for k in known where !seen.contains(k.fingerprint) {
            out.append(PeerInfo(name: k.name, fingerprint: k.fingerprint, online: false, trust: k.trust.rawValue, addresses: k.lastAddress.map { [$0] } ?? [], lastSeen: k.lastSeen))
        }
        return out
    }

    struct InboxEntry: Encodable {
        struct Sender: Encodable {
            var name: String
            var fingerprint: String
            var trusted: Bool
        }
        struct Item: Encodable {
            var name: String
            var kind: String
            var size: Int64
            var status: String
            var photo: String?
            var error: String?
        }
        var id: String
        var sender: Sender
        /// The relay that handed the offer on; nil for a direct offer.
        var via: Sender?
        var state: String
        var items: [Item]
        /// All items of the offer; `items` lists the first `?items=N` of them when that is given.
        var itemCount: Int
        var totalBytes: Int64
        var receivedAt: Date
        var expiresAt: Date
        var connected: Bool
        var message: String?
    }

    func inboxList(all: Bool, page: ListPage = ListPage(), itemLimit: Int? = nil) async throws -> [InboxEntry] {
        _ = try store.expireOffers()
        receiver.expireInterrupted()
        // Besides undecided offers, the inbox shows interrupted transfers and offers with items
        // still waiting for a key.
        let offers = try store.offers().filter { o in
            all || o.state == .pending || o.state == .interrupted
                || ((try? store.items(of: o.id))?.contains { $0.status == .needsKey } ?? false)
        }
        var out = [InboxEntry]()
        for o in page.apply(offers) {
            let trusted = try store.peer(o.senderFingerprint)?.trust == .trusted
            let stored = try store.items(of: o.id)
            let items = stored.prefix(itemLimit ?? stored.count).map {
                InboxEntry.Item(name: $0.name, kind: $0.kind, size: $0.size, status: $0.status.rawValue, photo: $0.photoId, error: $0.errorMessage)
            }
            out.append(InboxEntry(
                id: o.id, sender: .init(name: o.senderName, fingerprint: o.senderFingerprint, trusted: trusted),
                via: o.viaFingerprint.map { fp in .init(name: o.viaName ?? "", fingerprint: fp, trusted: (try? store.peer(fp))??.trust == .trusted) },
                state: o.state.rawValue,
                items: Array(items), itemCount: stored.count, totalBytes: o.totalBytes, receivedAt: o.receivedAt, expiresAt: o.expiresAt,
                connected: await inbox.isLive(o.id), message: o.message))
        }
        return out
    }

    /// Named shared keys (`.lfs`): create, import (hex), export (hex), delete.
    func keyAction(_ action: String, _ body: [UInt8]) throws -> ControlResponse {
        struct Body: Decodable { var name: String; var hex: String?; var force: Bool? }
        var raw = body
        defer { secureZero(&raw) }
        let b = try decode(Body.self, raw)
        let v = try unlockedVault()
        switch action {
        case "create", "import":
            let info: SharedKeyInfo
            if action == "create" {
                info = try v.createKey(name: b.name)
            } else {
                guard let hex = b.hex else { throw AgentError(.invalidRequest, "give the key as 64 hex digits") }
                info = try v.importKey(name: b.name, key: try SharedKeyHex.parse(hex))
            }
            _ = importer.importQueued()  // received .lfs files that were waiting for this key
            return .json(info, status: 201)
        case "export":
            struct Out: Encodable { var name: String; var hex: String; var fingerprint: String }
            let key = try v.exportKey(name: b.name)
            return .json(Out(name: b.name, hex: SharedKeyHex.format(key), fingerprint: Vault.keyFingerprint(key)))
        case "delete": return .json(try v.deleteKey(name: b.name, force: b.force ?? false))
        default: throw AgentError(.notFound, "no such key action: \(action)")
        }
    }

    func changePeer(_ query: String, _ action: String) async throws -> PeerInfo {
        let choice = try PeerResolver.resolve(query, online: directory.online, known: try store.peers())
        let fp = choice.fingerprint.description
        switch action {
        case "forget":
            guard try store.forgetPeer(fp) else { throw AgentError(.notFound, "\(choice.name) is not a known peer") }
        default:
            // A peer seen online but never met (under policy `trusted` or `off` a stranger's own
            // handshake leaves no record): meet it now, pinned to the fingerprint it advertises.
            if try store.peer(fp) == nil, !choice.endpoints.isEmpty {
                let peer = try await handshakeAtAny(choice.endpoints, expected: choice.fingerprint)
                try store.sawPeer(fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil)
            }
            if try store.peer(fp) == nil {
                throw AgentError(.notFound, "\(choice.name) [\(choice.fingerprint.short)] has never completed a handshake with this node; exchange photos once (or compare fingerprints) before trusting it")
            }
            try store.setTrust(fp, action == "trust" ? .trusted : .known)
        }
        return try peerList().first { $0.fingerprint == fp }
            ?? PeerInfo(name: choice.name, fingerprint: fp, online: !choice.endpoints.isEmpty, trust: "new", addresses: [])
    }

    struct BundleOut: Encodable {
        var path: String
        var recipient: String
        var size: Int64
    }

    func writeBundle(_ b: some BundleRequest) throws -> BundleOut {
        let path = NodeHome.absolute(b.file)
        let item = try PreparedItem.prepare(path: path, maxSize: Int64(LocaphotoFile.maxFileSize / 2))
        let choice = try PeerResolver.resolve(b.peer, online: directory.online, known: try store.peers())
        guard let known = try store.peer(choice.fingerprint.description) else {
            throw AgentError(.notFound, "\(choice.name)'s key is not known yet: exchange photos once over the network first")
        }
        let recipient = try SigningPublicKey(bytes: [UInt8](known.publicKey))
        guard var data = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }), Int64(data.count) == item.size else {
            throw AgentError(.conflict, "\(path) changed while it was being read")
        }
        let sealer = try BundleSealer(photoID: item.id, sender: identity.signingKey, recipient: recipient)
        data.withUnsafeMutableBytes { sealer.encrypt($0) }
        let header = try sealer.finish(metadata: BundleMetadata(originalSize: item.size, format: item.kind.uppercased(), name: item.name))
        let out = NodeHome.absolute(b.output)
        guard !FileManager.default.fileExists(atPath: out) else { throw AgentError(.conflict, "\(out) already exists") }
        guard FileManager.default.createFile(atPath: out, contents: try LocaphotoFile.encode(header, encryptedData: data)) else {
            throw AgentError(.io, "cannot write \(out)")
        }
        return BundleOut(path: out, recipient: known.fingerprint, size: item.size)
    }

    func openBundle(at path: String) throws -> PhotoRecord {
        let v = try unlockedVault()
        var st = stat()
        guard stat(path, &st) == 0 else { throw AgentError(.notFound, "cannot read \(path)") }
        guard Int(st.st_size) <= LocaphotoFile.maxFileSize, let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.invalidRequest, "\(path) is larger than the \(LocaphotoFile.maxFileSize >> 20) MiB bundle limit")
        }
        let (header, payload) = try LocaphotoFile.decode(data)
        let opener = try BundleOpener(
            algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey, recipientPublicKey: header.recipient,
            recipient: identity.signingKey)
        var plain: [UInt8]
        if opener.isStreaming {
            plain = payload!
            plain.withUnsafeMutableBytes { opener.decrypt($0) }
            _ = try opener.finish(header: header)
        } else {
            _ = try opener.finish(header: header)
            plain = try AEAD.open(header.algorithm, key: opener.photoKey, nonce: header.iv, ciphertext: payload!, tag: header.authTag)
        }
        defer { secureZero(&plain) }
        let imp = try v.beginImport(name: header.metadata.name)
        do {
            try imp.write(plain)
            let senderFP = Fingerprint(publicKey: header.sender).description
            return try imp.finish(senderFingerprint: senderFP, senderName: try store.peer(senderFP)?.name)
        } catch {
            imp.abort()
            throw error
        }
    }
}

protocol BundleRequest {
    var file: String { get }
    var peer: String { get }
    var output: String { get }
}

/// Feeds an HTTP request body into a vault import.
final class StreamImport: ControlBodySink {
    let importer: PhotoImport

    init(_ importer: PhotoImport) {
        self.importer = importer
    }

    func write(_ bytes: ByteBuffer) throws {
        try bytes.withUnsafeReadableBytes { try importer.write($0) }
    }

    func finish() throws -> ControlResponse {
        .json(try importer.finish(), status: 201)
    }

    func abort() {
        importer.abort()
    }
}
