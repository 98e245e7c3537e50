import Foundation
import GRDB
import LocafotoCrypto
import LocafotoFiles
import LocafotoFormats
import LocafotoWire
import Synchronization

// On-disk layout of a relay directory (everything 0700 / 0600):
//
//   relay.sqlite (+ -wal, -shm)   deposit rows (the durability point), receipts, counters
//   relay.lock                    flock(2): one store per directory, so open-time cleanup never
//                                 deletes what another live store is writing
//   partial/<offer>/              deposits being written; wiped at every open (a deposit that
//                                 was not committed before a crash is discarded)
//   deposits/<offer>/             committed deposits; a directory counts only with its row
//     offer.json                  the DepositOffer: keys and offer signature (base64), items
//     <index>.start.json          the item's ITEM_START as received (photo id, algorithm, iv,
//                                 sealed photo key, metadata)
//     <index>.data                the ciphertext, exactly the offered size
//     <index>.end.json            the item's ITEM_END (AEAD tag, bundle signature)
//
// <offer> is the offer id, a lowercase UUID (validated before it becomes a path). Only items
// whose bundle signature verified have files. Commit order: files fsynced, directory renamed
// from partial/ to deposits/, deposits/ fsynced, then the row inserted; removal goes the other
// way (row first, files after), so a crash at any point leaves either a complete deposit or an
// orphan that the next open deletes.

/// The answer to a deposit request.
public enum Admission: Sendable, Equatable {
    case accepted
    /// Code and message for the DECISION `rejected`.
    case refused(WireErrorCode, String)
}

/// Why a deposit or an item was refused; counted for `status()`.
public enum RefusalReason: String, CaseIterable, Codable, Sendable {
    case policy
    case quotaSender = "quota-sender"
    case quotaTotal = "quota-total"
    case badSignature = "bad-signature"
    case badItem = "bad-item"
    /// The offer id is held, was handed on, or is being deposited by another session.
    case offerReused = "offer-reused"
    /// The relay could not store the deposit (disk full, permissions).
    case storage
}

/// The durable store of a store-and-forward relay: bundles sealed to recipients and signed by
/// senders. The relay never holds a key that opens them; it checks their public signatures.
/// Thread-safe: sessions on any thread may call it (each `DepositWriter` stays on one).
public final class RelayStore: Sendable {
    public let directory: String
    public let limits: RelayLimits
    public let admission: RelayAdmission
    let db: DatabasePool
    private let lockFD: Int32
    private let lockHeld = Mutex(true)
    /// Deposits being written, counted against the quotas until they commit or are discarded.
    let reservations = Mutex<[String: Reservation]>([:])

    struct Reservation {
        var senderFingerprint: String
        var items: Int
        var bytes: Int64
    }

    var partialDirectory: String { directory + "/partial" }
    var depositsDirectory: String { directory + "/deposits" }
    func depositDirectory(_ offerID: String) -> String { depositsDirectory + "/" + offerID }

    static func previewFile(_ index: Int) -> String { "preview-\(index)" }

    /// The sealed preview of item `index` of a held deposit, as the sender deposited it; nil
    /// when it has none or its file is unreadable (the offer then goes without its previews).
    public func preview(_ offerID: String, _ index: Int) -> [UInt8]? {
        try? disk.readBounded(
            depositDirectory(offerID) + "/" + Self.previewFile(index), limit: PreviewImage.maxBytes + SealedBox.overhead
        )
    }

    /// Opens (or creates) the relay directory and recovers from a crash: partial deposits,
    /// orphan deposit directories and rows whose files vanished are removed.
    public init(directory: String, limits: RelayLimits = RelayLimits(), admission: RelayAdmission) throws {
        try limits.validate()
        self.directory = directory
        self.limits = limits
        self.admission = admission
        try disk.makeDirectory(directory, tightening: true, followingLinks: false)
        lockFD = try Self.lock(directory + "/relay.lock")
        do {
            try disk.makeDirectory(directory + "/partial", tightening: true, followingLinks: false)
            try disk.makeDirectory(directory + "/deposits", tightening: true, followingLinks: false)
            do {
                db = try RelaySchema.open(path: directory + "/relay.sqlite")
            } catch {
                throw RelayError(
                    .io, .storageFailed,
                    "cannot open the relay database \(directory)/relay.sqlite: \(error). If the file is damaged, move the relay directory aside (deposits in it are lost)"
                )
            }
            try recover()
        } catch {
            Glibc.close(lockFD)
            throw error
        }
    }

    deinit {
        close()
    }

    /// Lets another store open this directory (the flock is released). Called when the relay
    /// stops; the store must not be used afterwards.
    public func close() {
        lockHeld.withLock { held in
            if held { Glibc.close(lockFD) }
            held = false
        }
    }

    private static func lock(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw disk.failed("create", path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(fd)
            throw RelayError(
                .io, .storageFailed,
                "another relay is using \(path.dropLast("/relay.lock".count)); stop it before starting this one")
        }
        return fd
    }

    private func recover() throws {
        for name in disk.list(partialDirectory) { disk.removeTree(partialDirectory + "/" + name) }
        let rows = Set(try db.read { try String.fetchAll($0, sql: "SELECT offerId FROM deposit") })
        for name in disk.list(depositsDirectory) {
            let path = depositDirectory(name)
            if !rows.contains(name) || !disk.isDirectory(path, followingLinks: false) { disk.removeTree(path) }
        }
        let vanished = rows.filter { !disk.isDirectory(depositDirectory($0), followingLinks: false) }
        if !vanished.isEmpty {
            try db.write { db in
                for id in vanished { _ = try DepositRow.deleteOne(db, key: id) }
                try RelaySchema.bump(db, Counter.lost, by: vanished.count)
            }
        }
        try disk.syncDirectory(partialDirectory)
        try disk.syncDirectory(depositsDirectory)
    }

    // MARK: admission

    /// Whether this sender may deposit `items` items of `bytes` bytes for `recipientKey` now.
    /// A refusal is counted by reason; its message names the limit and the numbers.
    public func admit(senderKey: [UInt8], recipientKey: [UInt8], items: Int, bytes: Int64) throws -> Admission {
        let sender = try fingerprint(of: senderKey, role: "sender")
        _ = try fingerprint(of: recipientKey, role: "recipient")
        guard items >= 1, bytes >= 0 else {
            throw RelayError(
                .invalidDeposit, .protocolViolation, "a deposit needs at least one item and a size of 0 bytes or more")
        }
        let refusal = try reservations.withLock { try check(sender: sender, items: items, bytes: bytes, reserved: $0) }
        guard let refusal else { return .accepted }
        try count(refusal.reason)
        return .refused(refusal.code, refusal.message)
    }

    struct Refusal {
        var reason: RefusalReason
        var code: WireErrorCode
        var message: String
    }

    /// Policy, then the sender's quotas, then the relay's. Called with the reservations locked,
    /// so the numbers cannot change between the check and a reservation.
    func check(sender: String, items: Int, bytes: Int64, reserved: [String: Reservation]) throws -> Refusal? {
        guard admission.admits(fingerprint: sender) else {
            return Refusal(
                reason: .policy, code: .refusedByPolicy,
                message:
                    "this relay only holds photos from senders on its allow-list, and \(sender) is not on it; the relay's operator can allow it by adding \(sender) to the relay's allow-list"
            )
        }
        let held = try db.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(itemCount), 0) AS ti, COALESCE(SUM(bytes), 0) AS tb,
                           COALESCE(SUM(CASE WHEN senderFingerprint = ? THEN itemCount END), 0) AS si,
                           COALESCE(SUM(CASE WHEN senderFingerprint = ? THEN bytes END), 0) AS sb
                    FROM deposit
                    """, arguments: [sender, sender])!
            return (
                senderItems: row["si"] as Int, senderBytes: row["sb"] as Int64, totalItems: row["ti"] as Int,
                totalBytes: row["tb"] as Int64
            )
        }
        var senderItems = held.senderItems
        var senderBytes = held.senderBytes
        var totalItems = held.totalItems
        var totalBytes = held.totalBytes
        for r in reserved.values {
            totalItems += r.items
            totalBytes += r.bytes
            if r.senderFingerprint == sender {
                senderItems += r.items
                senderBytes += r.bytes
            }
        }
        // The sender's quotas first, then the relay's; bytes before photos.
        struct Quota {
            let reason: RefusalReason, held: Int64, adds: Int64, limit: Int64, inBytes: Bool
        }
        let quotas = [
            Quota(reason: .quotaSender, held: senderBytes, adds: bytes, limit: limits.maxBytesPerSender, inBytes: true),
            Quota(
                reason: .quotaSender, held: Int64(senderItems), adds: Int64(items),
                limit: Int64(limits.maxItemsPerSender), inBytes: false),
            Quota(reason: .quotaTotal, held: totalBytes, adds: bytes, limit: limits.maxBytesTotal, inBytes: true),
            Quota(
                reason: .quotaTotal, held: Int64(totalItems), adds: Int64(items), limit: Int64(limits.maxItemsTotal),
                inBytes: false),
        ]
        for q in quotas where q.held + q.adds > q.limit {
            func amount(_ n: Int64) -> String { q.inBytes ? ByteCount.text(n) : "\(n)" }
            let limit = q.inBytes ? amount(q.limit) : "\(q.limit) photos"
            let offer = q.inBytes ? "needs" : "has"
            let (holder, place, then) =
                q.reason == .quotaSender
                ? (
                    "this sender may hold", "here",
                    "wait until the recipient collects what is already waiting, or send directly"
                )
                : ("this relay holds", "for all senders", "try again later or use another relay")
            return Refusal(
                reason: q.reason, code: .tooLarge,
                message:
                    "relay quota: \(holder) at most \(limit) \(place) (\(amount(q.held)) held, this offer \(offer) \(amount(q.adds))); \(then)"
            )
        }
        return nil
    }

    public func count(_ reason: RefusalReason) throws {
        try db.write { try RelaySchema.bump($0, Counter.refusal(reason)) }
    }
}

/// Counter names in the `counter` table.
enum Counter {
    static let deliveries = "deliveries"
    static let rejected = "rejected"
    static let expired = "expired"
    /// Deposits whose directory vanished while the relay was stopped.
    static let lost = "lost"
    static func refusal(_ r: RefusalReason) -> String { "refused." + r.rawValue }
}
