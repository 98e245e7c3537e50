import Dispatch
import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoNode
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import Testing

@testable import LocafotoAgent
@testable import LocafotoInbox
@testable import LocafotoReceiving

/// The receiver's group commit between two real agents over real TCP: photos that arrive while
/// the receiver is behind enter the vault together, and every photo reported imported is there.
@Suite("Group commit on the receiver")
struct GroupCommitTests {
    /// Distinct small photos: a real JPEG followed by a few random bytes.
    static func smallPhotos(_ count: Int, in dir: String) throws -> [String] {
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("sample.jpg"))))
        return try (0..<count).map { i in
            let path = dir + "/IMG_\(i).jpg"
            try Data(jpeg + SecureRandom.bytes(512)).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test("photos that arrive while the receiver commits are committed together, and all are imported")
    func photosArrivingDuringACommitShareTheNext() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        try ResumeTests.trust(alice, on: bob)

        // Bob's first commit is held until Alice has streamed every photo, so the rest are
        // waiting in his connection when he goes on: they must not be committed one by one.
        let commits = CommitLog()
        let gate = DispatchSemaphore(value: 0)
        let (firstCommit, committed) = AsyncStream<Void>.makeStream()
        try bob.agent.vault().hooks = Vault.Hooks(afterCatalogCommit: { ids in
            guard commits.append(ids) == 1 else { return }
            committed.yield()
            gate.wait()  // blocks Bob's receiving task: a slow disk
        })
        let paths = try Self.smallPhotos(30, in: alice.dir)
        let t = try alice.agent.send(to: "bob", paths: paths)
        do {
            _ = try await hangGuard("Bob's first commit") { await firstCommit.first { _ in true } != nil }
            // Alice's last bytes are announced (a final progress event always goes out).
            try await alice.waitUntil("Alice streamed every photo") {
                t.current.totalBytes > 0 && t.current.sentBytes >= t.current.totalBytes
            }
        } catch {
            gate.signal()
            throw error
        }
        gate.signal()

        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(s.items.allSatisfy { $0.status == .imported })
        let batches = commits.value
        #expect(batches.reduce(0) { $0 + $1.count } == paths.count)
        // How the 30 split depends on scheduling (the first commit may already hold many); that
        // some shared a commit does not: with a commit per photo there would be 30.
        #expect(batches.count < paths.count, "some photos shared a commit: \(batches.map(\.count))")
        #expect(batches.allSatisfy { $0.count <= IncomingReceipt.batchItems })
        // What Alice was told is what Bob's vault and inbox hold.
        let vault = try bob.agent.vault()
        let stored = Set(try vault.photos().map(\.id))
        #expect(Set(s.items.compactMap(\.photo)) == stored)
        let offer = try await bob.waitForOffer(t.id, .completed)
        let items = try bob.agent.store.items(of: offer.id)
        #expect(items.allSatisfy { $0.status == .imported && $0.photoId.map(stored.contains) == true })
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bob.agent.configuration.home.spoolDirectory).isEmpty)
    }
}

/// The photo ids of each catalog commit, in order.
private final class CommitLog: @unchecked Sendable {
    private var batches: [[String]] = []
    private let lock = NSLock()

    /// Records a commit; returns how many there have been.
    func append(_ ids: [String]) -> Int {
        lock.withLock {
            batches.append(ids)
            return batches.count
        }
    }
    var value: [[String]] { lock.withLock { batches } }
}
