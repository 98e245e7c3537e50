import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoInbox
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoVault
import LocafotoWire
import Logging

/// The receiving state of one accepted offer: the item in progress, the verified photos waiting
/// for the next group commit, and the tally.
///
/// Group commit: a verified photo is written as a file at its ITEM_END (`Vault.prepareReceived`;
/// fsynced, with the others of its batch, by `Vault.commitReceived`)
/// but enters the catalog with others, in one vault transaction and one inbox transaction
/// (`commitPending`). Its ITEM_RESULT `imported` goes out only after that commit, so what is
/// reported imported survives a power cut.
package struct IncomingReceipt {
    /// A batch is committed once it holds this many photos, or once this many bytes arrived
    /// since the last commit (so a photo does not wait for a large item behind it).
    package static let batchItems = 64
    package static let batchBytes: Int64 = 32 << 20
    /// An item larger than this is recorded as `receiving` when it starts, so that a crash in
    /// its middle loses no more than this; smaller ones are recorded with the next commit, or
    /// when the session breaks (then they resume), or not at all once they ended.
    package static let recordStartAbove: Int64 = 4 << 20

    package let offer: AssembledOffer
    package let peer: PeerIdentity
    package let importer: Importer
    package var current: IncomingItem?
    /// An item that failed before its end: its data is drained and dropped, then reported.
    package var failure: WireError?
    /// An item committed in an earlier session and sent again by a sender that could not be
    /// told so (no cap `resume`): its data is dropped and the earlier result reported again.
    private var repeated: ItemResult?
    /// The results of the items committed in earlier sessions of this offer, by index: read
    /// once, for a re-offered offer only (a new one has none).
    private let committedEarlier: [Int: ItemResult]
    /// `duplicates`: verified, and already in the vault (counted among `imported` too).
    package var summary = (imported: 0, queued: 0, failed: 0, duplicates: 0)
    private var pending: [(index: Int, photo: ReceivedPhoto, vault: Vault, head: PhotoHead?)] = []
    private var receivedSinceCommit: Int64 = 0
    /// The ITEM_START of the item in progress, when it is not yet in the inbox records.
    private var unrecordedStart: (idx: Int, startJSON: Data)?

    /// `reoffered`: the offer was known before this session (its decision stood).
    package init(offer: AssembledOffer, peer: PeerIdentity, importer: Importer, reoffered: Bool) throws {
        self.offer = offer
        self.peer = peer
        self.importer = importer
        var committed: [Int: ItemResult] = [:]
        if reoffered {
            for record in try importer.store.items(of: offer.id) {
                if let result = Self.committedResult(record) { committed[record.idx] = result }
            }
        }
        committedEarlier = committed
    }

    package var hasPending: Bool { !pending.isEmpty }
    package var isBatchFull: Bool { pending.count >= Self.batchItems || receivedSinceCommit >= Self.batchBytes }

    package mutating func begin(_ start: ItemStart) throws {
        failure = nil
        repeated = nil
        unrecordedStart = nil
        do {
            if let earlier = committedEarlier[start.item] {
                repeated = earlier
                return
            }
            if start.offset > 0 {
                // Same photo key, iv and header as the interrupted session, or the spooled
                // prefix would not belong to this ciphertext.
                guard let json = try importer.store.item(offer.id, start.item)?.startJSON,
                    let earlier = try? JSONDecoder().decode(ItemStart.self, from: json),
                    earlier.photo == start.photo, earlier.iv == start.iv, earlier.encryptedKey == start.encryptedKey,
                    earlier.metadata == start.metadata, earlier.algorithm == start.algorithm
                else {
                    throw WireError(
                        .protocolViolation,
                        "item \(start.item) resumes with another photo key or header than the interrupted session")
                }
            }
            current = try IncomingItem(
                start: start, offered: offer.items[start.item], identity: importer.identity, sender: peer,
                spoolDirectory: importer.spoolDirectory)
            var first = start
            first.offset = 0
            let json = try JSONEncoder().encode(first)
            if start.offset > 0 || offer.items[start.item].size > Self.recordStartAbove {
                try importer.store.recordItems(offer.id, receiving: [(start.item, json)], imported: [])
            } else {
                unrecordedStart = (start.item, json)
            }
        } catch let e as WireError {
            failure = e
        } catch {
            failure = WireError(.storageFailed, "cannot store the item: \(error)")
        }
    }

    package mutating func data(_ d: ItemData) {
        receivedSinceCommit += Int64(d.data.count)
        guard failure == nil, let c = current else { return }
        do {
            try c.append(d.data)
        } catch {
            failure = WireError(.storageFailed, "cannot store the item: \(error)")
            c.discard()
            current = nil
        }
    }

    /// Verifies the item; returns its result now, or nil when it waits for `commitPending`.
    package mutating func end(_ end: ItemEnd) -> ItemResult? {
        defer { current = nil }
        if let earlier = repeated {
            repeated = nil
            if earlier.status == .imported { summary.imported += 1 } else { summary.queued += 1 }
            return earlier
        }
        // Whatever happens now, the item no longer needs a `receiving` record.
        if unrecordedStart?.idx == end.item { unrecordedStart = nil }
        let name = offer.items[end.item].name
        var spooled: String?
        do {
            if let failure { throw failure }
            guard let c = current else { throw WireError(.internalError, "no item in progress") }
            let verified = try c.finish(end, sender: peer, recipient: importer.identity)
            spooled = verified.spoolPath
            switch try importer.place(verified, offer: offer.id, index: end.item, offeredName: name, peer: peer) {
            case .pending(let photo, let vault):
                pending.append((end.item, photo, vault, verified.head))
                return nil
            case .settled(let result):
                if result.status == .imported { summary.imported += 1 } else { summary.queued += 1 }
                if result.duplicate == true { summary.duplicates += 1 }
                return result
            }
        } catch {
            current?.discard()
            if let spooled { unlink(spooled) }  // verified but not committed: nothing of it may remain
            return fail(end.item, error)
        }
    }

    /// Commits the waiting photos to the vault in one transaction, records them (and the item in
    /// progress, if not yet recorded) in one inbox transaction, and returns their results.
    package mutating func commitPending() -> [ItemResult] {
        let batch = pending
        pending = []
        receivedSinceCommit = 0
        guard let vault = batch.first?.vault else { return [] }
        let records: [PhotoRecord]
        do {
            records = try importer.commit(
                batch.map { ($0.index, $0.photo, $0.head) }, to: vault, offer: offer.id,
                receiving: unrecordedStart.map { [$0] } ?? [])
        } catch {
            // Nothing of the batch remains (the vault's commit removes its files).
            return batch.map { fail($0.index, error) }
        }
        unrecordedStart = nil
        summary.imported += batch.count
        return zip(batch, records).map { ItemResult(offer: offer.id, item: $0.index, status: .imported, photo: $1.id) }
    }

    /// The session broke off (not for a protocol error): verified photos are committed, the
    /// item in progress stays spooled and recorded, for a later session to resume.
    package mutating func suspend() {
        _ = commitPending()
        if let start = unrecordedStart {
            try? importer.store.recordItems(offer.id, receiving: [start], imported: [])
            unrecordedStart = nil
        }
        current?.suspend()
        current = nil
    }

    /// The transfer was cancelled (by either user): verified photos are committed and their
    /// results returned, the item in progress is dropped.
    package mutating func stop() -> [ItemResult] {
        let results = commitPending()
        unrecordedStart = nil
        current?.discard()
        current = nil
        return results
    }

    /// A protocol error ends the session: nothing that is not committed remains
    /// (protocol/messages.md, session state machine).
    package mutating func discard() {
        for p in pending { p.vault.discardReceived(p.photo) }
        pending = []
        unrecordedStart = nil
        current?.discard()
        current = nil
    }

    /// The ITEM_RESULT an item committed in an earlier session gets again (messages.md "Resume":
    /// a committed item is never committed twice).
    package static func committedResult(_ record: OfferItemRecord) -> ItemResult? {
        switch record.status {
        case .imported: ItemResult(offer: record.offerId, item: record.idx, status: .imported, photo: record.photoId)
        case .queued, .needsKey: ItemResult(offer: record.offerId, item: record.idx, status: .queued)
        case .offered, .receiving, .failed: nil
        }
    }

    private mutating func fail(_ index: Int, _ error: any Error) -> ItemResult {
        let name = offer.items[index].name
        let wire = WireError((error as? VaultError).map(AgentError.init) ?? error, local: .storageFailed)
        importer.logger.warning("item '\(name)' from \(peer.name) refused: \(wire)")
        // A failed item keeps nothing (messages.md ITEM_END), also a part spooled by an earlier
        // session that this one failed to resume.
        unlink(SpoolFile.partPath(in: importer.spoolDirectory, offer: offer.id, item: index))
        let message = wire.message
        let code = Int(wire.code.rawValue)
        try? importer.store.updateItem(offer.id, index) {
            $0.status = .failed
            $0.errorCode = code
            $0.errorMessage = message
            $0.spoolPath = nil
        }
        summary.failed += 1
        return ItemResult(
            offer: offer.id, item: index, status: .failed, code: wire.code,
            message: PeerFacing.message(wire.code, wire.message))
    }
}
