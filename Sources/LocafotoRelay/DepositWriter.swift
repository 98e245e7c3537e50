import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoFormats
import LocafotoWire
import Synchronization

extension RelayStore {
    /// Starts writing a deposit under partial/<offer>. Checks the offer, that its id is not in
    /// use, the allow-list and the quotas (the offered size, previews included, is reserved until
    /// commit or discard).
    public func beginDeposit(_ offer: DepositOffer) throws -> DepositWriter {
        try offer.validate()
        let sender = try fingerprint(of: offer.senderKey, role: "sender")
        let id = offer.offerID
        // Under the reservation lock: two sessions with one offer id cannot both get past this.
        let refusal: Refusal?
        do {
            refusal = try reservations.withLock { reserved in
                let (held, delivered) = try db.read { db in
                    (try DepositRow.exists(db, key: id), try ReceiptRow.exists(db, key: id))
                }
                guard !held else {
                    return Refusal(
                        reason: .offerReused, code: .protocolViolation,
                        message: "offer \(id) is already held by this relay")
                }
                guard !delivered else {
                    return Refusal(
                        reason: .offerReused, code: .protocolViolation,
                        message:
                            "offer \(id) was already deposited here and handed on; a new deposit needs a new offer id")
                }
                guard reserved[id] == nil else {
                    return Refusal(
                        reason: .offerReused, code: .protocolViolation,
                        message: "offer \(id) is being deposited by another session")
                }
                if let r = try check(
                    sender: sender, items: offer.items.count, bytes: offer.quotaBytes, reserved: reserved)
                {
                    return r
                }
                reserved[id] = Reservation(senderFingerprint: sender, items: offer.items.count, bytes: offer.quotaBytes)
                return nil
            }
        } catch {
            try? count(.storage)
            throw RelayError(.refused, .storageFailed, "the relay cannot read its store: \(error)")
        }
        if let refusal {
            try count(refusal.reason)
            throw RelayError(.refused, refusal.code, refusal.message)
        }
        let path = partialDirectory + "/" + id
        do {
            disk.removeTree(path)
            try disk.makeDirectory(path, tightening: true, followingLinks: false)
        } catch {
            release(id)
            try? count(.storage)
            throw RelayError(.refused, .storageFailed, "the relay cannot store a deposit: \(error)")
        }
        return DepositWriter(store: self, offer: offer, directory: path)
    }

    func release(_ offerID: String) {
        _ = reservations.withLock { $0.removeValue(forKey: offerID) }
    }
}

/// Writes one deposit: items one after the other (begin, append..., end), then `commit` makes
/// the deposit durable. Until then nothing counts: `discard`, a thrown commit, or dropping the
/// writer removes everything. Not thread-safe: one session owns it.
public final class DepositWriter {
    public let offer: DepositOffer
    private let store: RelayStore
    private let directory: String
    private var current: OpenItem?
    /// Index -> ciphertext size of the items whose signature verified.
    private var stored: [Int: Int64] = [:]
    /// Indices that were begun (stored, failed or open): an item is sent once.
    private var begun = Set<Int>()
    /// Bytes of the sealed previews stored (`storePreviews`): they count against the quotas.
    private var previewBytes: Int64 = 0
    private var finished = false

    private struct OpenItem {
        var index: Int
        var start: ItemStart
        var file: OpenFile
        var received: Int64
    }

    /// Items stored so far, in offer order.
    public var storedIndices: [Int] { stored.keys.sorted() }

    init(store: RelayStore, offer: DepositOffer, directory: String) {
        self.store = store
        self.offer = offer
        self.directory = directory
    }

    deinit {
        if !finished { discard() }
    }

    private func paths(_ index: Int) -> (start: String, data: String, end: String) {
        ("\(directory)/\(index).start.json", "\(directory)/\(index).data", "\(directory)/\(index).end.json")
    }

    /// Starts item `index` (its ITEM_START). Deposits are never resumed: the offset must be 0.
    public func begin(index: Int, start: ItemStart) throws {
        try usable()
        if let open = current {
            throw RelayError(
                .invalidDeposit, .protocolViolation,
                "item \(open.index) of offer \(offer.offerID) has not ended; items are sent one after the other")
        }
        guard offer.items.indices.contains(index) else {
            throw RelayError(.invalidDeposit, .protocolViolation, "offer \(offer.offerID) has no item \(index)")
        }
        guard begun.insert(index).inserted else {
            throw RelayError(
                .invalidDeposit, .protocolViolation, "item \(index) of offer \(offer.offerID) was already sent")
        }
        do {
            try check(start, index: index)
            current = OpenItem(
                index: index, start: start, file: try disk.create(paths(index).data), received: 0)
        } catch let e as RelayError {
            try drop(index, e)
        }
    }

    private func check(_ start: ItemStart, index: Int) throws {
        let offered = offer.items[index]
        func bad(_ m: String, _ code: WireErrorCode = .protocolViolation) -> RelayError {
            RelayError(.invalidDeposit, code, m)
        }
        guard start.offer == offer.offerID, start.item == index else {
            throw bad(
                "ITEM_START names offer \(start.offer) item \(start.item), expected \(offer.offerID) item \(index)")
        }
        guard start.offset == 0 else {
            throw bad(
                "a deposit starts every item at offset 0 (got \(start.offset)); an interrupted deposit is sent again whole"
            )
        }
        guard AEADAlgorithm(name: start.algorithm) != nil else {
            throw bad("item \(index) uses unknown algorithm '\(start.algorithm)'", .decryptFailed)
        }
        guard BundleHeader.isCanonicalUUID(start.photo) else {
            throw bad("item \(index): photo id is not a lowercase UUID")
        }
        guard start.metadata.originalSize == offered.size else {
            throw bad(
                "item \(index) announces \(start.metadata.originalSize) bytes, offered \(offered.size)", .sizeMismatch)
        }
        // The recipient checks the same and would fail the item; no point holding it until then.
        if let name = start.metadata.name, name != offered.name {
            throw bad("item \(index) is named '\(name)' but was offered as '\(offered.name)'")
        }
        do { try start.metadata.validate() } catch let e as FormatError { throw bad("item \(index): \(e.message)") }
    }

    /// Appends ciphertext to the open item. More bytes than offered fails the item.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        try usable()
        guard var open = current else {
            throw RelayError(.invalidDeposit, .protocolViolation, "item data arrived outside an item (no ITEM_START)")
        }
        let size = offer.items[open.index].size
        guard Int64(bytes.count) <= size - open.received else {
            try drop(
                open.index,
                RelayError(
                    .invalidDeposit, .sizeMismatch, "item \(open.index) carries more than the \(size) bytes offered"))
        }
        do {
            try open.file.write(bytes, at: open.received)
        } catch let e as RelayError {
            try drop(open.index, e)
        }
        open.received += Int64(bytes.count)
        current = open
    }

    public func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try append($0) }
    }

    /// Ends the open item (its ITEM_END): the size must be complete and the bundle signature
    /// must verify for this sender and this recipient, else the item is dropped and the error
    /// (code `bad_signature`, `size_mismatch`, ...) is what ITEM_RESULT `failed` reports.
    public func end(_ end: ItemEnd) throws {
        try usable()
        guard let open = current else {
            throw RelayError(.invalidDeposit, .protocolViolation, "ITEM_END arrived outside an item (no ITEM_START)")
        }
        let index = open.index
        let size = offer.items[index].size
        guard end.offer == offer.offerID, end.item == index else {
            try drop(
                index,
                RelayError(
                    .invalidDeposit, .protocolViolation,
                    "ITEM_END names offer \(end.offer) item \(end.item), expected \(offer.offerID) item \(index)"))
        }
        guard open.received == size else {
            try drop(
                index,
                RelayError(
                    .invalidDeposit, .sizeMismatch, "item \(index) ended after \(open.received) of \(size) bytes"))
        }
        do {
            try verify(open.start, end)
        } catch let e as RelayError {
            try drop(index, e)
        }
        let p = paths(index)
        do {
            try open.file.sync()
            open.file.close()
            let encoder = JSONEncoder()
            try disk.writeNew(p.start, Array(try encoder.encode(open.start)))
            try disk.writeNew(p.end, Array(try encoder.encode(end)))
        } catch {
            try drop(
                index, error as? RelayError ?? RelayError(.io, .storageFailed, "cannot store item \(index): \(error)"))
        }
        current = nil
        stored[index] = size
    }

    /// Rebuilds the bundle header the sender signed and checks it. The relay cannot check the
    /// AEAD tag (it has no photo key); the recipient does, and the signature covers the tag.
    private func verify(_ start: ItemStart, _ end: ItemEnd) throws {
        // messages.md ITEM_END: a tag or signature of the wrong length is a signature that does
        // not verify (the item fails `bad_signature`), as at any receiver.
        guard end.authTag.bytes.count == AEADAlgorithm.tagLength, end.signature.bytes.count == 64 else {
            throw RelayError(
                .badSignature, .badSignature,
                "item \(start.item) of offer \(offer.offerID): the ITEM_END carries a \(end.authTag.bytes.count)-byte tag and a \(end.signature.bytes.count)-byte signature (16 and 64 expected)"
            )
        }
        do {
            let header = BundleHeader(
                photoID: start.photo, algorithm: AEADAlgorithm(name: start.algorithm)!, iv: start.iv.bytes,
                encryptedKey: start.encryptedKey.bytes, authTag: end.authTag.bytes, metadata: start.metadata,
                sender: try SigningPublicKey(bytes: offer.senderKey),
                recipient: try SigningPublicKey(bytes: offer.recipientKey),
                signature: end.signature.bytes)
            try header.validate()
            try header.verifySignature()
        } catch let e as FormatError where e.code == .badSignature {
            throw RelayError(
                .badSignature, .badSignature,
                "item \(start.item) of offer \(offer.offerID): the bundle signature does not verify for this sender and recipient; it was altered or sealed for someone else"
            )
        } catch let e as FormatError {
            throw RelayError(
                .invalidDeposit, .protocolViolation, "item \(start.item) of offer \(offer.offerID): \(e.message)")
        }
    }

    /// Removes a failed item's files, counts it, and throws `error`.
    private func drop(_ index: Int, _ error: RelayError) throws -> Never {
        if current?.index == index {
            current?.file.close()
            current = nil
        }
        let p = paths(index)
        for path in [p.start, p.data, p.end] { unlink(path) }
        try? store.count(error.kind == .badSignature ? .badSignature : .badItem)
        throw error
    }

    /// Gives up the open item (e.g. the session failed it for a reason of its own); the
    /// deposit goes on without it.
    public func abandonItem() {
        guard let open = current else { return }
        open.file.close()
        current = nil
        let p = paths(open.index)
        for path in [p.start, p.data, p.end] { unlink(path) }
    }

    /// Makes the deposit durable (the DONE): files flushed, the directory moved into deposits/
    /// and flushed, then the row inserted. Returns the stored indices, the items to report as
    /// `held`. A deposit without any stored item is discarded and returns [].
    public func commit() throws -> [Int] {
        try usable()
        abandonItem()  // an item without its ITEM_END is incomplete
        guard !stored.isEmpty else {
            discard()
            return []
        }
        finished = true
        let id = offer.offerID
        let target = store.depositDirectory(id)
        var moved = false
        defer { store.release(id) }
        do {
            try disk.writeNew(directory + "/offer.json", Array(try JSONEncoder().encode(DepositOfferFile(offer))))
            try disk.syncDirectory(directory)
            try disk.rename(directory, target)
            moved = true
            try disk.syncDirectory(store.depositsDirectory)
            let now = Date()
            let indices = storedIndices
            let row = DepositRow(
                offerId: id, senderFingerprint: try fingerprint(of: offer.senderKey, role: "sender"),
                senderKey: Data(offer.senderKey),
                recipientFingerprint: try fingerprint(of: offer.recipientKey, role: "recipient"),
                recipientKey: Data(offer.recipientKey),
                itemCount: indices.count, bytes: stored.values.reduce(0, +) + previewBytes,
                storedIndices: String(decoding: try JSONEncoder().encode(indices), as: UTF8.self),
                createdAt: now, expiresAt: now.addingTimeInterval(store.limits.expiry), damage: nil)
            try store.db.write { try row.insert($0) }
            return indices
        } catch {
            disk.removeTree(moved ? target : directory)
            if let e = error as? RelayError { throw e }
            throw RelayError(.io, .storageFailed, "cannot commit deposit \(id): \(error)")
        }
    }

    /// Stores the previews the OFFER announced (index -> the JPEG sealed to the recipient, which
    /// the relay cannot open; its length was checked against the announced size).
    public func storePreviews(_ previews: [Int: [UInt8]]) throws {
        try usable()
        for (index, sealed) in previews {
            try disk.writeNew(directory + "/" + RelayStore.previewFile(index), sealed)
            previewBytes += Int64(sealed.count)
        }
    }

    /// Drops the deposit and everything written for it.
    public func discard() {
        guard !finished else { return }
        finished = true
        current?.file.close()
        current = nil
        disk.removeTree(directory)
        store.release(offer.offerID)
    }

    private func usable() throws {
        guard !finished else {
            throw RelayError(
                .invalidDeposit, .internalError, "deposit \(offer.offerID) was already committed or discarded")
        }
    }
}
