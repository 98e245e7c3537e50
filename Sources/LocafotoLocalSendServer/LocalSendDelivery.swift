import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoLocalSend
import LocafotoNode
import LocafotoTransfers
import LocafotoWire
import Logging
import NIOCore
import Synchronization

/// Sends photos to LocalSend devices (`locafoto send PHONE …`, the web app's send), while
/// LocalSend is on: finds the device (`LocalSendTargets`), then runs `LocalSendOutbound` over
/// `LocalSendClient` — prepare-upload (with the PIN when one is given), uploads two at a time,
/// cancel — and shows it all on the transfer as for any peer. Photos from the vault are sent
/// from memory; files are read as they are sent.
package struct LocalSendDelivery: ForeignSending {
    /// The node as LocalSend devices see it, with its certificate; read when a send starts.
    package typealias Own = @Sendable () throws -> (device: LocalSendDevice, certificate: TLSCertificate)

    let switchboard: LocalSendSwitch
    let store: AgentStore
    let group: any EventLoopGroup
    let clock: any AgentClock
    let logger: Logger
    let own: Own
    /// How long a device may take to answer an upload once it has all its bytes (it writes or
    /// imports the file first), and a cancel.
    static let uploadAnswerTimeout: TimeAmount = .seconds(120)
    static let cancelAnswerTimeout: TimeAmount = .seconds(5)
    /// A file is read and sent in pieces this large.
    static let pieceBytes = 64 << 10

    package init(
        switchboard: LocalSendSwitch, store: AgentStore, group: any EventLoopGroup, clock: any AgentClock,
        logger: Logger, own: @escaping Own
    ) {
        self.switchboard = switchboard
        self.store = store
        self.group = group
        self.clock = clock
        self.logger = logger
        self.own = own
    }

    package func claims(_ query: String) -> Bool {
        query.lowercased().hasPrefix(LocalSendTargets.prefix)
    }

    package func route(_ query: String) throws -> ForeignRoute? {
        let state = switchboard.current
        guard state.on, state.listeningPort != nil else {
            guard claims(query) else { return nil }
            throw AgentError(
                .peerUnavailable,
                "LocalSend is off on this node; turn it on with `locafoto localsend on` to send to LocalSend devices")
        }
        let known = try store.localSendPeers().map {
            LocalSendTargets.Known(
                fingerprint: $0.fingerprint, alias: $0.alias, address: $0.lastAddress, port: $0.lastPort)
        }
        let name = query.trimmingCharacters(in: .whitespaces)
        switch LocalSendTargets.resolve(query, nearby: state.nearby, known: known) {
        case .target(let target):
            return ForeignRoute(
                name: target.alias, fingerprint: target.fingerprint.map(LocalSendPeerRecord.inboxFingerprint)
            ) { transfer, items, pin in
                try await send(transfer, items: items, to: target, pin: pin)
            }
        case .none:
            guard claims(query) else { return nil }
            throw AgentError(
                .notFound,
                "no LocalSend device named '\(name.dropFirst(LocalSendTargets.prefix.count))' has been heard; `locafoto localsend status` lists those nearby, or name one by address: localsend:192.168.1.20"
            )
        case .ambiguous(let all):
            let list = all.map { "  \($0.alias)  \($0.fingerprint)" }.joined(separator: "\n")
            throw AgentError(
                .ambiguous, "'\(name)' matches several LocalSend devices; name one by fingerprint:\n\(list)")
        case .certificateChanged(let alias, let was, let now):
            throw Self.certificateChanged(alias: alias, was: was, now: now)
        case .plainHTTP(let alias):
            throw AgentError(
                .insecure,
                "\(alias) has encryption turned off in LocalSend (plain HTTP); Locafoto sends to LocalSend devices only over HTTPS: turn Encryption on in its LocalSend settings"
            )
        }
    }

    package func notFound(_ query: String) -> String? {
        let state = switchboard.current
        guard state.on, state.listeningPort != nil else { return nil }
        return
            "no peer or LocalSend device named '\(query.trimmingCharacters(in: .whitespaces))' is visible; `locafoto peers` lists the peers on the network, `locafoto localsend` the LocalSend devices heard and met"
    }

    static func certificateChanged(alias: String, was: String, now: String) -> AgentError {
        AgentError(
            .identityMismatch,
            "REFUSED: the LocalSend device '\(alias)' was met with certificate \(was), but the device now answering to that name shows another (\(now)). It may be an impostor. If it was reinstalled, run `locafoto localsend forget \(alias)` and send again."
        )
    }

    /// Runs one send to its end. LocalSend has no resume: a send the agent's stop interrupts
    /// ends failed, saying so.
    func send(_ t: OutgoingTransfer, items: [PreparedItem], to target: LocalSendTargets.Target, pin: String?)
        async throws
    {
        do {
            try await run(t, items: items, to: target, pin: pin)
        } catch is CancellationError {
            throw AgentError(
                .peerUnavailable, "the agent stopped during the send; LocalSend sends do not resume, so send again")
        }
    }

    private func run(_ t: OutgoingTransfer, items: [PreparedItem], to target: LocalSendTargets.Target, pin: String?)
        async throws
    {
        if let lfs = items.first(where: { ContentType(rawValue: $0.kind) == nil }) {
            throw AgentError(
                .unsupported, "\(lfs.name) is a .lfs bundle; LocalSend devices cannot open it (send photos to them)")
        }
        let (device, certificate) = try own()
        let client = try LocalSendClient(group: group, certificate: certificate)
        t.update { $0.state = .connecting }
        let pinned = try await t.unlessCancelled { try await learn(target, own: device, client: client) }
        t.update {
            $0.peer.name = pinned.alias
            $0.peer.fingerprint = LocalSendPeerRecord.inboxFingerprint(pinned.fingerprint)
        }
        let files = items.map { item in
            LocalSendFile(
                id: item.id, fileName: item.name, size: item.size,
                fileType: ContentType(rawValue: item.kind)?.mimeType ?? "application/octet-stream")
        }
        var outbound = LocalSendOutbound(own: device, files: files, pin: pin)
        let request = outbound.prepareRequest
        t.update { s in
            s.state = .offered
            s.message = "waiting for \(pinned.alias) to accept"
            for i in s.items.indices { s.items[i].status = .offered }
        }
        logger.info("send: \(items.count) photo(s) offered to LocalSend device \(pinned.alias) at \(target.host)")
        let answer = try await t.unlessCancelled {
            try await client.request(
                host: target.host, port: target.port, path: request.path, body: .json(request.body),
                pinned: pinned.fingerprint, maxAnswerBytes: LocalSendOutbound.maxAnswerBytes)
        }
        try record(pinned, host: target.host, port: target.port)
        var actions = outbound.answered(status: answer.status, body: answer.body)
        if outbound.sessionID != nil {
            t.update { s in
                s.state = .sending
                s.message = nil
            }
        }
        let ids = Dictionary(uniqueKeysWithValues: items.enumerated().map { ($1.id, $0) })
        // Uploads run as child tasks; one more waits for the user's cancel (`cancelWatch`). A
        // child ends with the upload's status, or nil and why it broke off.
        let cancelWatch = "\u{0}cancel"
        try await withThrowingTaskGroup(of: (id: String, status: Int?, why: String?).self) { group in
            group.addTask {
                await t.untilCancelRequested()
                return (cancelWatch, nil, nil)
            }
            defer { group.cancelAll() }
            var running = 0
            // Why the send failed when it was not the device's answer (a file changed, another
            // certificate): said instead of the state machine's "connection broke".
            var failure: String?
            while true {
                for action in actions {
                    switch action {
                    case .upload(let file, let path):
                        let index = ids[file.id]!
                        let item = items[index]
                        t.update { $0.items[index].status = .sending }
                        running += 1
                        group.addTask {
                            do {
                                let a = try await client.request(
                                    host: target.host, port: target.port, path: path,
                                    body: .stream(length: item.size, next: Self.pieces(of: item)),
                                    pinned: pinned.fingerprint, answerTimeout: Self.uploadAnswerTimeout
                                ) { n in
                                    t.update {
                                        $0.sentBytes += Int64(n)
                                        $0.items[index].sentBytes += Int64(n)
                                    }
                                }
                                return (file.id, a.status, nil)
                            } catch is CancellationError {
                                throw CancellationError()
                            } catch let e as AgentError where e.code == .conflict {
                                return (file.id, nil, "\(item.path): \(e.message); send it again")
                            } catch let e as AgentError where e.code == .identityMismatch {
                                return (file.id, nil, e.message)
                            } catch {
                                return (file.id, nil, nil)
                            }
                        }
                    case .cancelRemote(let path):
                        // The uploads under way are stopped first; then the device is told, briefly
                        // (best effort: it ends the session on its side too).
                        group.cancelAll()
                        _ = try? await client.request(
                            host: target.host, port: target.port, path: path, body: .json([]),
                            pinned: pinned.fingerprint, answerTimeout: Self.cancelAnswerTimeout)
                    case .finished(var outcome):
                        if case .failed = outcome, let failure { outcome = .failed(failure) }
                        return end(t, outcome, alias: pinned.alias, pinGiven: pin != nil)
                    }
                }
                guard running > 0, let ended = try await group.next() else { return }
                if ended.id == cancelWatch {
                    guard t.cancelRequested else { throw CancellationError() }  // the agent stops
                    actions = outbound.cancel()
                    continue
                }
                if Task.isCancelled { throw CancellationError() }
                running -= 1
                if let index = ids[ended.id] {
                    let delivered = ended.status == 200 || ended.status == 204
                    t.update {
                        $0.items[index].status = delivered ? .delivered : .failed
                        if !delivered {
                            $0.items[index].message =
                                ended.why ?? ended.status.map { "HTTP \($0)" } ?? "the connection broke"
                        }
                    }
                }
                if failure == nil { failure = ended.why }
                actions = outbound.uploadEnded(ended.id, status: ended.status)
            }
        }
    }

    /// The device's certificate, and its name: pinned already for a device heard or met; learnt
    /// for an address (its `/register` answer must name the certificate it showed).
    private func learn(_ target: LocalSendTargets.Target, own: LocalSendDevice, client: LocalSendClient) async throws
        -> (alias: String, fingerprint: String)
    {
        if let fingerprint = target.fingerprint { return (target.alias, fingerprint) }
        let answer = try await client.request(
            host: target.host, port: target.port, path: LocalSendOutbound.basePath + "/register",
            body: .json(LocalSendJSON.encode(own)), pinned: nil, answerTimeout: .seconds(10))
        guard answer.status == 200, let device = try? LocalSendJSON.device(answer.body) else {
            throw AgentError(
                .peerUnavailable,
                "\(target.host):\(target.port) does not answer as a LocalSend device (HTTP \(answer.status))")
        }
        guard device.fingerprint == answer.certificate else {
            throw AgentError(
                .identityMismatch,
                "REFUSED: the LocalSend device at \(target.host):\(target.port) says its certificate is \(device.fingerprint.prefix(16))…, but it showed \(answer.certificate.prefix(16))…; not sending"
            )
        }
        if let other = try store.localSendPeers(alias: device.alias, other: device.fingerprint).first {
            throw Self.certificateChanged(alias: device.alias, was: other.fingerprint, now: device.fingerprint)
        }
        return (device.alias, device.fingerprint)
    }

    /// The device is met: a cert change under its alias is caught from now on.
    private func record(_ device: (alias: String, fingerprint: String), host: String, port: Int) throws {
        let heard = switchboard.current.nearby.first { $0.device.fingerprint == device.fingerprint }?.device
        try store.recordLocalSendPeer(
            fingerprint: device.fingerprint, alias: device.alias, deviceModel: heard?.deviceModel,
            deviceType: heard?.deviceType?.rawValue, address: host, port: port, now: clock.date)
    }

    private func end(_ t: OutgoingTransfer, _ outcome: LocalSendOutbound.Outcome, alias: String, pinGiven: Bool) {
        switch outcome {
        case .sent(let files, let skipped):
            t.update { s in
                for i in s.items.indices where s.items[i].status == .offered {
                    s.items[i].status = .failed
                    s.items[i].message = "\(alias) did not want it"
                }
            }
            let not = skipped > 0 ? "; \(skipped) not wanted by the device" : ""
            logger.info("send: \(files) photo(s) sent to LocalSend device \(alias)\(not)")
            t.finish(.done, "sent \(files == 1 ? "1 photo" : "\(files) photos") to \(alias) (LocalSend)\(not)")
        case .nothingNeeded:
            t.finish(.done, "\(alias) needed none of the photos")
        case .declined:
            t.finish(.rejected, "\(alias) declined the photos")
        case .pinRequired:
            t.finish(
                .failed,
                pinGiven
                    ? "\(alias) did not take the PIN; send again with the right one"
                    : "\(alias) asks for a PIN; send again and give it (`locafoto send` asks for it at the prompt)",
                code: .unauthenticated)
        case .busy:
            t.finish(
                .failed, "\(alias) is busy with another transfer; try again when it is done", code: .peerUnavailable)
        case .tooManyTries:
            t.finish(.failed, "\(alias) refuses for a while after wrong PINs; wait and try again", code: .throttled)
        case .failed(let why):
            // An item failed (the device refused it, or its upload broke): exit status 1, as for
            // an item a locafoto peer refuses.
            t.finish(.failed, why)
        case .cancelled:
            t.finish(.cancelled, "cancelled by the user")
        }
    }

    /// The bytes of `item`, piece by piece: from memory (a vault photo, a transformed one) or
    /// read from its file, which must still be the file that was prepared.
    static func pieces(of item: PreparedItem) -> @Sendable () async throws -> ByteBuffer? {
        let source = PieceSource(item, pieceBytes: pieceBytes)
        return { try source.next() }
    }
}

/// One upload's bytes: an offset into the photo in memory, or its file open while it is read.
final class PieceSource: Sendable {
    private struct State {
        var offset = 0
        var reader: PhotoFileReader?
        var ended = false
    }

    private let item: PreparedItem
    private let pieceBytes: Int
    private let state = Mutex(State())

    init(_ item: PreparedItem, pieceBytes: Int) {
        self.item = item
        self.pieceBytes = pieceBytes
    }

    func next() throws -> ByteBuffer? {
        try state.withLock { s in
            guard !s.ended else { return nil }
            if let data = item.data {
                guard s.offset < data.count else {
                    s.ended = true
                    return nil
                }
                let end = min(s.offset + pieceBytes, data.count)
                defer { s.offset = end }
                return ByteBuffer(bytes: data[s.offset..<end])
            }
            if s.reader == nil {
                let reader = try PhotoFileReader(path: item.path)
                guard item.stamp == nil || reader.stamp == item.stamp else {
                    reader.close()
                    throw AgentError(.conflict, "it changed after it was chosen for sending")
                }
                s.reader = reader
            }
            var buffer = ByteBuffer()
            let n = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: pieceBytes) { raw in
                try s.reader!.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<pieceBytes]))
            }
            if n == 0 {
                s.reader?.close()
                s.reader = nil
                s.ended = true
                return nil
            }
            return buffer
        }
    }

    deinit { state.withLock { $0.reader?.close() } }
}
