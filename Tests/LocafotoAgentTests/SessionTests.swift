import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoPeers
import LocafotoReceiving
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode

/// Two real agents over real TCP on loopback: Noise handshake, offer, inbox, decision, streamed
/// items, verification and import into a real vault.
@Suite("Sessions between two agents")
struct SessionTests {
    @Test("accepted offer: three real photos imported byte-identical, sender recorded")
    func acceptedOffer() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let files = ["sample.jpg", "sample.png", "sample.heic"].map(Fixtures.path)
        let t = try alice.agent.send(to: "bob", paths: files)
        let offer = try await bob.waitForPendingOffer()
        #expect(offer.senderFingerprint == alice.agent.identity.fingerprint.description)
        #expect(offer.itemCount == 3)
        #expect(offer.id == t.id, "the id the sender shows is the id in the receiver's inbox")
        // Metadata only before acceptance: nothing in the spool, nothing in the vault.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bob.agent.configuration.home.spoolDirectory).isEmpty)
        #expect(try bob.agent.vault().photos().isEmpty)
        _ = try await bob.agent.inbox.decide(String(offer.id.prefix(8)), .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        _ = try await bob.waitForOffer(offer.id, .completed)
        #expect(s.items.allSatisfy { $0.status == .imported })
        let photos = try bob.agent.vault().photos()
        #expect(photos.count == 3)
        for p in photos {
            #expect(p.senderFingerprint == alice.agent.identity.fingerprint.description)
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(p.name!)))
            #expect(Data(try bob.agent.vault().exportData(p.id)) == original)
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bob.agent.configuration.home.spoolDirectory).isEmpty)
    }

    @Test("once imported, a received photo's name and hash leave the agent's own database (it is not encrypted)")
    func importedItemsAreForgottenInTheInbox() async throws {
        // Without cap late-hash the offer carries the content hash, which the inbox keeps.
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob") { $0.announcesLateHash = false }
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        alice.sees(bob)
        let path = alice.dir + "/Zanzibar-honeymoon-7731.jpg"
        try FileManager.default.copyItem(atPath: Fixtures.path("sample.jpg"), toPath: path)
        let t = try alice.agent.send(to: "bob", paths: [path])
        let offer = try await bob.waitForPendingOffer()
        let store = bob.agent.configuration.home.storeFile
        let files = [store, store + "-wal"]
        func holding(_ needle: String) -> [String] {
            files.filter { (FileManager.default.contents(atPath: $0) ?? Data()).range(of: Data(needle.utf8)) != nil }
        }
        #expect(!holding("Zanzibar-honeymoon-7731").isEmpty, "a pending offer's names are in the inbox, to be shown")
        let hash = Hex.encode(ContentHash.of([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
        #expect(try bob.agent.store.items(of: offer.id).first?.hash == hash)
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        #expect(try await alice.waitForTransfer(t).state == .done)
        let photo = try #require(try bob.agent.vault().photos().first)
        #expect(photo.name == "Zanzibar-honeymoon-7731.jpg")
        // The receiver empties its WAL when the offer's session ends, then announces the end.
        try await bob.waitUntil("the name gone from agent.sqlite and its WAL") {
            holding("Zanzibar-honeymoon-7731").isEmpty
        }
        #expect(holding(Hex.encode(photo.contentHash)).isEmpty, "and so is the content hash")
        let item = try #require(try bob.agent.store.items(of: offer.id).first)
        #expect(item.status == .imported && item.photoId == photo.id && item.name.isEmpty && item.hash.isEmpty)
        // The inbox still names it while the vault is open, from the vault.
        let listed = try await bob.agent.controllers.inbox.list(all: true)
        #expect(listed.first?.items.first?.name == "Zanzibar-honeymoon-7731.jpg")
    }

    @Test("rejected offer: sender learns it, nothing stored")
    func rejectedOffer() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.jpg")])
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.inbox.decide(offer.id, .rejected)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .rejected)
        #expect(s.message?.contains("declined") == true)
        #expect(try bob.agent.vault().photos().isEmpty)
    }

    @Test("trusted peer: offer accepted without a prompt")
    func trustedPeer() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        try bob.trusts(alice)
        let s = try await alice.waitForTransfer(try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.webp")]))
        #expect(s.state == .done)
        #expect(try bob.agent.vault().photos().count == 1)
    }

    @Test("policy off and trusted-only refuse with refused_by_policy")
    func policies() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        for policy in [ReceivePolicy.off, .trusted] {
            try bob.agent.store.setSetting("policy", policy.rawValue)
            let s = try await alice.waitForTransfer(
                try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.png")]))
            #expect(s.state == .rejected)
            #expect(s.message?.contains("not receiving") == true || s.message?.contains("only receives") == true)
        }
        #expect(try bob.agent.store.offers().isEmpty)
    }

    @Test("a peer proving another key than its advertised fingerprint is refused before any offer")
    func pinning() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        let mallory = try TestNode(name: "mallory")
        defer {
            alice.stop()
            bob.stop()
            mallory.stop()
        }
        try await mallory.start()
        // mallory's address, bob's fingerprint and name.
        alice.agent.directory.apply(
            .resolved(
                .init(
                    instanceName: "bob", interfaceIndex: 1, family: .ipv4, hostName: "h", address: "127.0.0.1",
                    port: UInt16(mallory.port),
                    txt: ["v": "1", "fp": bob.agent.identity.fingerprint.description, "name": "bob"], isLocal: true,
                    isOwn: false)))
        let s = try await alice.waitForTransfer(try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.jpg")]))
        #expect(s.state == .failed)
        #expect(s.message?.contains("REFUSED") == true)
        #expect(try mallory.agent.store.offers().isEmpty)
    }

    @Test("locked vault: verified items are queued sealed and imported on unlock")
    func lockedVault() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        try bob.agent.lock()
        alice.sees(bob)
        let t = try alice.agent.send(to: "bob", paths: [Fixtures.path("sample.jpg"), Fixtures.path("sample.png")])
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done)
        #expect(s.items.allSatisfy { $0.status == .queued })
        #expect(try bob.agent.store.queuedItems().count == 2)
        #expect(try bob.agent.unlock(passphrase: TestNode.passphrase) == 2)
        let photos = try bob.agent.vault().photos()
        #expect(photos.count == 2)
        for p in photos {
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(p.name!)))
            #expect(Data(try bob.agent.vault().exportData(p.id)) == original)
            // The offer carried no hash (late-hash): the one computed on arrival was kept for the import.
            #expect(p.contentHash == ContentHash.of([UInt8](original)))
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bob.agent.configuration.home.spoolDirectory).isEmpty)
    }

    @Test("a file that is not an image is refused before anything is offered")
    func notAnImage() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let s = try await alice.waitForTransfer(
            try alice.agent.send(to: "bob", paths: [Fixtures.path("not-an-image.txt")]))
        #expect(s.state == .failed)
        #expect(s.message?.contains("not a supported image") == true)
        #expect(try bob.agent.store.offers().isEmpty)
    }
}
