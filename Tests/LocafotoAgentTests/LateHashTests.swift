import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoInbox
import LocafotoReceiving
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWire
import Synchronization
import Testing

@testable import LocafotoAgent
@testable import LocafotoNode

/// HELLO cap `late-hash` (protocol/handshake.md): a receiver that announces it gets direct offers
/// without item hashes, so the sender reads each file once, while sealing it; a receiver that
/// does not gets every hash in the offer, as before the cap. Two real agents over real TCP.
@Suite("Content hashes in the offer, or computed on arrival")
struct LateHashTests {
    static let files = ["sample.jpg", "sample.png", "sample.heic"].map(Fixtures.path)

    static func hash(_ path: String) throws -> String {
        Hex.encode(ContentHash.of([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
    }

    /// Alice offers the three fixtures to Bob; returns Bob's inbox records of the pending offer
    /// (before he decides), then lets him accept and checks the photos in his vault.
    static func offerAndAccept(bobAnnouncesLateHash: Bool) async throws -> (
        records: [OfferItemRecord], senderHashes: [[UInt8]?]
    ) {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob") { $0.announcesLateHash = bobAnnouncesLateHash }
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        alice.sees(bob)
        let t = try alice.agent.send(to: "bob", paths: files)
        let offer = try await bob.waitForPendingOffer()
        let records = try bob.agent.store.items(of: offer.id)
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        let photos = try bob.agent.vault().photos()
        #expect(photos.count == 3)
        for p in photos {
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(p.name!)))
            #expect(Data(try bob.agent.vault().exportData(p.id)) == original)
            #expect(
                Hex.encode(p.contentHash) == (try hash(Fixtures.path(p.name!))),
                "the vault records the photo's own hash")
        }
        let senderHashes = t.plan.withLock { $0!.items.map(\.hash) }
        return (records, senderHashes)
    }

    @Test("a receiver that announces late-hash gets the offer without hashes; the sender never hashed")
    func withoutHashes() async throws {
        let (records, senderHashes) = try await Self.offerAndAccept(bobAnnouncesLateHash: true)
        #expect(records.count == 3)
        #expect(records.allSatisfy { $0.hash.isEmpty }, "no hash travelled in the offer")
        #expect(senderHashes.allSatisfy { $0 == nil })
    }

    @Test("a receiver without the cap gets every hash in the offer")
    func withHashes() async throws {
        let (records, senderHashes) = try await Self.offerAndAccept(bobAnnouncesLateHash: false)
        #expect(records.map(\.hash) == (try Self.files.map(Self.hash)))
        #expect(senderHashes.map { $0.map(Hex.encode) } == (try Self.files.map(Self.hash)))
    }
}
