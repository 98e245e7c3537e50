import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoVault
import Synchronization
import Testing

@testable import LocafotoAgent
@testable import LocafotoInbox
@testable import LocafotoReceiving

/// A received JPEG leaves its head (SOI to the start of scan) for the media indexer, which reads
/// its facts from it instead of decrypting the whole photo again; the facts are the ones the
/// whole photo gives. Anything else, or a head that cannot be kept, is read whole as before.
@Suite("Facts of received JPEGs from their heads")
struct MediaHeadsTests {
    static func fixture(_ name: String) -> String {
        Fixtures.root.appendingPathComponent("Tests/LocafotoMediaTests/Fixtures/\(name)").path
    }

    /// `photo.jpg` with its scan pushed past `IncomingItem.jpegHeadLimit` by APP2 segments (as a
    /// large embedded ICC profile would): no head is kept for it.
    static func lateScanJPEG(in dir: String) throws -> String {
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture("photo.jpg"))))
        var padded = Array(photo[..<2])
        for _ in 0..<5 {
            let payload = [UInt8](repeating: 0x20, count: 60_000)
            padded += [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        padded += photo[2...]
        let path = dir + "/late-scan.jpg"
        try Data(padded).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Alice sends `files` to Bob, who trusts her; returns both once the transfer is done.
    static func received(_ files: (TestNode) throws -> [String]) async throws -> (alice: TestNode, bob: TestNode) {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        try await bob.start()
        alice.sees(bob)
        try bob.trusts(alice)
        let t = try alice.agent.send(to: "bob", paths: try files(alice))
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        return (alice, bob)
    }

    @Test("received JPEGs are indexed from their heads, with the facts of the whole photo")
    func receivedJPEGsIndexedFromHeads() async throws {
        var files: [String] = []
        let (alice, bob) = try await Self.received { alice in
            files = [
                Self.fixture("photo.jpg"), Self.fixture("upright.jpg"), Self.fixture("thumb.heic"),
                try Self.lateScanJPEG(in: alice.dir),
            ]
            return files
        }
        defer {
            alice.stop()
            bob.stop()
        }
        // Two heads: the HEIC is no JPEG, and the padded JPEG's scan starts past the limit.
        #expect(bob.agent.mediaHeads.count == 2)

        while bob.agent.mediaIndexer.indexSome() {}
        #expect(bob.agent.mediaIndexer.indexedFromHeads.load(ordering: .relaxed) == 2)
        #expect(bob.agent.mediaHeads.count == 0)
        let vault = try bob.agent.vault()
        for (photo, file) in zip(
            try vault.photos().sorted { ($0.name ?? "") < ($1.name ?? "") },
            files.sorted { ($0 as NSString).lastPathComponent < ($1 as NSString).lastPathComponent })
        {
            let info = try vault.mediaInfo(photo.id)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            let whole = try bytes.withUnsafeBytes { try Media.metadata(of: $0, type: ContentType.sniff(bytes)!) }
            #expect(info.width == whole.width && info.height == whole.height, "\(photo.name ?? "")")
            #expect(
                info.orientation == whole.orientation && info.cameraModel == whole.cameraModel, "\(photo.name ?? "")")
            #expect(
                info.captureDate == whole.captureDate && info.hasLocation == whole.hasLocation, "\(photo.name ?? "")")
            #expect(info.width != nil, "\(photo.name ?? "") was indexed")
        }
    }

    @Test("locking the vault drops the heads: photo plaintext goes with the key")
    func lockDropsHeads() async throws {
        let (alice, bob) = try await Self.received { _ in [Self.fixture("photo.jpg")] }
        defer {
            alice.stop()
            bob.stop()
        }
        #expect(bob.agent.mediaHeads.count == 1)
        try bob.agent.lock()
        #expect(bob.agent.mediaHeads.count == 0)
        _ = try bob.agent.unlock(passphrase: TestNode.passphrase)
        while bob.agent.mediaIndexer.indexSome() {}
        // Read whole instead, with the same facts.
        #expect(bob.agent.mediaIndexer.indexedFromHeads.load(ordering: .relaxed) == 0)
        let photo = try #require(try bob.agent.vault().photos().first)
        #expect(try bob.agent.vault().mediaInfo(photo.id).width == 800)
    }

    @Test("the heads are bounded in bytes; one that does not fit is not kept")
    func boundInBytes() {
        let heads = MediaHeads(maxBytes: 100)
        #expect(heads.keep(PhotoHead([UInt8](repeating: 1, count: 60)), for: "a"))
        #expect(!heads.keep(PhotoHead([UInt8](repeating: 2, count: 60)), for: "b"))
        #expect(!heads.keep(PhotoHead([UInt8](repeating: 3, count: 10)), for: "a"), "one head per photo")
        #expect(heads.take("a")?.bytes.count == 60)
        #expect(heads.take("a") == nil, "handed over once")
        #expect(heads.keep(PhotoHead([UInt8](repeating: 2, count: 60)), for: "b"))
    }
}
