import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import LocafotoPeers
import LocafotoVault
import LocafotoWire
import Synchronization

/// A file to send, checked before anything is offered: regular file, size limit, sniffed type.
/// Its content hash is computed only when a peer needs it in the offer (one without cap
/// `late-hash`, or a relay deposit, whose signature covers it): `Sender.ensureHashes`.
package struct PreparedItem: Sendable {
    package var id: String
    package var path: String
    package var name: String
    /// A sniffed image type ("jpeg", …) or "lfs" for a `.lfs` file sent as is.
    package var kind: String
    package var size: Int64
    /// BLAKE2b-256 of the bytes to send; nil for a file not hashed yet.
    package var hash: [UInt8]?
    /// The file's identity when it was prepared (nil for bytes in memory): a resume compares it
    /// to tell a changed file without reading it.
    package var stamp: FileStamp?
    /// The bytes to send when they differ from the file (compressed or location-stripped);
    /// nil: stream the file itself.
    package var data: [UInt8]?
    /// Size of the file before any transformation.
    package var originalSize: Int64 = 0

    package init(
        id: String, path: String, name: String, kind: String, size: Int64, hash: [UInt8]?, stamp: FileStamp?,
        data: [UInt8]?, originalSize: Int64 = 0
    ) {
        self.id = id
        self.path = path
        self.name = name
        self.kind = kind
        self.size = size
        self.hash = hash
        self.stamp = stamp
        self.data = data
        self.originalSize = originalSize
    }

    package var offerItem: OfferItem {
        OfferItem(id: id, name: name, kind: kind, size: size, hash: hash.map(Hex.encode))
    }

    /// Prepares every file (its head only; transformed ones whole), up to one per core at a time.
    package static func prepareAll(_ paths: [String], maxSize: Int64, transform: SendTransform? = nil) async throws
        -> [PreparedItem]
    {
        try await BlockingWork.map(paths.count) { i in
            let item = try PreparedItem.prepare(path: paths[i], maxSize: maxSize)
            return try transform.map { try item.transformed($0) } ?? item
        }
    }

    package static func prepare(path: String, maxSize: Int64) throws -> PreparedItem {
        let reader = try PhotoFileReader(path: path)
        defer { reader.close() }
        guard reader.size <= maxSize else {
            throw AgentError(.invalidRequest, "\(path) is \(reader.size) bytes; the limit is \(maxSize)")
        }
        // Only the head is read here (to sniff the type); the bytes are read once more, while
        // they are sealed and sent.
        var prefix = [UInt8](repeating: 0, count: Int(min(Int64(LFSFile.headerLength), reader.size)))
        let got = try prefix.withUnsafeMutableBytes { try reader.read(into: $0) }
        guard got == prefix.count else { throw AgentError(.conflict, "\(path) changed while it was being read") }
        let total = reader.size
        let kind: String
        if let image = ContentType.sniff(prefix) {
            kind = image.rawValue
        } else if path.lowercased().hasSuffix(".\(LFSFile.fileExtension)"), total >= Int64(LFSFile.overhead),
            (try? LFSFile.keyName(of: prefix)) != nil
        {
            // A .lfs file travels as is: the recipient opens it with its key of that name.
            kind = ItemKind.lfs
        } else {
            throw AgentError(
                .unsupported,
                "\(path) is not a supported image (JPEG, PNG, HEIC/HEIF, AVIF, WebP, GIF, TIFF) nor a .lfs file; the file name's extension is not trusted"
            )
        }
        let base = (path as NSString).lastPathComponent
        let name = String(
            base.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f && $0 != "\\" }.map(Character.init)
        ).prefix(200)
        return PreparedItem(
            id: UUID().uuidString.lowercased(), path: path,
            name: name.isEmpty ? "photo.\(ContentType(rawValue: kind)?.fileExtension ?? kind)" : String(name),
            kind: kind, size: total, hash: nil, stamp: reader.stamp, data: nil, originalSize: total)
    }

    /// BLAKE2b-256 of the file at `path`, which must still be the file that was prepared
    /// (`size` bytes, same `stamp`).
    package static func hashFile(path: String, size: Int64, stamp: FileStamp?) throws -> [UInt8] {
        let reader = try PhotoFileReader(path: path)
        defer { reader.close() }
        guard reader.size == size, stamp == nil || reader.stamp == stamp else {
            throw AgentError(.conflict, "\(path) changed after it was chosen for sending; send it again")
        }
        var hasher = ContentHash.hasher()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if n == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            total += Int64(n)
        }
        guard total == size else { throw AgentError(.conflict, "\(path) changed while it was being read") }
        return hasher.finalize()
    }

    /// A photo from the vault: decrypted (and its tag verified) into memory; the catalog already
    /// knows its hash, size and type, so there is no hashing pass.
    package static func fromVault(_ record: PhotoRecord, vault: Vault) throws -> PreparedItem {
        let data = try vault.exportData(record.id, maxSize: Int64(Media.maxInputBytes))
        return PreparedItem(
            id: UUID().uuidString.lowercased(), path: "vault:\(record.id)", name: Vault.exportFileName(for: record),
            kind: record.format,
            size: Int64(data.count), hash: record.contentHash, stamp: nil, data: data, originalSize: Int64(data.count))
    }

    /// Compresses and/or strips the location, in memory (seed 004: longest side 1500 px, JPEG).
    package func transformed(_ t: SendTransform) throws -> PreparedItem {
        guard let imageType = ContentType(rawValue: kind) else { return self }  // .lfs files are sent unchanged
        let source =
            data
            ?? (size <= Int64(Media.maxInputBytes)
                ? FileManager.default.contents(atPath: path).map { [UInt8]($0) } : nil)
        guard let original = source, Int64(original.count) == size
        else { throw AgentError(.invalidRequest, "\(path) is too large to compress or changed while being read") }
        var out = original
        var kind = imageType
        var name = self.name
        do {
            if let options = t.compression {
                out = try original.withUnsafeBytes { try Media.compress($0, type: imageType, options: options) }
                kind = .jpeg
                if !name.lowercased().hasSuffix(".jpg") && !name.lowercased().hasSuffix(".jpeg") {
                    name = ((name as NSString).deletingPathExtension) + ".jpg"
                }
            } else if t.stripLocation {
                out = try Media.strippingLocation(from: original, type: imageType)
            }
        } catch let e as MediaError {
            throw AgentError(.unsupported, "\(path): \(e.message)")
        }
        var item = self
        item.data = out
        item.kind = kind.rawValue
        item.name = name
        item.size = Int64(out.count)
        item.hash = ContentHash.of(out)
        item.stamp = nil
        return item
    }
}

/// What `send` may do to photos before sealing them.
public struct SendTransform: Sendable {
    public var compression: CompressionOptions?
    public var stripLocation = false

    public init(compression: CompressionOptions?, stripLocation: Bool) {
        self.compression = compression.map {
            var o = $0
            o.stripLocation = stripLocation
            return o
        }
        self.stripLocation = stripLocation
    }
}

/// What tells a file apart from a changed one without reading it (as rsync's quick check and
/// syncthing's scanner do): device, inode, size, modification and change times.
package struct FileStamp: Codable, Sendable, Equatable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    package var modifiedNs: Int64
    package var changedNs: Int64

    package init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modifiedNs = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        changedNs = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
    }
}

/// Reads a regular file sequentially (refuses devices, FIFOs, directories).
package final class PhotoFileReader {
    package let fd: Int32
    package let size: Int64
    package let path: String
    package let stamp: FileStamp

    package init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AgentError(.notFound, "cannot open \(path): \(String(cString: strerror(errno)))") }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            throw AgentError(.invalidRequest, "\(path) is not a regular file")
        }
        size = Int64(st.st_size)
        stamp = FileStamp(st)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = Glibc.read(fd, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw AgentError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    package func close() { Glibc.close(fd) }
}

/// Progress of one `send`, followed by the CLI through the control API's events.
public final class OutgoingTransfer: Sendable {
    // The shapes the control API shows (shared with the CLI and the tests).
    public typealias State = TransferSnapshot.State
    public typealias ItemProgress = TransferSnapshot.Item
    public typealias Snapshot = TransferSnapshot

    public let id: String
    /// Its state, cancel request and hold on the photos' bytes (`TransferLife`).
    private let life: Mutex<TransferLife>
    /// Clients waiting for the next phase.
    private let waiters = Waiters()
    /// What is offered, once prepared (persisted in the store while unfinished).
    package let plan = Mutex<OutgoingPlan?>(nil)
    /// Makes the photos' previews when a session needs them; nil for `send --no-preview` and
    /// for a transfer resumed after a restart (it offers the previews its plan kept).
    package let previewMaker = Mutex<PreviewMaker?>(nil)
    /// The plan as last written to the store (`Agent.persist` rewrites only the state while the
    /// plan is unchanged).
    package let persistedPlan = Mutex<OutgoingPlan?>(nil)
    private let cancelWaiters = Waiters()
    /// Where changes are announced (`GET /v1/events`); set once the transfer is registered.
    private let events = Mutex<EventHub?>(nil)

    /// Its start and end are dated, and waits on it bounded, by this clock.
    private let clock: any AgentClock

    package init(
        peer: String, id: String = UUID().uuidString.lowercased(), startedAt: Date? = nil, clock: any AgentClock
    ) {
        self.id = id
        self.clock = clock
        let startedAt = startedAt ?? clock.date
        life = Mutex(
            TransferLife(
                Snapshot(
                    id: id, peer: PeerRef(name: peer, fingerprint: nil), state: .preparing, items: [], sentBytes: 0,
                    totalBytes: 0, startedAt: startedAt)))
    }

    public var current: Snapshot { life.withLock { $0.snapshot } }

    package func update(_ change: (inout Snapshot) -> Void) {
        perform(life.withLock { $0.update(change) })
    }

    package func finish(_ state: State, _ message: String?, code: AgentError.Code? = nil) {
        perform(life.withLock { $0.ending(in: state) })
        let date = clock.date
        perform(life.withLock { $0.end(state, message, code: code, at: date) })
    }

    /// The transfer no longer needs the photos' bytes it holds in memory (uploads, photos from
    /// the vault, transformed photos): it ended, or a relay holds them. They are dropped from its
    /// plan (a finished transfer stays in the outbox's table for an hour), and those waiting
    /// for it (`whenLetGoOfBytes`) are told, once.
    package func letGoOfBytes(in state: State) {
        perform(life.withLock { $0.letGoOfBytes(in: state) })
    }

    /// Carries out what a change of its life asks for, outside the lock and in order.
    private func perform(_ actions: [TransferLife.Action]) {
        for action in actions {
            switch action {
            case .wakeWaiters: waiters.wakeAll()
            case .announceState(let s): announce(s, moved: true, bytesMoved: false)
            case .announceProgress(let s): announce(s, moved: false, bytesMoved: true)
            case .letGoOfBytes(let tell):
                plan.withLock { p in
                    guard p != nil else { return }
                    for i in p!.items.indices { p!.items[i].data = nil }
                }
                for notify in tell { notify() }
            case .beforeEnd(let work): work()
            case .ended: events.withLock { $0 }?.forget(id)
            }
        }
    }

    /// A session broke; it resumes when the peer is reachable (`TransferLife.interrupt`).
    package func interrupt(_ message: String, resumeBase: Duration) {
        let now = clock.date
        perform(life.withLock { $0.interrupt(message, at: now, resumeBase: resumeBase) })
    }

    /// When the last session broke; nil: none did.
    package var interruptedAt: Date? { life.withLock { $0.interruptedAt } }

    /// Read back from the store after a restart.
    package func interrupted(since date: Date) { life.withLock { $0.interrupted(since: date) } }

    /// Whether a resume may start now with the peer at `endpoints` (`ResumeRetry`).
    package func resumeIsDue(now: Date, endpoints: [PeerEndpoint]) -> Bool {
        life.withLock { $0.resumeRetry.isDue(now: now, endpoints: endpoints) }
    }

    package func resuming(at endpoints: [PeerEndpoint]) { life.withLock { $0.resuming(at: endpoints) } }

    /// Sets what `finish` does before the end becomes visible.
    package func beforeEnding(_ work: @escaping @Sendable () -> Void) {
        life.withLock { $0.beforeEnding(work) }
    }

    /// The state the transfer let go of its photos' bytes in; nil while it holds them.
    package var letGoOfBytesIn: State? { life.withLock { $0.letGoIn } }

    /// Calls `then` once the transfer has let go of its photos' bytes (at once if it has).
    package func whenLetGoOfBytes(_ then: @escaping @Sendable () -> Void) {
        if life.withLock({ $0.whenLetGoOfBytes(then) }) { then() }
    }

    /// From now on, changes of this transfer are events on `hub`.
    package func announce(on hub: EventHub) {
        events.withLock { $0 = hub }
        announce(current, moved: true, bytesMoved: false)
    }

    private func announce(_ s: Snapshot, moved: Bool, bytesMoved: Bool) {
        guard let hub = events.withLock({ $0 }) else { return }
        // Made only for an event that goes out: progress is announced per chunk sent, and
        // the hub lets a few a second through.
        func news() -> NodeEvent.TransferNews {
            let sending = s.items.firstIndex(where: { $0.status == .sending })
            return NodeEvent.TransferNews(
                transfer: s.id, offer: s.offer, peer: EventPeer(name: s.peer.name, fingerprint: s.peer.fingerprint),
                items: s.items.count, totalBytes: s.totalBytes, item: sending,
                itemName: sending.map { s.items[$0].name })
        }
        if moved {
            hub.publish(.transferState(news(), state: s.state.rawValue, sentBytes: s.sentBytes, message: s.message))
        } else if bytesMoved {
            hub.progress(key: s.id, bytes: s.sentBytes, final: s.sentBytes == s.totalBytes) {
                .transferProgress(news(), progress: $0)
            }
        }
    }

    /// The snapshot once its phase is past `phase`, or after `timeout`, whichever comes first.
    public func snapshot(after phase: Int, timeout: Duration) async -> Snapshot {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.nextPhase(after: phase) }
            group.addTask { try? await self.clock.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        return current
    }

    private func nextPhase(after phase: Int) async {
        await waiters.wait(unless: { [self] in life.withLock { $0.snapshot.phase > phase } })
    }

    /// Clients waiting in `snapshot(after:timeout:)` right now.
    package var waitingClients: Int { waiters.count }

    package var isFinished: Bool { life.withLock { $0.snapshot.finishedAt != nil } }

    // MARK: cancellation

    /// Asks the job sending this transfer to stop. Before a session it is abandoned at once;
    /// in a session it tells the peer (ERROR `cancelled`) first.
    package func requestCancel() {
        life.withLock { $0.requestCancel() }
        cancelWaiters.wakeAll()
    }

    package var cancelRequested: Bool { life.withLock { $0.cancelRequested } }

    /// Throws `TransferCancelled` once the user asked to cancel.
    package func checkCancelled() throws {
        if cancelRequested { throw TransferCancelled() }
    }

    /// Returns once the user asked to cancel (or the waiting task is cancelled).
    /// Why a wait that `untilCancelRequested` ended has stopped: the user's cancel, or the task's
    /// cancellation (the agent shutting down: the transfer stays interrupted, to resume).
    package var stopped: any Error { cancelRequested ? TransferCancelled() : CancellationError() }

    package func untilCancelRequested() async {
        await cancelWaiters.wait(unless: { [self] in cancelRequested })
    }

    /// Runs `work`, abandoning it (by task cancellation) and throwing `TransferCancelled` if the
    /// user cancels first. For steps that have nothing to tell a peer: preparing, waiting for
    /// the peer, connecting.
    package func unlessCancelled<R: Sendable>(_ work: @escaping @Sendable () async throws -> R) async throws -> R {
        try checkCancelled()
        return try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                await self.untilCancelRequested()
                return nil
            }
            defer { group.cancelAll() }
            guard let result = try await group.next(), let value = result else { throw stopped }
            return value
        }
    }
}

/// The user cancelled a transfer (`locafoto cancel`): it ends `cancelled` and is not resumed.
package struct TransferCancelled: Error, CustomStringConvertible {
    package init() {}
    package var description: String { "cancelled by the user" }
}
