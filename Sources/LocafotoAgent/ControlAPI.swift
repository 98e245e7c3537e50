import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoPeers
import LocafotoRelay
import LocafotoSending
import LocafotoVault
import LocafotoWire
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// The control API (protocol/control-api.md): what the CLI and scripts may ask of the agent.
extension Agent {
    var status: NodeStatus {
        var s = NodeStatus(
            name: displayName, fingerprint: identity.fingerprint.description, port: listeningPort.withLock { $0 },
            vault: vaultState, discovery: discoveryStatus.withLock { $0 },
            policy: (try? store.setting("policy")) ?? ReceivePolicy.everyone.rawValue,
            home: configuration.home.directory,
            pendingOffers: (try? store.offers(states: [.pending]).count) ?? 0, version: WireProtocol.version,
            role: isRelay ? "relay" : "node", relays: configuration.relays.map(\.description), web: web?.baseURL)
        s.identity = identityProtection.rawValue
        if !isRelay {
            s.autoLockSeconds = configuration.autoLock.map { Int($0.components.seconds) }
            s.lockOnSleep = configuration.lockOnSleep
        }
        // `vaults.unlocked()`, not `unlockedVault()`: asking for the status is not a use of the
        // vault (a tray icon polling it must not hold off --auto-lock).
        if let totals = try? vaults.unlocked().totals() {
            s.photoCount = totals.photoCount
            s.originalBytes = totals.originalBytes
            s.encryptedBytes = totals.encryptedBytes
        }
        return s
    }

    var idInfo: NodeID {
        NodeID(
            name: displayName, fingerprint: identity.fingerprint.description,
            publicKey: Data(identity.publicKey.bytes).base64EncodedString())
    }

    func peerList() throws -> [PeerSummary] {
        let known = try store.peers()
        let knownByFP = Dictionary(known.map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        var out = [PeerSummary]()
        var seen = Set<String>()
        for p in directory.online {
            let fp = p.fingerprint.description
            seen.insert(fp)
            let k = knownByFP[fp]
            var warning: String?
            if k == nil, let other = known.first(where: { $0.name.caseInsensitiveCompare(p.name) == .orderedSame }) {
                warning = "the name '\(p.name)' belongs to known peer \(other.fingerprint); this one has another key"
            }
            out.append(
                PeerSummary(
                    name: p.name, fingerprint: fp, online: true, trust: k?.listedTrust ?? "new",
                    addresses: p.endpoints.map {
                        $0.family == "ipv6" ? "[\($0.address)]:\($0.port)" : "\($0.address):\($0.port)"
                    },
                    lastSeenAt: p.lastSeen, warning: warning))
        }
        for k in known where !seen.contains(k.fingerprint) {
            out.append(
                PeerSummary(
                    name: k.name, fingerprint: k.fingerprint, online: false, trust: k.listedTrust,
                    addresses: k.lastAddress.map { [$0] } ?? [], lastSeenAt: k.lastSeen))
        }
        return out
    }

    /// Late previews that may still come for a pending offer; nil when none.
    private func pendingPreviews(_ id: String) -> Int? {
        let n = inbox.latePreviewsOutstanding(id)
        return n > 0 ? n : nil
    }

    func inboxList(all: Bool, page: ListPage = ListPage(), itemLimit: Int? = nil) async throws -> [InboxOffer] {
        _ = try store.expireOffers(now: clock.date)
        receiver.expireInterrupted()
        // Besides undecided offers, the inbox shows those still arriving (accepted, not yet
        // ended), interrupted transfers and offers with items still waiting for a key.
        let offers = try store.offers().filter { o in
            all || o.state == .pending || o.state == .accepted || o.state == .interrupted
                || ((try? store.items(of: o.id))?.contains { $0.status == .needsKey } ?? false)
        }
        var out = [InboxOffer]()
        // An imported item's name is read from the vault (the inbox no longer keeps it), when
        // the vault is open; listing is not a use that keeps it from auto-locking.
        let vault = try? vaults.unlocked()
        func name(_ item: OfferItemRecord) -> String {
            guard item.name.isEmpty, item.status == .imported, let vault, let id = item.photoId else {
                return item.name
            }
            return (try? vault.photo(matching: id).name) ?? ""
        }
        for o in page.apply(offers) {
            let trusted = try store.peer(o.senderFingerprint)?.trust == .trusted
            let stored = try store.items(of: o.id)
            let previews = try store.previewIndices(o.id)
            let items = stored.prefix(itemLimit ?? stored.count).map {
                InboxOffer.Item(
                    name: name($0), kind: $0.kind, bytes: $0.size, status: $0.status.rawValue, photo: $0.photoId,
                    error: $0.errorMessage,
                    preview: previews.contains($0.idx))
            }
            out.append(
                InboxOffer(
                    id: o.id, sender: .init(name: o.senderName, fingerprint: o.senderFingerprint, trusted: trusted),
                    via: o.viaFingerprint.map { fp in
                        .init(
                            name: o.viaName ?? "", fingerprint: fp, trusted: (try? store.peer(fp))??.trust == .trusted)
                    },
                    state: o.state.rawValue,
                    items: Array(items), itemCount: stored.count, previewCount: previews.count,
                    previewsPending: o.state == .pending ? pendingPreviews(o.id) : nil, totalBytes: o.totalBytes,
                    receivedAt: o.receivedAt, expiresAt: o.expiresAt,
                    connected: await inbox.isLive(o.id), message: o.message))
        }
        return out
    }

    /// An offered item's preview, opened in memory with the node key (it is kept sealed): JPEG
    /// bytes. `noPreview` (404) when the item has none; `notFound` for an unknown offer or item.
    func inboxPreview(_ idPrefix: String, _ index: String) async throws -> ControlResponse {
        let o = try await inbox.find(idPrefix)
        // Messages count items as people do (from 1); the index in the path counts from 0.
        guard let i = Int(index), i >= 0, i < o.itemCount else {
            let which = Int(index).map { "no photo \($0 + 1)" } ?? "no photo '\(index)'"
            throw AgentError(.notFound, "offer \(o.id.prefix(8)) has \(which): it has \(o.itemCount), counted from 1")
        }
        guard let sealed = try store.preview(o.id, i) else {
            throw AgentError(.noPreview, "photo \(i + 1) of offer \(o.id.prefix(8)) came without a preview")
        }
        let jpeg = try SealedBox.open(sealed, with: identity.agreementKey, maxPlaintext: PreviewImage.maxBytes)
        var response = ControlResponse(status: 200, body: jpeg.withUnsafeBytes { Data($0) })
        response.contentType = "image/jpeg"
        return response
    }

    /// Named shared keys (`.lfs`): create, import (hex), export (hex), delete.
    func keyAction(_ action: String, _ body: [UInt8]) throws -> ControlResponse {
        var raw = body
        defer { secureZero(&raw) }
        let b = try decodeBody(KeyRequest.self, raw)
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
            let key = try v.exportKey(name: b.name)
            return .json(KeyExport(name: b.name, hex: SharedKeyHex.format(key), fingerprint: Vault.keyFingerprint(key)))
        case "delete": return .json(try v.deleteKey(name: b.name, force: b.force ?? false))
        default: throw AgentError(.notFound, "no such key action: \(action)")
        }
    }

    func changePeer(_ query: String, _ action: String) async throws -> PeerSummary {
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
                try store.sawPeer(
                    fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: nil)
            }
            if try store.peer(fp) == nil {
                throw AgentError(
                    .notFound,
                    "\(choice.name) [\(choice.fingerprint.short)] has never completed a handshake with this node; exchange photos once (or compare fingerprints) before trusting it"
                )
            }
            try store.setTrust(fp, action == "trust" ? .trusted : .known)
        }
        return try peerList().first { $0.fingerprint == fp }
            ?? PeerSummary(
                name: choice.name, fingerprint: fp, online: !choice.endpoints.isEmpty, trust: "new", addresses: [])
    }

    func writeBundle(_ b: BundleWriteRequest) throws -> BundleWritten {
        guard (b.file == nil) != (b.photo == nil) else {
            throw AgentError(.invalidRequest, "give either file (a photo file) or photo (a vault photo's id)")
        }
        let choice = try PeerResolver.resolve(b.peer, online: directory.online, known: try store.peers())
        guard let known = try store.peer(choice.fingerprint.description) else {
            throw AgentError(
                .notFound, "\(choice.name)'s key is not known yet: exchange photos once over the network first")
        }
        let recipient = try SigningPublicKey(bytes: [UInt8](known.publicKey))
        let maxSize = Int64(LocaphotoFile.maxFileSize / 2)
        var data: [UInt8]
        let kind: String, name: String?
        if let photo = b.photo {
            // Decrypted in memory only, and sealed again for the recipient.
            let v = try unlockedVault()
            let record = try v.photo(matching: photo)
            guard record.originalSize <= maxSize else {
                throw AgentError(
                    .invalidRequest,
                    "photo \(record.id.prefix(8)) is larger than the \(maxSize >> 20) MiB a bundle can carry; send it instead"
                )
            }
            data = try v.exportData(record.id, maxSize: maxSize)
            (kind, name) = (record.format, Vault.exportFileName(for: record))
        } else {
            let path = NodeHome.absolute(b.file!)
            let item = try PreparedItem.prepare(path: path, maxSize: maxSize)
            guard let d = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }), Int64(d.count) == item.size
            else {
                throw AgentError(.conflict, "\(path) changed while it was being read")
            }
            data = d
            (kind, name) = (item.kind, item.name)
        }
        defer { secureZero(&data) }
        let out = NodeHome.absolute(b.output)
        guard !FileManager.default.fileExists(atPath: out) else { throw AgentError(.conflict, "\(out) already exists") }
        let metadata = Self.bundleMetadata(of: data, kind: kind, name: name)
        let sealer = try BundleSealer(
            photoID: UUID().uuidString.lowercased(), sender: identity.signingKey, recipient: recipient)
        data.withUnsafeMutableBytes { sealer.encrypt($0) }
        let header = try sealer.finish(metadata: metadata)
        guard
            FileManager.default.createFile(atPath: out, contents: try LocaphotoFile.encode(header, encryptedData: data))
        else {
            throw AgentError(.io, "cannot write \(out)")
        }
        return BundleWritten(
            path: out, recipient: PeerRef(name: known.name, fingerprint: known.fingerprint), bytes: Int64(data.count))
    }

    /// A bundle's metadata: size, format and name, with the capture date and the displayed size
    /// read from the photo's header and EXIF (libvips, no pixels decoded). A photo libvips cannot
    /// read, or one without EXIF, leaves them out (they are optional in formats.md).
    static func bundleMetadata(of bytes: [UInt8], kind: String, name: String?) -> BundleMetadata {
        var m = BundleMetadata(originalSize: Int64(bytes.count), format: kind.uppercased(), name: name)
        guard let type = ContentType(rawValue: kind),
            let facts = try? bytes.withUnsafeBytes({ try Media.metadata(of: $0, type: type) })
        else { return m }
        let limit = 1...1_000_000  // formats.md: width/height 1…1,000,000
        if let w = facts.width, let h = facts.height, limit.contains(w), limit.contains(h) {
            m.width = w
            m.height = h
        }
        if let d = facts.captureDate {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime]
            f.timeZone = TimeZone(identifier: "UTC")
            m.captureDate = f.string(from: d)
        }
        return m
    }

    func openBundle(at path: String) throws -> PhotoRecord {
        let v = try unlockedVault()
        var st = stat()
        guard stat(path, &st) == 0 else { throw AgentError(.notFound, "cannot read \(path)") }
        guard Int(st.st_size) <= LocaphotoFile.maxFileSize, let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(
                .invalidRequest, "\(path) is larger than the \(LocaphotoFile.maxFileSize >> 20) MiB bundle limit")
        }
        let header: BundleHeader, payload: [UInt8]?
        do {
            (header, payload) = try LocaphotoFile.decode(data)
        } catch let e as FormatError where e.code == .unsupportedVersion {
            throw AgentError(.unsupported, e.message)  // refused for its content: exit status 65
        }
        let opener = try BundleOpener(
            algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
            recipientPublicKey: header.recipient,
            recipient: identity.signingKey)
        var plain: [UInt8]
        if opener.isStreaming {
            plain = payload!
            plain.withUnsafeMutableBytes { opener.decrypt($0) }
            _ = try opener.finish(header: header)
        } else {
            _ = try opener.finish(header: header)
            plain = try AEAD.open(
                header.algorithm, key: opener.photoKey, nonce: header.iv, ciphertext: payload!, tag: header.authTag)
        }
        defer { secureZero(&plain) }
        let imp = try v.beginImport(name: header.metadata.name)
        do {
            // Opening a bundle is a local import: the classify hook decides, as for files.
            imp.gate = try classifyHook?.start()
            try imp.write(plain)
            let senderFP = Fingerprint(publicKey: header.sender).description
            return try imp.finish(senderFingerprint: senderFP, senderName: try store.peer(senderFP)?.name)
        } catch {
            imp.abort()
            throw error
        }
    }
}

/// Where a streamed request body goes, piece by piece (`Table.streamingPost`).
protocol BodySink {
    func write(_ bytes: ByteBuffer) throws
    func finish() throws -> ControlResponse
    func abort()
}

/// Feeds an HTTP request body into a vault import.
final class StreamImport: BodySink {
    let importer: PhotoImport
    let activity: VaultActivity

    init(_ importer: PhotoImport, activity: VaultActivity) {
        self.importer = importer
        self.activity = activity
    }

    func write(_ bytes: ByteBuffer) throws {
        // A photo streamed in for a long time (a slow pipe) is use: no auto-lock under it.
        activity.touch()
        try bytes.withUnsafeReadableBytes { try importer.write($0) }
    }

    func finish() throws -> ControlResponse {
        .json(try importer.finish(), status: 201)
    }

    func abort() {
        importer.abort()
    }
}
