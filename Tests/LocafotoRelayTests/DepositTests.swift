import Foundation
import LocafotoCrypto
import LocafotoFiles
import LocafotoFormats
import LocafotoWire
import Testing

@testable import LocafotoRelay

@Suite("Relay deposits")
struct DepositTests {
    let alice = SigningKey.generate(), bob = SigningKey.generate(), carol = SigningKey.generate()

    @Test("a committed deposit survives reopening with identical bytes, headers and offer")
    func commitAndReopen() throws {
        let dir = try TempDirectory()
        let offer: DepositOffer
        let items: [SealedItem]
        let before: DepositRecord
        do {
            let store = try RelayStore(directory: dir.relay, admission: .open)
            (offer, items) = try Relay.deposit(store, from: alice, to: bob, sizes: [5000, 0, 70_001])
            before = try #require(try store.deposits(for: bob.publicKey.bytes).first)
        }
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let queued = try store.deposits(for: bob.publicKey.bytes)
        #expect(queued == [before])
        let record = try #require(queued.first)
        #expect(record.offerID == offer.offerID)
        #expect(record.senderKey == alice.publicKey.bytes && record.recipientKey == bob.publicKey.bytes)
        #expect(record.senderName == "alice")
        #expect(record.items == offer.items && record.totalBytes == 75_001)
        #expect(record.offerSignature == offer.offerSignature)
        #expect(record.storedIndices == [0, 1, 2] && record.storedBytes == 75_001)
        #expect(abs(record.expiresAt.timeIntervalSince(record.createdAt) - 7 * RelayLimits.day) < 1)
        #expect(try store.recipientsWithQueue() == [bob.publicKey.bytes])
        #expect(
            try store.queueLength(for: bob.publicKey.bytes) == 1 && store.queueLength(for: carol.publicKey.bytes) == 0)
        #expect(try store.deposits(for: alice.publicKey.bytes).isEmpty)

        let stored = try store.storedItems(offer.offerID)
        #expect(stored.map(\.index) == [0, 1, 2])
        for (s, item) in zip(stored, items) {
            #expect(s.start == item.start && s.end == item.end)
            #expect(s.ciphertextSize == Int64(item.ciphertext.count))
            #expect(try Relay.ciphertext(s) == item.ciphertext)
        }
        // Resume: reading from an offset gives the rest.
        #expect(try Relay.ciphertext(stored[2], from: 65_024) == Array(items[2].ciphertext[65_024...]))
        #expect(Relay.expectError { _ = try stored[0].openCiphertext(at: 5001) }?.code == .protocolViolation)

        // The relay stores exactly what a recipient needs to verify the bundle itself.
        let header = BundleHeader(
            photoID: stored[0].start.photo, algorithm: .chacha20poly1305, iv: stored[0].start.iv.bytes,
            encryptedKey: stored[0].start.encryptedKey.bytes, authTag: stored[0].end.authTag.bytes,
            metadata: stored[0].start.metadata, sender: alice.publicKey, recipient: bob.publicKey,
            signature: stored[0].end.signature.bytes)
        let opener = try BundleOpener(
            algorithm: .chacha20poly1305, iv: header.iv, encryptedKey: header.encryptedKey,
            recipientPublicKey: bob.publicKey, recipient: bob)
        var plain = try Relay.ciphertext(stored[0])
        plain.withUnsafeMutableBytes { opener.decrypt($0) }
        _ = try opener.finish(header: header)
        #expect(plain == (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    @Test("files are 0600 and directories 0700")
    func permissions() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (offer, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100])
        let deposit = dir.relay + "/deposits/" + offer.offerID
        for d in [dir.relay, dir.relay + "/deposits", dir.relay + "/partial", deposit] {
            #expect(Relay.mode(d) == 0o700, "\(d)")
        }
        for f in disk.list(deposit).map({ deposit + "/" + $0 }) + [dir.relay + "/relay.sqlite"] {
            #expect(Relay.mode(f) == 0o600, "\(f)")
        }
        #expect(Set(disk.list(deposit)) == ["offer.json", "0.start.json", "0.data", "0.end.json"])
    }

    @Test("partial deposits, orphans and rows without files do not survive reopening")
    func crashRecovery() throws {
        let dir = try TempDirectory()
        var held: DepositOffer
        var vanishing: DepositOffer
        do {
            let store = try RelayStore(directory: dir.relay, admission: .open)
            (held, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [100])
            (vanishing, _) = try Relay.deposit(store, from: alice, to: carol, sizes: [100])

            // discard() and a writer dropped without commit both leave nothing behind.
            let (o1, items1) = try Relay.offer(from: alice, to: bob, sizes: [300])
            let w1 = try store.beginDeposit(o1)
            try Relay.send(items1[0], to: w1)
            w1.discard()
            #expect(
                Relay.expectError { _ = try w1.commit() }?.message.contains("already committed or discarded") == true)
            do {
                let (o2, items2) = try Relay.offer(from: alice, to: bob, sizes: [300])
                let w2 = try store.beginDeposit(o2)
                try Relay.send(items2[0], to: w2)
            }
            #expect(disk.list(dir.relay + "/partial").isEmpty)
            #expect(
                try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 0)
                    == .accepted)
        }
        // What a crash leaves: a half-written deposit, a renamed directory whose row was never
        // inserted, and a row whose directory was lost.
        let partial = dir.relay + "/partial/" + Relay.lowerUUID()
        try FileManager.default.createDirectory(atPath: partial, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: partial + "/0.data"))
        let orphan = dir.relay + "/deposits/" + Relay.lowerUUID()
        try FileManager.default.createDirectory(atPath: orphan, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: orphan + "/offer.json"))
        try Data("stray".utf8).write(to: URL(fileURLWithPath: dir.relay + "/deposits/stray-file"))
        // Cleanup removes links, never what they point to.
        let outside = dir.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: outside + "/keep"))
        try FileManager.default.createSymbolicLink(atPath: partial + "/link", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(
            atPath: dir.relay + "/deposits/" + Relay.lowerUUID(), withDestinationPath: outside)
        try FileManager.default.removeItem(atPath: dir.relay + "/deposits/" + vanishing.offerID)

        let store = try RelayStore(directory: dir.relay, admission: .open)
        #expect(disk.list(dir.relay + "/partial").isEmpty)
        #expect(disk.list(dir.relay + "/deposits") == [held.offerID])
        #expect(try store.deposits(for: bob.publicKey.bytes).map(\.offerID) == [held.offerID])
        #expect(try store.deposits(for: carol.publicKey.bytes).isEmpty)
        #expect(try store.deposit(vanishing.offerID) == nil)
        let status = try store.status()
        #expect(status.lost == 1 && status.totals.offers == 1)
        #expect(disk.list(outside) == ["keep"])
    }

    @Test("concurrent deposits cannot overshoot the quotas together")
    func concurrentDeposits() async throws {
        let dir = try TempDirectory()
        let limits = RelayLimits(maxItemsPerSender: 100, maxItemsTotal: 5)
        let store = try RelayStore(directory: dir.relay, limits: limits, admission: .open)
        let senders = (0..<12).map { _ in SigningKey.generate() }
        let recipient = bob
        let committed = await withTaskGroup(of: Bool.self) { group in
            for sender in senders {
                group.addTask {
                    do {
                        let (offer, items) = try Relay.offer(from: sender, to: recipient, sizes: [2000])
                        let writer = try store.beginDeposit(offer)
                        try Relay.send(items[0], to: writer, chunk: 100)
                        return try writer.commit() == [0]
                    } catch let e as RelayError {
                        #expect(e.code == .tooLarge)
                        return false
                    } catch {
                        Issue.record("\(error)")
                        return false
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(committed == 5)
        #expect(try store.deposits(for: bob.publicKey.bytes).count == 5)
        #expect(try store.status().refusals["quota-total"] == 7)
    }

    @Test("one store per directory")
    func exclusive() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        #expect(
            Relay.expectError { _ = try RelayStore(directory: dir.relay, admission: .open) }?.message.contains(
                "another relay is using") == true)
        _ = store
    }

    @Test(
        "bad signature, altered tag, wrong recipient in the signing input, wrong lengths: the item is refused and dropped"
    )
    func signatureChecks() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (offer, items) = try Relay.offer(from: alice, to: bob, sizes: [100, 200, 300, 400, 500, 600])
        let writer = try store.beginDeposit(offer)
        let partial = dir.relay + "/partial/" + offer.offerID

        var forged = items[0]
        forged.end.signature.bytes[10] ^= 1
        var altered = items[1]
        altered.end.authTag.bytes[0] ^= 0x80
        // Sealed and signed for carol, deposited as an item for bob.
        var misaddressed = try Relay.seal(
            offer: offer.offerID, index: 2, from: alice, to: bob.publicKey, size: 300, signedFor: carol.publicKey)
        misaddressed.offered = items[2].offered
        misaddressed.start.metadata.name = items[2].offered.name
        for bad in [forged, altered, misaddressed] {
            let e = Relay.expectError { try Relay.send(bad, to: writer) }
            #expect(e?.kind == .badSignature && e?.code == .badSignature)
            #expect(e?.message.contains("does not verify") == true)
            #expect(!disk.list(partial).contains { $0.hasPrefix("\(bad.start.item).") })
        }
        // messages.md ITEM_END: a 15-byte tag or a 63-byte signature fails the item as a
        // signature that does not verify (as protocol/vectors/wire-messages.json "itemFails").
        var shortTag = items[4]
        shortTag.end.authTag.bytes.removeLast()
        var shortSignature = items[5]
        shortSignature.end.signature.bytes.removeLast()
        for bad in [shortTag, shortSignature] {
            let e = Relay.expectError { try Relay.send(bad, to: writer) }
            #expect(e?.kind == .badSignature && e?.code == .badSignature, "\(e?.message ?? "")")
            #expect(!disk.list(partial).contains { $0.hasPrefix("\(bad.start.item).") })
        }
        // A failed item is not sent twice; the rest of the deposit goes on.
        #expect(Relay.expectError { try Relay.send(items[0], to: writer) }?.message.contains("already sent") == true)
        try Relay.send(items[3], to: writer)
        #expect(try writer.commit() == [3])
        #expect(try store.storedItems(offer.offerID).map(\.index) == [3])
        #expect(try store.deposits(for: bob.publicKey.bytes).first?.storedBytes == 400)
        #expect(try store.status().refusals["bad-signature"] == 5)
    }

    @Test("sizes are enforced: oversize appends, short items, mismatched headers")
    func sizes() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (offer, items) = try Relay.offer(from: alice, to: bob, sizes: [1000, 1000, 1000, 1000])
        let writer = try store.beginDeposit(offer)
        let partial = dir.relay + "/partial/" + offer.offerID

        try writer.begin(index: 0, start: items[0].start)
        try writer.append(Array(items[0].ciphertext[0..<600]))
        let over = Relay.expectError { try writer.append(Array(items[0].ciphertext[0..<600])) }
        #expect(over?.code == .sizeMismatch && over?.message.contains("more than the 1000 bytes offered") == true)
        #expect(!disk.list(partial).contains("0.data"))
        #expect(Relay.expectError { try writer.append([1]) }?.message.contains("outside an item") == true)

        try writer.begin(index: 1, start: items[1].start)
        try writer.append(Array(items[1].ciphertext[0..<999]))
        #expect(
            Relay.expectError { try writer.end(items[1].end) }?.message.contains("ended after 999 of 1000 bytes")
                == true)

        var wrongSize = items[2].start
        wrongSize.metadata.originalSize = 999
        #expect(Relay.expectError { try writer.begin(index: 2, start: wrongSize) }?.code == .sizeMismatch)
        var resumed = items[3].start
        resumed.offset = 10
        #expect(Relay.expectError { try writer.begin(index: 3, start: resumed) }?.message.contains("offset 0") == true)
        #expect(
            Relay.expectError { try writer.begin(index: 4, start: items[3].start) }?.message.contains("no item 4")
                == true)

        // Nothing stored: commit discards the deposit.
        #expect(try writer.commit() == [])
        #expect(disk.list(dir.relay + "/partial").isEmpty && disk.list(dir.relay + "/deposits").isEmpty)
        #expect(try store.deposit(offer.offerID) == nil)
        #expect(try store.status().refusals["bad-item"] == 4)
    }

    @Test("an item without its ITEM_END is left out at commit")
    func unfinishedItem() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        let (offer, items) = try Relay.offer(from: alice, to: bob, sizes: [10, 20])
        let writer = try store.beginDeposit(offer)
        try Relay.send(items[0], to: writer)
        try writer.begin(index: 1, start: items[1].start)
        try writer.append(items[1].ciphertext)
        #expect(try writer.commit() == [0])
        #expect(
            Set(disk.list(dir.relay + "/deposits/" + offer.offerID)) == [
                "offer.json", "0.start.json", "0.data", "0.end.json",
            ])
    }
}
