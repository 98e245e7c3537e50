import Foundation
import LocafotoCrypto
import LocafotoFiles
import LocafotoWire
import Testing

@testable import LocafotoRelay

/// Damaged or planted files under deposits/ are reported with the file and what happens next;
/// the other deposits keep flowing.
@Suite("Relay storage damage")
struct HostileStorageTests {
    let alice = SigningKey.generate(), bob = SigningKey.generate()

    private func write(_ path: String, _ bytes: [UInt8]) throws {
        try? FileManager.default.removeItem(atPath: path)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("truncated offer.json: reported, skipped in the queue, shown in status, dropped at expiry")
    func truncatedOffer() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (damaged, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100])
        let (fine, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100])
        let path = dir.relay + "/deposits/" + damaged.offerID + "/offer.json"
        let original = try disk.readBounded(path, limit: 1 << 20)
        try write(path, Array(original.prefix(original.count / 2)))

        let e = Relay.expectError { _ = try store.deposit(damaged.offerID) }
        #expect(e?.kind == .damaged)
        #expect(e?.message.contains("offer.json is not valid (truncated or corrupted") == true)
        #expect(e?.message.contains("expiry") == true)
        #expect(try store.deposits(for: bob.publicKey.bytes).map(\.offerID) == [fine.offerID])
        let status = try store.status()
        #expect(status.damaged.map(\.offer) == [damaged.offerID])
        #expect(status.damaged.first?.problem.contains("offer.json") == true)
        #expect(status.totals.offers == 2)  // it still takes space until it expires

        #expect(try store.expire(now: Date().addingTimeInterval(8 * RelayLimits.day)) == 2)
        #expect(try store.receipts(forSender: alice.publicKey.bytes).receipts.map(\.state) == [.expired, .expired])
    }

    @Test("corrupted, oversized, planted and mismatched files are damage, not crashes")
    func corruptedFiles() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        func deposit() throws -> String {
            let (offer, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100])
            return dir.relay + "/deposits/" + offer.offerID
        }
        func expectDamaged(_ d: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let id = String(d.split(separator: "/").last!)
            let e = Relay.expectError(sourceLocation) {
                _ = try store.deposit(id)
                _ = try store.storedItems(id)
            }
            #expect(e?.kind == .damaged, sourceLocation: sourceLocation)
            #expect(e?.message.contains(fragment) == true, "\(e?.message ?? "")", sourceLocation: sourceLocation)
        }

        let garbage = try deposit()
        try write(garbage + "/offer.json", (0..<500).map { UInt8(truncatingIfNeeded: $0 * 7) })
        expectDamaged(garbage, "truncated or corrupted")

        let huge = try deposit()
        try write(huge + "/offer.json", [UInt8](repeating: 0x20, count: DepositOfferFile.maxBytes + 1))
        expectDamaged(huge, "more than the 8.0 MiB")

        let planted = try deposit()
        try FileManager.default.removeItem(atPath: planted + "/offer.json")
        try FileManager.default.createSymbolicLink(atPath: planted + "/offer.json", withDestinationPath: "/etc/passwd")
        expectDamaged(planted, "offer.json")

        let swapped = try deposit()
        let other = try deposit()
        try FileManager.default.removeItem(atPath: swapped + "/offer.json")
        try FileManager.default.copyItem(atPath: other + "/offer.json", toPath: swapped + "/offer.json")
        expectDamaged(swapped, "does not match the deposit")

        let badStart = try deposit()
        try write(badStart + "/0.start.json", Array(#"{"offer": 1"#.utf8))
        expectDamaged(badStart, "0.start.json is not valid")

        let badBase64 = try deposit()
        var end = try String(contentsOfFile: badBase64 + "/0.end.json", encoding: .utf8)
        end = end.replacingOccurrences(of: #""authTag":""#, with: #""authTag":"!!"#)
        try write(badBase64 + "/0.end.json", Array(end.utf8))
        expectDamaged(badBase64, "0.end.json is not valid")

        let short = try deposit()
        try write(short + "/0.data", [1, 2, 3])
        expectDamaged(short, "has 3 bytes, 100 were stored")

        // Truncated after the item was opened for delivery: the reader says so.
        let item = try #require(try store.storedItems(String(other.split(separator: "/").last!)).first)
        let reader = try item.openCiphertext()
        #expect(truncate(other + "/0.data", 0) == 0)  // in place: the reader has this inode open
        #expect(Relay.expectError { _ = try reader.read(upTo: 1000) }?.message.contains("truncated") == true)
        #expect(Relay.expectError { _ = try item.openCiphertext() }?.kind == .damaged)
        expectDamaged(other, "has 0 bytes, 100 were stored")

        #expect(try store.status().damaged.count == 8)
        #expect(try store.deposits(for: bob.publicKey.bytes).isEmpty)
    }
}
