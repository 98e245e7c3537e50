import LocafotoFormats
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import Synchronization

/// Makes the previews of one send's photos when a session asks for them, each at most once for
/// all the send's transfers: before the OFFER for a receiver or relay that takes previews only
/// there, after it for a receiver with cap `late-preview` (only until it decides: a trusted
/// receiver that accepts at once costs none; protocol/messages.md "Late previews").
package final class PreviewMaker: Sendable {
    /// How many photos of an offer get a preview: as many as receivers accept
    /// (`PreviewImage.maxPerOffer`). A preview comes from the photo's embedded thumbnail or a
    /// decode bounded by its size (`Media.preview`); a photo that has neither goes without one.
    package static let previewsPerOffer = PreviewImage.maxPerOffer

    /// The items that get one, in item order: the first `previewsPerOffer` photos (not `.lfs`).
    package let chosen: [Int]
    private let items: [PreparedItem]
    private let media: MediaJobs
    /// Previews made so far, by item (a nil value: the photo has none).
    private let made = Mutex<[Int: [UInt8]?]>([:])

    package init(items: [PreparedItem], media: MediaJobs) {
        self.items = items
        self.media = media
        chosen = Array(
            items.indices.filter { ContentType(rawValue: items[$0].kind) != nil }.prefix(Self.previewsPerOffer))
    }

    /// The preview of item `index`, made from the bytes that will be sent; nil for a photo
    /// without a cheap preview, one libvips cannot read, or an item not chosen. Blocking.
    package func make(_ index: Int) -> [UInt8]? {
        if let done = made.withLock({ $0[index] }) { return done }
        guard chosen.contains(index) else { return nil }
        let item = items[index]
        // Most phone JPEGs carry an upright EXIF thumbnail that is a preview as it is: no media
        // worker is started for them, nor for a JPEG no decoder could read.
        let path = item.data == nil ? item.path : nil
        let jpeg: [UInt8]?
        switch MediaJob.previewWithoutDecoder(path: path, size: item.size, body: item.data ?? []) {
        case .ready(let t): jpeg = t.jpeg
        case .unreadable: jpeg = nil
        case .needsDecoder:
            let request = path.map { MediaRequest.preview(path: $0, size: item.size) } ?? .previewOfBody
            jpeg = try? media.perform(request, body: item.data ?? []).jpeg
        }
        made.withLock { $0[index] = .some(jpeg) }
        return jpeg
    }

    /// How many previews were made (or found not to exist) so far.
    package var madeCount: Int { made.withLock { $0.count } }

    /// `make` on the thread pool.
    package func preview(_ index: Int) async -> [UInt8]? {
        (try? await BlockingWork.run { self.make(index) }) ?? nil
    }

    /// Every chosen item's preview, up to one per core at a time: for an OFFER that carries them.
    package func all() async throws -> [Int: [UInt8]] {
        let made = try await BlockingWork.map(chosen.count) { self.make(self.chosen[$0]) }
        var out: [Int: [UInt8]] = [:]
        for (n, jpeg) in made.enumerated() { out[chosen[n]] = jpeg }
        return out
    }
}
