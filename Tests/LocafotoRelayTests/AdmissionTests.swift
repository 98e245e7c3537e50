import Foundation
import LocafotoCrypto
import LocafotoFiles
import LocafotoFormats
import LocafotoWire
import Testing

@testable import LocafotoRelay

@Suite("Relay admission and quotas")
struct AdmissionTests {
    let alice = SigningKey.generate(), bob = SigningKey.generate(), carol = SigningKey.generate()

    @Test("allow-lists are parsed and canonicalised; bad entries and contradictions are explained")
    func parsing() throws {
        let fp = Relay.fingerprint(alice)
        let typed = fp.lowercased().replacingOccurrences(of: "-", with: " ")
        #expect(try RelayAdmission.parse(open: false, allowed: [typed]) == .allowList([fp]))
        #expect(try RelayAdmission.parse(open: true, allowed: []) == .open)
        #expect(try RelayAdmission.parse(open: false, allowed: []).isRefusingEveryone)
        #expect(!RelayAdmission.open.isRefusingEveryone)

        var broken = Array(fp)
        broken[3] = broken[3] == "A" ? "B" : "A"
        let e = Relay.expectError { _ = try RelayAdmission.parse(open: false, allowed: [fp, String(broken)]) }
        #expect(e?.kind == .configuration)
        #expect(e?.message.contains("entry 2") == true)
        #expect(e?.message.contains("check character") == true)
        #expect(
            Relay.expectError { _ = try RelayAdmission.parse(open: true, allowed: [fp]) }?.message.contains(
                "choose one") == true)
    }

    @Test("an allow-list admits its senders only, and says how to allow the others")
    func allowList() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(
            directory: dir.relay, admission: .parse(open: false, allowed: [Relay.fingerprint(alice)]))
        #expect(
            try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 10)
                == .accepted)
        guard
            case .refused(let code, let message) = try store.admit(
                senderKey: carol.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 10)
        else {
            Issue.record("carol was admitted")
            return
        }
        #expect(code == .refusedByPolicy)
        #expect(message.contains(Relay.fingerprint(carol)))
        #expect(message.contains("allow-list"))
        // beginDeposit checks the same, so a session cannot skip `admit`.
        let (offer, _) = try Relay.offer(from: carol, to: bob, sizes: [10])
        #expect(Relay.expectError { _ = try store.beginDeposit(offer) }?.code == .refusedByPolicy)
        #expect(try store.status().refusals["policy"] == 2)

        let open = try RelayStore(directory: dir.path + "/open", admission: .open)
        #expect(
            try open.admit(senderKey: carol.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 10)
                == .accepted)
        #expect(try open.status().admission == "open")
        #expect(try store.status().allowed == 1)
    }

    @Test("per-sender quotas in bytes and items count held and in-flight deposits")
    func senderQuotas() throws {
        let dir = try TempDirectory()
        let limits = RelayLimits(
            maxBytesPerSender: 3000, maxItemsPerSender: 4, maxBytesTotal: 1 << 20, maxItemsTotal: 100)
        let store = try RelayStore(directory: dir.relay, limits: limits, admission: .open)
        try Relay.deposit(store, from: alice, to: bob, sizes: [1000, 1000])

        guard
            case .refused(let code, let message) = try store.admit(
                senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 1500)
        else {
            Issue.record("over the byte quota was admitted")
            return
        }
        #expect(code == .tooLarge)
        #expect(
            message.hasPrefix(
                "relay quota: this sender may hold at most 2.9 KiB here (1.9 KiB held, this offer needs 1.4 KiB)"))

        guard
            case .refused(_, let items) = try store.admit(
                senderKey: alice.publicKey.bytes, recipientKey: carol.publicKey.bytes, items: 3, bytes: 30)
        else {
            Issue.record("over the item quota was admitted")
            return
        }
        #expect(items.hasPrefix("relay quota: this sender may hold at most 4 photos here (2 held, this offer has 3)"))

        // Another sender is not affected by alice's quota.
        #expect(
            try store.admit(senderKey: carol.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 3, bytes: 2500)
                == .accepted)

        // A deposit being written counts until it commits or is discarded.
        let (pending, _) = try Relay.offer(from: alice, to: bob, sizes: [900])
        let writer = try store.beginDeposit(pending)
        #expect(
            try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 200)
                != .accepted)
        writer.discard()
        #expect(
            try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 200)
                == .accepted)
        #expect(try store.status().refusals["quota-sender"] == 3)
    }

    @Test("total quotas in bytes and items cover all senders")
    func totalQuotas() throws {
        let dir = try TempDirectory()
        let limits = RelayLimits(
            maxBytesPerSender: 1 << 20, maxItemsPerSender: 100, maxBytesTotal: 5000, maxItemsTotal: 3)
        let store = try RelayStore(directory: dir.relay, limits: limits, admission: .open)
        try Relay.deposit(store, from: alice, to: bob, sizes: [2000])
        try Relay.deposit(store, from: carol, to: bob, sizes: [2000])

        guard
            case .refused(let code, let bytes) = try store.admit(
                senderKey: bob.publicKey.bytes, recipientKey: alice.publicKey.bytes, items: 1, bytes: 1001)
        else {
            Issue.record("over the total byte quota was admitted")
            return
        }
        #expect(code == .tooLarge)
        #expect(
            bytes.hasPrefix(
                "relay quota: this relay holds at most 4.8 KiB for all senders (3.9 KiB held, this offer needs 1001 bytes)"
            ))

        guard
            case .refused(_, let items) = try store.admit(
                senderKey: bob.publicKey.bytes, recipientKey: alice.publicKey.bytes, items: 2, bytes: 10)
        else {
            Issue.record("over the total item quota was admitted")
            return
        }
        #expect(
            items.hasPrefix("relay quota: this relay holds at most 3 photos for all senders (2 held, this offer has 2)")
        )
        #expect(
            try store.admit(senderKey: bob.publicKey.bytes, recipientKey: alice.publicKey.bytes, items: 1, bytes: 1000)
                == .accepted)
        #expect(try store.status().refusals["quota-total"] == 2)
    }

    @Test("sealed previews count against the byte quotas, reserved at the offer and held after the commit")
    func previewsCount() throws {
        let dir = try TempDirectory()
        let limits = RelayLimits(
            maxBytesPerSender: 3000, maxItemsPerSender: 100, maxBytesTotal: 3500, maxItemsTotal: 100)
        let store = try RelayStore(directory: dir.relay, limits: limits, admission: .open)
        func withPreviews(_ offer: DepositOffer, size: Int, count: Int) -> DepositOffer {
            var o = offer
            for i in 0..<count {
                o.items[i].preview = PreviewInfo(size: size, hash: String(repeating: "cd", count: 32))
            }
            o.previewSignature = [UInt8](repeating: 1, count: 64)  // the session checks it, not the store
            return o
        }
        // 2000 bytes of items fit the sender's 3000; with two previews of 1000 bytes (sealed: 1048
        // each) they do not.
        let (plain, items) = try Relay.offer(from: alice, to: bob, sizes: [1000, 1000])
        let refused = Relay.expectError { _ = try store.beginDeposit(withPreviews(plain, size: 1000, count: 2)) }
        #expect(refused?.code == .tooLarge)
        #expect(
            refused?.message.hasPrefix(
                "relay quota: this sender may hold at most 2.9 KiB here (0 bytes held, this offer needs 4.0 KiB)")
                == true)

        // One preview of 900 bytes fits (2000 + 948): stored, and held once committed.
        let offer = withPreviews(plain, size: 900, count: 1)
        let writer = try store.beginDeposit(offer)
        try writer.storePreviews([0: [UInt8](repeating: 7, count: 900 + SealedBox.overhead)])
        for item in items { try Relay.send(item, to: writer) }
        #expect(try writer.commit() == [0, 1])
        #expect(try store.deposit(offer.offerID)?.storedBytes == 2948)
        // 52 bytes are left of alice's quota, 552 of the relay's.
        #expect(
            try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 53)
                != .accepted)
        #expect(
            try store.admit(senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1, bytes: 52)
                == .accepted)
        let (other, _) = try Relay.offer(from: carol, to: bob, sizes: [500])
        // 500 + 58 > 552
        let total = Relay.expectError { _ = try store.beginDeposit(withPreviews(other, size: 10, count: 1)) }
        #expect(total?.code == .tooLarge)
        #expect(
            total?.message.hasPrefix(
                "relay quota: this relay holds at most 3.4 KiB for all senders (2.8 KiB held, this offer needs 558 bytes)"
            ) == true)
        #expect(try store.status().refusals["quota-sender"] == 2 && store.status().refusals["quota-total"] == 1)
    }

    @Test("refusal messages with the default limits read in GiB")
    func defaultLimitMessage() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        guard
            case .refused(_, let m) = try store.admit(
                senderKey: alice.publicKey.bytes, recipientKey: bob.publicKey.bytes, items: 1,
                bytes: 2 * RelayLimits.gibibyte + 1)
        else {
            Issue.record("a 2 GiB + 1 offer was admitted")
            return
        }
        #expect(
            m.hasPrefix(
                "relay quota: this sender may hold at most 2.0 GiB here (0 bytes held, this offer needs 2.0 GiB)"))
        #expect(ByteCount.text(Int64(1.96 * Double(RelayLimits.gibibyte))) == "1.9 GiB")
        #expect(ByteCount.text(1) == "1 byte")
    }

    @Test("invalid offers and reused offer ids are refused before anything is written")
    func invalidOffers() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        var (offer, _) = try Relay.offer(from: alice, to: bob, sizes: [10, 20])
        offer.totalBytes = 31
        #expect(Relay.expectError { _ = try store.beginDeposit(offer) }?.kind == .invalidDeposit)
        offer.totalBytes = 30
        offer.recipientKey = [1, 2, 3]
        #expect(Relay.expectError { _ = try store.beginDeposit(offer) }?.message.contains("recipient key") == true)

        let (held, _) = try Relay.deposit(store, from: alice, to: bob, sizes: [10])
        #expect(Relay.expectError { _ = try store.beginDeposit(held) }?.message.contains("already held") == true)
        let (twice, _) = try Relay.offer(from: alice, to: bob, sizes: [10])
        let first = try store.beginDeposit(twice)
        #expect(Relay.expectError { _ = try store.beginDeposit(twice) }?.message.contains("another session") == true)
        first.discard()
        #expect(disk.list(dir.relay + "/partial").isEmpty)
        // A reused id is a refusal of messages.md's deposit step 5, counted like the others;
        // an invalid offer is a protocol error of the session, not a refusal.
        #expect(try store.status().refusals["offer-reused"] == 2)
    }

    @Test("a relay that cannot write its partial folder refuses with storage_failed and counts it")
    func storageRefusal() throws {
        let dir = try TempDirectory()
        let store = try RelayStore(directory: dir.relay, admission: .open)
        // A file where the partial folder should be: no deposit can be written (as on a full or
        // read-only disk, which root on this machine cannot make).
        disk.removeTree(dir.relay + "/partial")
        #expect(FileManager.default.createFile(atPath: dir.relay + "/partial", contents: Data([1])))
        let (offer, _) = try Relay.offer(from: alice, to: bob, sizes: [10])
        let error = Relay.expectError { _ = try store.beginDeposit(offer) }
        #expect(error?.code == .storageFailed)
        #expect(try store.status().refusals["storage"] == 1)
        // Nothing stays reserved: once the folder is back, the same offer is taken.
        disk.removeTree(dir.relay + "/partial")
        try disk.makeDirectory(dir.relay + "/partial", tightening: true, followingLinks: false)
        try store.beginDeposit(offer).discard()
    }
}
