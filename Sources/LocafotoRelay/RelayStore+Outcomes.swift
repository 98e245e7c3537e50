import Foundation
import GRDB
import LocafotoFiles
import LocafotoWire

extension RelayStore {
    /// Records the recipient's answer to a delivered deposit: the deposit leaves the relay
    /// (row, then files) and a receipt waits for its sender. `results` are the recipient's
    /// ITEM_RESULTs (may be empty for a rejection).
    @discardableResult
    public func recordDelivery(
        offerID: String, decision: DecisionKind, receipt: [UInt8]?, results: [ReceiptItem], at: Date = Date()
    ) throws -> ReceiptRecord {
        if let receipt, receipt.count != 64 {
            throw RelayError(
                .invalidDeposit, .badSignature, "a decision receipt is a 64-byte signature (got \(receipt.count) bytes)"
            )
        }
        let state: ReceiptState =
            switch decision {
            case .accepted: .delivered
            case .rejected: .rejected
            case .expired: .expired
            }
        let record = try db.write { db -> ReceiptRecord in
            guard let row = try DepositRow.fetchOne(db, key: offerID) else {
                throw RelayError(
                    .notFound, .unknownOffer, "the relay holds no deposit \(offerID) (already delivered or expired?)")
            }
            let stored = Set((try? JSONDecoder().decode([Int].self, from: Data(row.storedIndices.utf8))) ?? [])
            let items = try Self.checked(results, stored: stored)
            let record = ReceiptRecord(
                offerID: offerID, recipientKey: [UInt8](row.recipientKey), state: state, decision: decision.rawValue,
                receipt: receipt, items: items, at: at)
            _ = try row.delete(db)
            try Self.receiptRow(record, sender: row.senderFingerprint).save(db)
            try RelaySchema.bump(db, Counter.deliveries)
            if state == .rejected { try RelaySchema.bump(db, Counter.rejected) }
            return record
        }
        removeFiles(of: [offerID])
        return record
    }

    /// Indices unique and among the stored items; statuses short; messages capped (they come
    /// from the recipient and go to the sender).
    private static func checked(_ results: [ReceiptItem], stored: Set<Int>) throws -> [ReceiptItem] {
        var seen = Set<Int>()
        return try results.map { r in
            guard stored.contains(r.item), seen.insert(r.item).inserted else {
                throw RelayError(
                    .invalidDeposit, .protocolViolation,
                    "a result for item \(r.item), which the deposit does not hold or was already reported")
            }
            guard !r.status.isEmpty, r.status.utf8.count <= ReceiptItem.maxStatusBytes,
                r.status.utf8.allSatisfy({ (0x61...0x7a).contains($0) || $0 == UInt8(ascii: "_") })
            else {
                throw RelayError(
                    .invalidDeposit, .protocolViolation,
                    "item \(r.item): status must be 1...\(ReceiptItem.maxStatusBytes) lowercase letters or '_'")
            }
            var r = r
            r.message = r.message.map(Self.cap)
            return r
        }
    }

    /// Without control or format characters (escape sequences, bidi marks), at most 512 bytes.
    private static func cap(_ s: String) -> String {
        let clean = String(
            String.UnicodeScalarView(
                s.unicodeScalars.filter {
                    $0.properties.generalCategory != .control && $0.properties.generalCategory != .format
                }))
        var out = ""
        for ch in clean {
            guard out.utf8.count + String(ch).utf8.count <= ReceiptItem.maxMessageBytes else { break }
            out.append(ch)
        }
        return out
    }

    /// Receipts for this sender, oldest first; `more` when there are others after `limit`.
    /// They stay until `acknowledgeReceipts` (after RECEIPTS was sent) or their retention ends.
    public func receipts(forSender key: [UInt8], limit: Int = 100) throws -> (receipts: [ReceiptRecord], more: Bool) {
        let sender = try fingerprint(of: key, role: "sender")
        let n = min(max(limit, 1), 1000)
        let rows = try db.read { db in
            try ReceiptRow.filter(Column("senderFingerprint") == sender).order(Column("at"), Column("rowid")).limit(
                n + 1
            ).fetchAll(db)
        }
        return (try rows.prefix(n).map(Self.record), rows.count > n)
    }

    /// Forgets receipts the sender has been sent; returns how many were removed.
    @discardableResult
    public func acknowledgeReceipts(forSender key: [UInt8], offerIDs: [String]) throws -> Int {
        let sender = try fingerprint(of: key, role: "sender")
        return try db.write { db in
            try ReceiptRow.filter(Column("senderFingerprint") == sender && offerIDs.contains(Column("offerId")))
                .deleteAll(db)
        }
    }

    /// Drops deposits past their expiry (each leaves an `expired` receipt, its items `failed`
    /// with code `expired`) and receipts older than the retention. Returns the deposits dropped.
    @discardableResult
    public func expire(now: Date = Date()) throws -> Int {
        let days = Int((limits.expiry / RelayLimits.day).rounded())
        let ids = try db.write { db -> [String] in
            let due = try DepositRow.filter(Column("expiresAt") <= now).fetchAll(db)
            for row in due {
                let indices = (try? JSONDecoder().decode([Int].self, from: Data(row.storedIndices.utf8))) ?? []
                let items = indices.map {
                    ReceiptItem(
                        item: $0, status: "failed", code: WireErrorCode.expired.rawValue,
                        message:
                            "the recipient did not collect it from the relay within \(days) day\(days == 1 ? "" : "s")")
                }
                let record = ReceiptRecord(
                    offerID: row.offerId, recipientKey: [UInt8](row.recipientKey), state: .expired, decision: nil,
                    receipt: nil, items: items, at: now)
                _ = try row.delete(db)
                try Self.receiptRow(record, sender: row.senderFingerprint).save(db)
            }
            if !due.isEmpty { try RelaySchema.bump(db, Counter.expired, by: due.count) }
            try ReceiptRow.filter(Column("at") < now.addingTimeInterval(-limits.receiptRetention)).deleteAll(db)
            return due.map(\.offerId)
        }
        removeFiles(of: ids)
        return ids.count
    }

    /// After the rows are gone: a failure here leaves orphans, which the next open removes.
    private func removeFiles(of offerIDs: [String]) {
        guard !offerIDs.isEmpty else { return }
        for id in offerIDs { disk.removeTree(depositDirectory(id)) }
        try? disk.syncDirectory(depositsDirectory)
    }

    private static func receiptRow(_ r: ReceiptRecord, sender: String) throws -> ReceiptRow {
        ReceiptRow(
            offerId: r.offerID, senderFingerprint: sender, recipientKey: Data(r.recipientKey), state: r.state.rawValue,
            decision: r.decision, signature: r.receipt.map { Data($0) },
            items: String(decoding: try JSONEncoder().encode(r.items), as: UTF8.self), at: r.at)
    }

    private static func record(_ row: ReceiptRow) throws -> ReceiptRecord {
        // Rows are written only by this store; an unreadable one is reported, not guessed at.
        guard let state = ReceiptState(rawValue: row.state),
            let items = try? JSONDecoder().decode([ReceiptItem].self, from: Data(row.items.utf8))
        else {
            throw RelayError(
                .damaged, .storageFailed, "the receipt of offer \(row.offerId) in the relay database is unreadable")
        }
        return ReceiptRecord(
            offerID: row.offerId, recipientKey: [UInt8](row.recipientKey), state: state, decision: row.decision,
            receipt: row.signature.map { [UInt8]($0) }, items: items, at: row.at)
    }
}
