import Foundation
import GRDB
import LocafotoFiles
import LocafotoWire

extension RelayStore {
    /// Item JSON files hold a few base64 fields and the metadata: far below this.
    static let maxItemFileBytes = 64 << 10

    /// The recipient's deposits waiting for delivery, oldest first. Expired and damaged ones are
    /// left out (a damaged deposit is marked and reported by `status()`; `expire` drops it).
    public func deposits(for recipientKey: [UInt8], now: Date = Date()) throws -> [DepositRecord] {
        let recipient = try fingerprint(of: recipientKey, role: "recipient")
        let rows = try db.read { db in
            try DepositRow.filter(
                Column("recipientFingerprint") == recipient && Column("expiresAt") > now && Column("damage") == nil
            )
            .order(Column("createdAt"), Column("rowid")).fetchAll(db)
        }
        return try rows.compactMap { row in
            do {
                return try record(row)
            } catch let e as RelayError where e.kind == .damaged {
                return nil
            }
        }
    }

    /// How many deposits wait for this recipient (the QUEUE count), without reading any file.
    public func queueLength(for recipientKey: [UInt8], now: Date = Date()) throws -> Int {
        let recipient = try fingerprint(of: recipientKey, role: "recipient")
        return try db.read { db in
            try DepositRow.filter(
                Column("recipientFingerprint") == recipient && Column("expiresAt") > now && Column("damage") == nil
            ).fetchCount(db)
        }
    }

    /// One deposit by offer id, whatever its state; nil when the relay does not hold it. Lets a
    /// session answer a re-sent deposit whose commit it already made.
    public func deposit(_ offerID: String) throws -> DepositRecord? {
        guard let row = try db.read({ try DepositRow.fetchOne($0, key: offerID) }) else { return nil }
        return try record(row)
    }

    /// Keys of the recipients with deliverable deposits, the longest-waiting first.
    public func recipientsWithQueue(now: Date = Date()) throws -> [[UInt8]] {
        try db.read { db in
            try Data.fetchAll(
                db,
                sql: """
                    SELECT recipientKey FROM deposit WHERE expiresAt > ? AND damage IS NULL
                    GROUP BY recipientKey ORDER BY MIN(createdAt)
                    """, arguments: [now])
        }.map { [UInt8]($0) }
    }

    /// The stored items of a deposit, in offer order, checked against what was committed.
    public func storedItems(_ offerID: String) throws -> [StoredItem] {
        guard let row = try db.read({ try DepositRow.fetchOne($0, key: offerID) }) else {
            throw RelayError(.notFound, .unknownOffer, "the relay holds no deposit \(offerID)")
        }
        let deposit = try record(row)
        return try damageChecked(row) {
            try deposit.storedIndices.map { try storedItem(deposit, $0) }
        }
    }

    private func storedItem(_ deposit: DepositRecord, _ index: Int) throws -> StoredItem {
        let dir = depositDirectory(deposit.offerID)
        let start = try decode(ItemStart.self, "\(dir)/\(index).start.json", limit: Self.maxItemFileBytes)
        let end = try decode(ItemEnd.self, "\(dir)/\(index).end.json", limit: Self.maxItemFileBytes)
        guard start.offer == deposit.offerID, start.item == index, end.offer == deposit.offerID, end.item == index
        else {
            throw RelayError(
                .damaged, .storageFailed, "the files of item \(index) in \(dir) name another offer or item")
        }
        let size = deposit.items[index].size
        let data = "\(dir)/\(index).data"
        guard let actual = disk.regularFileSize(data) else {
            throw RelayError(.damaged, .storageFailed, "\(data) is missing or not a regular file")
        }
        guard actual == size else {
            throw RelayError(.damaged, .storageFailed, "\(data) has \(actual) bytes, \(size) were stored")
        }
        return StoredItem(index: index, start: start, end: end, ciphertextPath: data, ciphertextSize: size)
    }

    /// The row plus its offer.json, cross-checked. Unreadable files mark the deposit damaged.
    func record(_ row: DepositRow) throws -> DepositRecord {
        try damageChecked(row) {
            let path = depositDirectory(row.offerId) + "/offer.json"
            let offer = try decode(DepositOfferFile.self, path, limit: DepositOfferFile.maxBytes)
            guard offer.v == DepositOfferFile.currentVersion else {
                throw RelayError(
                    .damaged, .storageFailed,
                    "\(path) has version \(offer.v); this relay reads version \(DepositOfferFile.currentVersion)")
            }
            let deposit = offer.deposit
            do { try deposit.validate() } catch let e as RelayError {
                throw RelayError(.damaged, .storageFailed, "\(path) holds an invalid offer: \(e.message)")
            }
            let indices = (try? JSONDecoder().decode([Int].self, from: Data(row.storedIndices.utf8))) ?? []
            guard deposit.offerID == row.offerId, deposit.senderKey == [UInt8](row.senderKey),
                deposit.recipientKey == [UInt8](row.recipientKey), !indices.isEmpty,
                indices.allSatisfy({ deposit.items.indices.contains($0) })
            else {
                throw RelayError(.damaged, .storageFailed, "\(path) does not match the deposit the relay committed")
            }
            return DepositRecord(
                offer: deposit, createdAt: row.createdAt, expiresAt: row.expiresAt, storedIndices: indices,
                storedBytes: row.bytes)
        }
    }

    /// Runs `body`; a `damaged` error marks the deposit (out of the queue, shown by `status()`)
    /// and is rethrown with what happens next.
    private func damageChecked<T>(_ row: DepositRow, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RelayError where e.kind == .damaged {
            try? db.write { db in
                try db.execute(
                    sql: "UPDATE deposit SET damage = ? WHERE offerId = ?", arguments: [e.message, row.offerId])
            }
            throw RelayError(
                .damaged, .storageFailed,
                "deposit \(row.offerId) is damaged: \(e.message). It is out of the queue and will be dropped at its expiry, when its sender gets an `expired` receipt; check the disk under \(directory)"
            )
        }
    }

    /// Decodes a bounded JSON file; content that does not decode is `damaged`, naming the file.
    private func decode<T: Decodable>(_ type: T.Type, _ path: String, limit: Int) throws -> T {
        let bytes = try disk.readBounded(path, limit: limit)
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw RelayError(
                .damaged, .storageFailed, "\(path) is not valid (truncated or corrupted: \(Self.describe(error)))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let c): c.debugDescription
        case DecodingError.keyNotFound(let k, _): "missing field '\(k.stringValue)'"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "\(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
        case let e as WireError: e.message
        default: "\(error)"
        }
    }
}
