import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoSession
import LocafotoVault
import LocafotoWire
import Logging
import Synchronization

/// Takes verified items into the vault, or keeps them sealed in the spool while it is locked,
/// and imports what waited once it can (unlock, a `.lfs` key imported). The receiving path
/// ends here and goes on only into the vault and the inbox records: `IncomingReceipt` →
/// `Importer` → `Vault`, `AgentStore`.
package struct Importer: Sendable {
    package let store: AgentStore
    package let identity: Identity
    package let vaults: VaultHandle
    package let spoolDirectory: String
    package let logger: Logger
    /// Where a committed JPEG's head waits for the media indexer.
    package let mediaHeads: MediaHeads

    package init(
        store: AgentStore, identity: Identity, vaults: VaultHandle, spoolDirectory: String, logger: Logger,
        mediaHeads: MediaHeads
    ) {
        self.store = store
        self.identity = identity
        self.vaults = vaults
        self.spoolDirectory = spoolDirectory
        self.logger = logger
        self.mediaHeads = mediaHeads
    }

    /// Where a verified item goes: a photo for an unlocked vault is made durable and waits for
    /// the receipt's next group commit (`pending`); anything else is settled at once.
    package enum Placement {
        case pending(ReceivedPhoto, Vault)
        case settled(ItemResult)
    }

    /// Prepares a verified photo for the vault, or queues the item (still sealed to this node)
    /// while the vault is locked. A `.lfs` item is opened with the vault's key of its name, or
    /// waits for it.
    package func place(
        _ item: VerifiedItem, offer: String, index: Int, offeredName: String, peer: PeerIdentity
    ) throws -> Placement {
        let meta = item.header.metadata
        if let v = try? vaults.vault(), v.isUnlocked {
            if let keyName = item.lfsKeyName {
                return .settled(
                    try commitLFS(
                        spool: item.spoolPath, header: item.header, photoKey: item.photoKey, keyName: keyName,
                        name: offeredName,
                        sender: peer.name, vault: v, offer: offer, index: index))
            }
            // Content the vault holds already is not stored again (as `import` skips it): the
            // item was verified, its result names the photo there, and the sender is told.
            if let existing = try v.photo(withContentHash: item.contentHash) {
                unlink(item.spoolPath)
                try store.recordItems(offer, receiving: [], imported: [(index, existing.id)])
                logger.info(
                    "offer \(offer.prefix(8)): '\(offeredName)' is already in the vault as \(existing.id.prefix(8)); not stored again"
                )
                return .settled(
                    ItemResult(
                        offer: offer, item: index, status: .imported, message: "already in the vault",
                        photo: existing.id, duplicate: true))
            }
            let photo = try v.prepareReceived(
                spoolPath: item.spoolPath, photoKey: item.photoKey, algorithm: item.header.algorithm,
                nonce: item.header.iv,
                originalSize: meta.originalSize, contentHash: item.contentHash, format: item.contentType!,
                name: meta.name ?? offeredName,
                captureDate: meta.captureDateValue, width: meta.width, height: meta.height,
                senderFingerprint: peer.fingerprint.description, senderName: peer.name)
            return .pending(photo, v)
        }
        try fsyncFile(item.spoolPath)  // the queue must survive a crash as much as the vault would
        let header = try LocaphotoFile.encode(item.header, encryptedData: nil)
        let kind = item.contentType?.rawValue ?? ItemKind.lfs
        try store.updateItem(offer, index) {
            $0.status = .queued
            $0.kind = kind
            $0.hash = Hex.encode(item.contentHash)  // not in the offer when the sender left it to us (late-hash)
            $0.spoolPath = item.spoolPath
            $0.bundleHeader = header
        }
        return .settled(
            ItemResult(
                offer: offer, item: index, status: .queued,
                message: "the recipient's vault is locked; it will be imported on unlock"))
    }

    /// Commits photos `place` left pending to `vault` in one transaction, then records them in
    /// the inbox (with `receiving`: items whose start is not recorded yet) in one transaction,
    /// and hands their heads to the media indexer. Throws when the vault's commit fails, and then
    /// nothing of the batch remains; the records, in the order of `photos`, once it is durable.
    package func commit(
        _ photos: [(index: Int, photo: ReceivedPhoto, head: PhotoHead?)], to vault: Vault, offer: String,
        receiving: [(idx: Int, startJSON: Data)]
    ) throws -> [PhotoRecord] {
        let records = try vault.commitReceived(photos.map(\.photo))
        do {
            try store.recordItems(offer, receiving: receiving, imported: zip(photos, records).map { ($0.index, $1.id) })
        } catch {
            // The photos are in the vault: they are reported imported; only the inbox record lags.
            logger.error(
                "offer \(offer.prefix(8)): \(photos.count) photo(s) imported but not recorded in the inbox: \(error)")
        }
        for (entry, record) in zip(photos, records) {
            if let head = entry.head { mediaHeads.keep(head, for: record.id) }
        }
        return records
    }

    /// Opens a received `.lfs` file with the vault's key of its name. Without that key the item
    /// waits in the inbox ("needs key NAME"), still sealed to this node, until the key is imported.
    private func commitLFS(
        spool: String, header: BundleHeader, photoKey: SecretBytes, keyName: String, name: String, sender: String?,
        vault: Vault,
        offer: String, index: Int
    ) throws -> ItemResult {
        var lfs = try openSpool(spool, header: header, key: photoKey)
        defer { secureZero(&lfs) }
        do {
            let record = try vault.importLFS(
                lfs, fileName: name, senderFingerprint: Fingerprint(publicKey: header.sender).description,
                senderName: sender)
            unlink(spool)
            try store.recordItems(offer, receiving: [], imported: [(index, record.id)])
            return ItemResult(offer: offer, item: index, status: .imported, photo: record.id)
        } catch let e as VaultError where e.code == .unknownKey {
            try fsyncFile(spool)
            let encoded = try LocaphotoFile.encode(header, encryptedData: nil)
            let message = "needs key '\(keyName)'"
            try store.updateItem(offer, index) {
                $0.status = .needsKey
                $0.kind = ItemKind.lfs
                $0.spoolPath = spool
                $0.bundleHeader = encoded
                $0.errorMessage = message
            }
            return ItemResult(
                offer: offer, item: index, status: .queued,
                message:
                    "the recipient needs the key '\(keyName)' to open this .lfs file; it waits in their inbox until then"
            )
        }
    }

    /// The plaintext of a verified spool file (64 placeholder bytes, ciphertext, tag).
    private func openSpool(_ path: String, header: BundleHeader, key: SecretBytes) throws -> [UInt8] {
        let n = Int(header.metadata.originalSize)
        guard let data = FileManager.default.contents(atPath: path),
            data.count == LOCAHeader.length + n + LOCAHeader.tagLength
        else {
            throw AgentError(.corrupt, "the spooled item \(path) is missing or has the wrong size")
        }
        let bytes = [UInt8](data)
        return try AEAD.open(
            header.algorithm, key: key, nonce: header.iv,
            ciphertext: bytes[LOCAHeader.length..<(LOCAHeader.length + n)],
            tag: Array(bytes[(LOCAHeader.length + n)...]))
    }

    /// Imports what waits: items received while the vault was locked, and `.lfs` items whose key
    /// is now known. Returns how many were imported.
    package func importQueued() -> Int {
        guard let queued = try? store.queuedItems(), !queued.isEmpty, let v = try? vaults.vault(), v.isUnlocked else {
            return 0
        }
        var imported = 0
        for q in queued {
            do {
                guard let data = q.bundleHeader, let path = q.spoolPath, let hash = Hex.decode(q.hash) else {
                    throw AgentError(.corrupt, "queued item record is incomplete")
                }
                let (header, _) = try LocaphotoFile.decode(data, requireData: false)
                let key = try SealedBox.open(header.encryptedKey, with: identity.agreementKey)
                let sender = try store.offer(q.offerId)
                if q.kind == ItemKind.lfs {
                    let name = header.metadata.name ?? q.name
                    let keyName =
                        (try? LFSFile.keyName(
                            of: try openSpool(path, header: header, key: key).prefix(LFSFile.headerLength))) ?? ""
                    let r = try commitLFS(
                        spool: path, header: header, photoKey: key, keyName: keyName, name: name,
                        sender: sender?.senderName, vault: v,
                        offer: q.offerId, index: q.idx)
                    if r.status == .imported { imported += 1 }
                    continue
                }
                guard let kind = ContentType(rawValue: q.kind) else {
                    throw AgentError(.corrupt, "queued item has an unknown kind")
                }
                let record = try v.adoptReceived(
                    spoolPath: path, photoKey: key, algorithm: header.algorithm, nonce: header.iv,
                    originalSize: header.metadata.originalSize, contentHash: hash, format: kind,
                    name: header.metadata.name ?? q.name,
                    captureDate: header.metadata.captureDateValue, width: header.metadata.width,
                    height: header.metadata.height,
                    senderFingerprint: Fingerprint(publicKey: header.sender).description, senderName: sender?.senderName
                )
                try store.recordItems(q.offerId, receiving: [], imported: [(q.idx, record.id)])
                imported += 1
            } catch {
                logger.error("could not import queued item \(q.name): \(error)")
                let message = "\(error)"
                if let spool = q.spoolPath { unlink(spool) }  // nothing of a refused item remains
                try? store.updateItem(q.offerId, q.idx) {
                    $0.status = .failed
                    $0.errorMessage = message
                    $0.spoolPath = nil
                    $0.bundleHeader = nil
                }
            }
        }
        if imported > 0 {
            logger.info("imported \(imported) item(s) that were waiting (locked vault or missing key)")
            store.checkpoint()  // their names leave the WAL too
        }
        return imported
    }
}
