import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import LocafotoReceiving
import LocafotoSession
import LocafotoVault
import Logging
import ServiceLifecycle
import Synchronization

/// Reads each newly imported photo once, after its import committed: EXIF facts (capture date,
/// size, orientation, camera, GPS presence), from the header, without decoding pixels. Its
/// thumbnail is made when first asked for (`PhotosController`), so that photos nobody looks
/// at cost no decode. Keeping this off
/// the import and transfer paths is what keeps imports fast and transfer memory bounded; it
/// runs one photo at a time on its own thread, only while the vault is unlocked, and never while
/// a transfer moves photo bytes in or out (it waits for the transfer to end).
final class MediaIndexer: Service, Sendable {
    static let idle: Duration = .seconds(1)
    let vaults: VaultHandle
    /// Indexing waits while a transfer moves photo bytes.
    let transferActivity: TransferActivity
    /// Heads of JPEGs just received, read instead of the whole photo.
    let mediaHeads: MediaHeads
    let media: MediaJobs
    let events: EventHub
    let clock: any AgentClock
    let logger: Logger
    /// Photos whose facts were read from their head alone (the tests' measure of it).
    let indexedFromHeads = Atomic<Int>(0)

    init(
        vaults: VaultHandle, transferActivity: TransferActivity, mediaHeads: MediaHeads, media: MediaJobs,
        events: EventHub, clock: any AgentClock, logger: Logger
    ) {
        self.vaults = vaults
        self.transferActivity = transferActivity
        self.mediaHeads = mediaHeads
        self.media = media
        self.events = events
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        // Shutdown cancels the loop; that is the normal end, not an error.
        try? await cancelWhenGracefulShutdown {
            var indexedSinceTrim = false
            while !Task.isCancelled {
                // Never beside a transfer: indexing decrypts whole photos (see TransferActivity).
                await self.transferActivity.whenIdle()
                // A child task at low priority: the service's own, cancelled with it.
                let worked = await withTaskGroup(of: Bool.self) { group in
                    group.addTask(priority: .utility) { self.indexSome() }
                    return await group.next() ?? false
                }
                if !worked {
                    // Decoders leave their buffers in malloc's free lists: hand them back before
                    // idling (a HEIC decode can take over 100 MiB).
                    if indexedSinceTrim { ConnectionGate.trimHeap() }
                    indexedSinceTrim = false
                    try await self.clock.sleep(for: Self.idle)
                } else {
                    indexedSinceTrim = true
                }
            }
        }
    }

    /// Indexes a few photos; returns whether any was indexed (photos of a locked private album
    /// are skipped and do not count, so the loop sleeps instead of spinning on them).
    func indexSome(limit: Int = 8) -> Bool {
        guard let vault = try? vaults.unlocked(), let ids = try? vault.photosAwaitingMedia(limit: limit), !ids.isEmpty
        else {
            return false
        }
        var progressed = false
        var read: [(id: String, info: PhotoMetadata)] = []
        // What was read is recorded in one catalog transaction (one fsync for the batch); should
        // that fail, photo by photo, so one bad row does not hold back the others.
        defer {
            do {
                try vault.recordMedia(read)
            } catch {
                read = read.filter { (try? vault.recordMedia([$0])) != nil }
            }
            // The web app's gallery redraws what it shows (its details, sort by capture date).
            for r in read { events.publish(.photoIndexed(photo: r.id)) }
        }
        for id in ids {
            // A transfer began: stop after the photo in hand; the loop waits for it to end.
            if transferActivity.isActive { return true }
            do {
                // A JPEG just received left its head (MediaHeads): its facts are all there. Should
                // the worker not read them from it, the photo is read whole, as any other.
                var meta = mediaHeads.take(id).flatMap { head in
                    (try? media.perform(.index(type: .jpeg), body: head.bytes))?.metadata
                }
                if meta != nil {
                    indexedFromHeads.add(1, ordering: .relaxed)
                } else {
                    var data = try vault.exportData(id, maxSize: Int64(Media.maxInputBytes))
                    defer { secureZero(&data) }
                    let type =
                        try vault.photo(matching: id).contentType
                        ?? ContentType.sniff(data.prefix(ContentType.sniffLength))
                    guard let type else { throw MediaError.unreadable }
                    // In a media worker (`MediaJob`): the photo's plaintext goes to it through a pipe,
                    // never to disk.
                    meta = try media.perform(.index(type: type), body: data).metadata
                }
                guard let meta else { throw MediaError(.undecodable, "the photo cannot be read as an image") }
                read.append((id, meta))
                progressed = true
            } catch let e as VaultError where e.code == .locked || e.code == .albumLocked {
                continue  // try again once unlocked
            } catch {
                logger.debug("media: photo \(id.prefix(8)) cannot be read as an image: \(error)")
                try? vault.markMediaUnreadable(id)
                progressed = true
            }
        }
        return progressed
    }
}

extension MediaError {
    static var unreadable: MediaError { MediaError(.undecodable, "the photo's type is unknown") }
}
