import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoLocalSend
import LocafotoNode
import LocafotoQuery
import LocafotoVault
import LocafotoWire
import Logging
import NIOCore
import Synchronization

/// Who sent a request: the address it came from, and the SHA-256 of the certificate it showed
/// in the TLS handshake (nil: it showed none).
package struct LocalSendCaller: Sendable {
    package var address: String
    package var certificate: String?

    package init(address: String, certificate: String?) {
        self.address = address
        self.certificate = certificate
    }
}

/// What a handler answers: a status and a JSON body.
package struct LocalSendAnswer: Sendable, Equatable {
    package var status: Int
    package var body: [UInt8]

    static func json(_ value: some Encodable, status: Int = 200) -> LocalSendAnswer {
        LocalSendAnswer(status: status, body: LocalSendJSON.encode(value))
    }

    /// A refusal: LocalSend's apps show the status; `message` says why to whoever reads it.
    static func refusal(_ status: Int, _ message: String) -> LocalSendAnswer {
        json(["message": message], status: status)
    }

    static let ok = LocalSendAnswer(status: 200, body: [])
}

/// Offers from LocalSend devices into this node's inbox, and their photos into its vault:
/// the protocol's state (`LocalSendInbound`) on one side, the inbox, the vault and the events
/// on the other. A photo arrives in clear over TLS and is encrypted into the vault as it
/// arrives (`PhotoImport`): nothing of it is written in clear.
package actor LocalSendReception {
    /// A LocalSend session the user accepted: its offer in the inbox and the item of each file.
    struct Accepted {
        var offer: String
        var items: [String: Int]
        var names: [String: String]
        var sender: String
        var fingerprint: String
        var failed = 0
        var lastActivity: ContinuousClock.Instant
        /// The sender's address: a cancel comes from it.
        var address: String
    }

    /// A session whose sender has neither uploaded nor cancelled for this long is over (the
    /// sender went away): found when the next offer comes, so no timer runs for it.
    static let stallTimeout: Duration = .seconds(120)
    /// A session whose last upload broke off (the sender's connection dropped) waits this long
    /// for the sender's cancel before it ends `failed`: an app that gives up drops its upload
    /// connection first, and its cancel comes a moment later on another.
    static let cancelGrace: Duration = .seconds(10)

    private var inbound: LocalSendInbound
    private var accepted: [String: Accepted] = [:]
    /// Sessions the sender cancelled (or that stalled): their running uploads stop at their
    /// next piece. Read by uploads outside this actor. One session runs at a time, so only the
    /// last few can still have uploads running; older ones are let go (`markCancelled`).
    private nonisolated let cancelled = Mutex<[String]>([])
    private let limits: LocalSendLimits
    /// What the port lets the LAN hold (`LocalSendChannel` reads them as it sets up connections).
    package nonisolated let portLimits: LocalSendPortLimits
    /// JSON bodies being read, over every connection.
    package nonisolated let bodies: BodyBudget
    /// Uploads running at once.
    nonisolated let uploadTurns: Turns
    private let store: AgentStore
    private let inbox: Inbox
    private let vaults: VaultHandle
    private let events: EventHub
    private let clock: any AgentClock
    private let logger: Logger

    package init(
        store: AgentStore, inbox: Inbox, vaults: VaultHandle, events: EventHub, clock: any AgentClock, logger: Logger,
        pin: String? = nil, limits: LocalSendLimits = LocalSendLimits(),
        portLimits: LocalSendPortLimits = LocalSendPortLimits()
    ) {
        self.portLimits = portLimits
        bodies = BodyBudget(limit: portLimits.bodyBudgetBytes)
        uploadTurns = Turns(limit: portLimits.parallelUploads)
        self.store = store
        self.inbox = inbox
        self.vaults = vaults
        self.events = events
        self.clock = clock
        self.logger = logger
        self.limits = limits
        inbound = LocalSendInbound(pin: pin)
    }

    package var maxBodyBytes: Int { limits.maxBodyBytes }

    /// The PIN senders must give from now on (nil: none).
    package func setPIN(_ pin: String?) { inbound.pin = pin }

    // MARK: prepare-upload

    /// `POST /api/localsend/v2/prepare-upload`: checked, put in the inbox, and answered once
    /// the user (or the trust they gave the device) decided.
    /// `senderGone` returns when the sender's connection is gone: an offer still waiting for
    /// the user then leaves the inbox (the sender gave up; the next device may send).
    package func prepare(
        _ body: [UInt8], from caller: LocalSendCaller, pin: String?,
        senderGone: @escaping @Sendable () async -> Void = { await Waiters().wait { false } }
    ) async -> LocalSendAnswer {
        await endStalledSession()
        let request: LocalSendPrepareUpload
        do {
            request = try LocalSendJSON.prepareUpload(body, limits: limits)
        } catch let e as LocalSendError {
            return .refusal(e.code == .tooLarge ? 413 : 400, e.message)
        } catch {
            return .refusal(400, "the request is not the JSON expected")
        }
        let sender: Sender
        switch identify(request.info, caller) {
        case .refused(let answer): return answer
        case .sender(let s): sender = s
        }
        let sessionID = Self.randomID()
        do {
            _ = try inbound.prepare(request, from: caller.address, pin: pin, sessionID: sessionID, now: clock.now)
        } catch {
            // Each guess compared is noted (the PIN's budget allows a few a minute): an attack on
            // the PIN shows in the log, and so does why senders are being told to wait.
            if error.status == 401, pin != nil {
                logger.notice("LocalSend: a wrong PIN from \(caller.address) ('\(sender.name)')")
            }
            return .refusal(error.status, error.message)
        }
        let files = request.orderedFiles
        let items = files.map { f in
            Inbox.ForeignOffer.Item(
                id: f.id, name: f.fileName, kind: f.claimedPhotoType?.rawValue ?? f.fileType, size: f.size,
                refusal: Self.refusal(of: f))
        }
        let wanted = Set(files.filter { Self.refusal(of: $0) == nil }.map(\.id))
        guard !wanted.isEmpty else {
            _ = try? inbound.decide(sessionID, accepted: false, wanted: [], token: Self.randomID)
            return .refusal(403, "none of these files is a photo; this node takes photos only")
        }
        let offer = Inbox.ForeignOffer(
            id: sessionID, senderFingerprint: sender.inboxFingerprint, senderName: sender.name, items: items)
        let verdict: Inbox.Verdict
        do {
            verdict = try await inbox.registerForeign(offer, trusted: sender.trusted)
            // In the inbox, past the PIN, the policy and the photo checks: only now is the
            // device kept (its alias then is its own on this node).
            switch verdict {
            case .accept, .pending: record(sender, request.info, caller)
            case .refuse, .resume, .decided: break
            }
        } catch {
            logger.error("LocalSend offer from \(sender.name) could not be stored: \(error)")
            _ = try? inbound.decide(sessionID, accepted: false, wanted: [], token: Self.randomID)
            return .refusal(500, "this node could not take the offer")
        }
        let decision: DecisionKind?
        switch verdict {
        case .refuse(let code, let message):
            _ = try? inbound.decide(sessionID, accepted: false, wanted: [], token: Self.randomID)
            return .refusal(code == .rateLimited ? 429 : 403, message)
        case .accept:
            announceArrival(offer, from: sender, state: "accepted")
            decision = .accepted
        case .pending:
            announceArrival(offer, from: sender, state: "pending")
            logger.info(
                "LocalSend offer \(sessionID.prefix(8)) from \(sender.name) (\(files.count) file(s)) waits for a decision"
            )
            switch await waitForDecision(sessionID, senderGone: senderGone) {
            case .decided(let d): decision = d
            case .senderGone:
                await withdrawWaiting(sessionID, message: "\(sender.name) stopped waiting for an answer")
                return .refusal(408, "the sender stopped waiting")
            }
        case .resume, .decided:
            decision = .rejected  // a fresh id never has an earlier decision
        }
        guard decision == .accepted else {
            _ = try? inbound.decide(sessionID, accepted: false, wanted: [], token: Self.randomID)
            try? await inbox.foreignOfferEnded(
                sessionID, decision == .expired ? .expired : .rejected, message: nil)
            announceEnd(sessionID)
            return .refusal(403, decision == .expired ? "the offer expired before it was accepted" : "rejected")
        }
        do {
            switch try inbound.decide(sessionID, accepted: true, wanted: wanted, token: Self.randomID) {
            case .accepted(let answer):
                accepted[sessionID] = Accepted(
                    offer: sessionID, items: Dictionary(uniqueKeysWithValues: files.enumerated().map { ($1.id, $0) }),
                    names: Dictionary(uniqueKeysWithValues: files.map { ($0.id, $0.fileName) }), sender: sender.name,
                    fingerprint: sender.inboxFingerprint, lastActivity: clock.now, address: caller.address)
                return .json(answer)
            case .nothingWanted, .rejected:
                return .refusal(403, "rejected")
            }
        } catch {
            // The sender cancelled while the offer waited.
            return .refusal(error.status, error.message)
        }
    }

    /// Why this node does not take a file, before any byte of it: not a photo by its type or
    /// name, or empty; nil when it is wanted.
    static func refusal(of f: LocalSendFile) -> String? {
        guard f.claimedPhotoType != nil else { return "not a photo (\(f.fileType)); this node takes photos only" }
        guard f.size > 0 else { return "an empty file is not a photo" }
        return nil
    }

    enum Waited: Sendable {
        case decided(DecisionKind?)
        case senderGone
    }

    /// Waits for the user's decision, expiring the offer when its time is up, or until the
    /// sender's connection is gone.
    private func waitForDecision(_ id: String, senderGone: @escaping @Sendable () async -> Void) async -> Waited {
        let inbox = self.inbox
        let clock = self.clock
        return await withTaskGroup(of: Waited?.self) { group in
            group.addTask { .decided(try? await inbox.waitForDecision(id)) }
            group.addTask {
                while (try? await clock.sleep(for: .seconds(15))) != nil {
                    if (try? await inbox.expireIfDue(id)) == true { return .decided(.expired) }
                }
                return nil
            }
            group.addTask {
                await senderGone()
                return Task.isCancelled ? nil : .senderGone
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let waited = next { return waited }
            }
            return .decided(nil)
        }
    }

    // MARK: upload

    /// `POST /api/localsend/v2/upload`: one file's bytes, encrypted into the vault as they come.
    package func upload(
        sessionID: String?, fileID: String?, token: String?, from caller: LocalSendCaller,
        body: sending some AsyncSequence<ByteBuffer, any Error>
    ) async -> LocalSendAnswer {
        let file: LocalSendFile
        do {
            file = try inbound.beginUpload(sessionID: sessionID, fileID: fileID, token: token, from: caller.address)
        } catch {
            return .refusal(error.status, error.message)
        }
        // A turn among the uploads running at once; until then its body is not read.
        guard await uploadTurns.take() else {
            inbound.endUpload(file.id, received: false)
            return .refusal(409, "the upload was stopped")
        }
        defer { uploadTurns.give() }
        guard let sessionID, var session = accepted[sessionID], let idx = session.items[file.id] else {
            inbound.endUpload(file.id, received: false)
            return .refusal(409, "the session is over")
        }
        session.lastActivity = clock.now
        accepted[sessionID] = session
        try? await inbox.foreignItemStarted(session.offer, idx)
        let outcome = await receive(
            file, body: body, session: sessionID, sender: (session.sender, session.fingerprint))
        let answer: LocalSendAnswer
        switch outcome {
        case .imported(let photo, let note):
            try? await inbox.foreignItemEnded(session.offer, idx, imported: true, photo: photo, note: note)
            announceItem(session, idx, name: file.fileName, state: note == nil ? "imported" : "duplicate", photo: photo)
            answer = .ok
        case .failed(let status, let message), .brokeOff(let status, let message):
            accepted[sessionID]?.failed += 1
            try? await inbox.foreignItemEnded(session.offer, idx, imported: false, photo: nil, note: message)
            announceItem(session, idx, name: file.fileName, state: "failed", message: message)
            logger.notice("LocalSend file \(file.fileName) from \(session.sender) failed: \(message)")
            answer = .refusal(status, message)
        }
        if inbox.isStopRequested(sessionID) {
            // The user stopped the running receive (`reject`): what arrived stays, the rest ends.
            markCancelled(sessionID)
            _ = try? inbound.cancel(sessionID: sessionID, from: caller.address)
            accepted[sessionID] = nil
            try? await inbox.foreignOfferEnded(sessionID, .cancelled, message: "stopped by you")
            announceEnd(sessionID)
        } else if inbound.endUpload(file.id, received: answer.status == 200) {
            if case .brokeOff = outcome {
                // Its cancel may be on its way: the session ends as the sender meant it.
                try? await clock.sleep(for: Self.cancelGrace)
            }
            await finish(sessionID)
        } else {
            accepted[sessionID]?.lastActivity = clock.now
        }
        return answer
    }

    enum Outcome {
        /// In the vault as `photo`; `note` when it already was (nothing stored again).
        case imported(String?, note: String?)
        case failed(Int, String)
        /// The body ended before its bytes did: the sender's connection dropped.
        case brokeOff(Int, String)
    }

    /// Off this actor: the photo's bytes are encrypted into the vault as they come, and several
    /// uploads run at once (as the apps send them).
    private nonisolated func receive(
        _ file: LocalSendFile, body: sending some AsyncSequence<ByteBuffer, any Error>, session: String,
        sender: (name: String, fingerprint: String)
    ) async -> Outcome {
        let vault: Vault
        do {
            vault = try vaults.unlocked()
        } catch {
            return .failed(503, "the vault of this node is locked; its owner must unlock it, then send again")
        }
        let importer: PhotoImport
        do {
            importer = try vault.beginImport(name: file.name, maxSize: file.size, checkHeader: true)
        } catch {
            return .failed(500, "this node could not start storing the photo")
        }
        var sha = SHA256()
        var received: Int64 = 0
        do {
            for try await piece in body {
                if cancelled.withLock({ $0.contains(session) }) || inbox.isStopRequested(session) {
                    importer.abort()
                    return .failed(409, "the transfer was cancelled")
                }
                received += Int64(piece.readableBytes)
                guard received <= file.size else {
                    importer.abort()
                    return .failed(400, "more than the \(file.size) bytes announced for \(file.fileName)")
                }
                // The piece as it came off the connection: hashed and encrypted without a copy.
                try piece.withUnsafeReadableBytes { bytes in
                    sha.update(bytes)
                    try importer.write(bytes)
                }
            }
        } catch let e as VaultError where e.code == .unsupportedContent {
            importer.abort()
            return .failed(415, "\(file.fileName) is not a photo this node takes: \(e.message)")
        } catch let e as VaultError {
            importer.abort()
            return .failed(500, "this node could not store \(file.fileName): \(e.message)")
        } catch {
            importer.abort()
            return .brokeOff(400, "the upload of \(file.fileName) broke off after \(received) bytes")
        }
        guard received == file.size else {
            importer.abort()
            return .failed(400, "\(file.fileName) ended after \(received) of \(file.size) bytes")
        }
        if let expected = file.sha256, Hex.encode(sha.finalize()) != expected.lowercased() {
            importer.abort()
            // What LocalSend's apps answer to a hash that does not match (not in the protocol's text).
            return .failed(422, "\(file.fileName) does not match its SHA-256")
        }
        do {
            let record = try importer.finish(
                senderFingerprint: sender.fingerprint, senderName: sender.name, skipDuplicates: true)
            if let folder = file.folder { putInAlbum(record.id, folder: folder, vault: vault) }
            return .imported(record.id, note: nil)
        } catch let e as VaultError where e.code == .duplicate {
            return .imported(nil, note: e.message)
        } catch let e as VaultError where e.code == .unsupportedContent {
            return .failed(415, "\(file.fileName) is not a photo this node takes: \(e.message)")
        } catch {
            return .failed(500, "this node could not store \(file.fileName)")
        }
    }

    /// A folder's photo goes into the album of that folder's name, made when missing (a shared
    /// folder is a set the sender meant together). A name the vault cannot take as an album, or a
    /// private album of that name, leaves the photo where any photo lands.
    private nonisolated func putInAlbum(_ photo: String, folder: String, vault: Vault) {
        let album = String(folder.prefix(Vault.maxAlbumNameLength))
        do {
            if (try? vault.album(album)) == nil { try vault.createAlbum(named: album) }
            try vault.addPhotos([photo], toAlbum: album)
        } catch {
            logger.notice("LocalSend photo \(photo.prefix(8)) stays out of the album '\(album)': \(error)")
        }
    }

    // MARK: cancel and end

    /// `POST /api/localsend/v2/cancel`: the sender stops; what already arrived stays.
    package func cancel(sessionID: String?, from caller: LocalSendCaller) async -> LocalSendAnswer {
        if let sessionID, inbound.session?.id != sessionID, let s = accepted[sessionID], s.address == caller.address {
            // Its last upload broke off a moment ago (`cancelGrace`): cancelled, as it meant.
            accepted[sessionID] = nil
            try? await inbox.foreignOfferEnded(sessionID, .cancelled, message: "cancelled by \(s.sender)")
            announceEnd(sessionID)
            return .ok
        }
        do {
            _ = try inbound.cancel(sessionID: sessionID, from: caller.address)
        } catch {
            return .refusal(error.status, error.message)
        }
        guard let sessionID else { return .ok }
        if let s = accepted[sessionID] {
            markCancelled(sessionID)
            try? await inbox.foreignOfferEnded(sessionID, .cancelled, message: "cancelled by \(s.sender)")
            announceEnd(sessionID)
            accepted[sessionID] = nil
        } else {
            await withdrawWaiting(sessionID, message: "cancelled by the sender")
        }
        return .ok
    }

    /// An offer still waiting for the user leaves the inbox (cancelled by its sender).
    private func withdrawWaiting(_ sessionID: String, message: String) async {
        if inbound.session?.id == sessionID, inbound.session?.decided == false {
            _ = try? inbound.decide(sessionID, accepted: false, wanted: [], token: Self.randomID)
        }
        _ = try? await inbox.withdraw(sessionID, by: "", current: sessionID, message: message)
        await inbox.sessionEnded(sessionID)
        announceEnd(sessionID)
        logger.info("LocalSend offer \(sessionID.prefix(8)) withdrawn: \(message)")
    }

    private nonisolated func markCancelled(_ id: String) {
        cancelled.withLock { ids in
            ids.append(id)
            if ids.count > 16 { ids.removeFirst(ids.count - 16) }
        }
    }

    private func finish(_ sessionID: String) async {
        guard let s = accepted.removeValue(forKey: sessionID) else { return }
        let state: OfferRecord.State = s.failed == 0 ? .completed : .failed
        try? await inbox.foreignOfferEnded(
            sessionID, state, message: s.failed == 0 ? nil : "\(s.failed) file(s) did not arrive")
        announceEnd(sessionID)
        logger.info("LocalSend offer \(sessionID.prefix(8)) from \(s.sender): \(state.rawValue)")
    }

    /// Ends an accepted session whose sender went quiet (`stallTimeout`), so that the next
    /// sender is not refused as busy forever.
    private func endStalledSession() async {
        guard let s = inbound.session, let a = accepted[s.id], clock.now - a.lastActivity >= Self.stallTimeout else {
            return
        }
        _ = try? inbound.cancel(sessionID: s.id, from: s.sender)
        markCancelled(s.id)
        accepted[s.id] = nil
        try? await inbox.foreignOfferEnded(s.id, .failed, message: "the sender stopped sending")
        announceEnd(s.id)
    }

    // MARK: who sends

    struct Sender {
        var name: String
        var inboxFingerprint: String
        var trusted: Bool
        /// The certificate it showed (nil: none; it cannot be recorded, nor trusted).
        var certificate: String?
    }

    enum Identified {
        case sender(Sender)
        case refused(LocalSendAnswer)
    }

    /// The sender as this node knows it: by the certificate it showed (which must be the one it
    /// names), else only by the fingerprint it claims, which nobody can then trust. A name known
    /// with another certificate is refused: another device may be using it. Nothing is written
    /// here: a request that fails a later check (the PIN, the policy, no photo) leaves no row.
    func identify(_ info: LocalSendDevice, _ caller: LocalSendCaller) -> Identified {
        guard let certificate = caller.certificate else {
            let claimed = "unverified:" + String(info.fingerprint.prefix(64))
            return .sender(Sender(name: info.alias, inboxFingerprint: "localsend:" + claimed, trusted: false))
        }
        guard info.fingerprint.uppercased() == certificate else {
            logger.warning(
                "LocalSend device '\(info.alias)' at \(caller.address) names fingerprint \(info.fingerprint.prefix(16))… but showed certificate \(certificate.prefix(16))…; refused"
            )
            return .refused(.refusal(403, "the certificate shown is not the one the request names"))
        }
        do {
            if let other = try store.localSendPeers(alias: info.alias, other: certificate).first {
                logger.warning(
                    "LocalSend device '\(info.alias)' at \(caller.address) came with certificate \(certificate.prefix(16))…, not the \(other.fingerprint.prefix(16))… this node knows under that name; refused. If the device was reinstalled, `locafoto localsend forget \(other.fingerprint.prefix(16))` lets it in again"
                )
                return .refused(
                    .refusal(
                        403,
                        "this node knows another device named '\(info.alias)'; its owner must forget that one before this one can send"
                    ))
            }
            let known = try store.localSendPeer(certificate)
            return .sender(
                Sender(
                    name: info.alias, inboxFingerprint: LocalSendPeerRecord.inboxFingerprint(certificate),
                    trusted: known?.trust == .trusted, certificate: certificate))
        } catch {
            logger.error("could not read the LocalSend devices this node knows: \(error)")
            return .refused(.refusal(500, "this node could not take the request"))
        }
    }

    /// Keeps the device of an offer that reached the inbox (seen now, at this address).
    private func record(_ sender: Sender, _ info: LocalSendDevice, _ caller: LocalSendCaller) {
        guard let certificate = sender.certificate else { return }
        do {
            try store.recordLocalSendPeer(
                fingerprint: certificate, alias: info.alias, deviceModel: info.deviceModel,
                deviceType: info.deviceType?.rawValue, address: caller.address, port: info.port, now: clock.date)
        } catch {
            logger.error("could not record LocalSend device '\(info.alias)': \(error)")
        }
    }

    // MARK: events

    private func announceArrival(_ offer: Inbox.ForeignOffer, from sender: Sender, state: String) {
        events.publish(
            .offerReceived(
                .init(
                    offer: offer.id, peer: EventPeer(name: sender.name, fingerprint: sender.inboxFingerprint),
                    items: offer.items.count, totalBytes: offer.items.reduce(0) { $0 + $1.size }, state: state,
                    firstItem: offer.items.first?.name, message: "from a LocalSend device, not verified")))
    }

    private func announceItem(
        _ s: Accepted, _ idx: Int, name: String, state: String, photo: String? = nil, message: String? = nil
    ) {
        events.publish(
            .itemImported(offer: s.offer, item: idx, name: name, state: state, photo: photo, message: message))
    }

    private func announceEnd(_ id: String) {
        events.forget(id)
        Inbox.announceFinished(id, store: store, events: events)
    }

    static func randomID() -> String { Hex.encode(SecureRandom.bytes(16)) }
}
