import Foundation
import LocafotoClock
import LocafotoCrypto
import LocafotoFormats
import LocafotoPeers
import LocafotoSession
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoInbox
@testable import LocafotoNode
@testable import LocafotoReceiving

/// Previews in the inbox (protocol/messages.md "PREVIEW", "At rest"): written only with an
/// offer let in, within the bound for untrusted senders, and gone when the offer ends.
@Suite("Inbox previews (real SQLite)")
struct InboxPreviewTests {
    typealias T = InboxTests

    static func sealed(_ n: Int) -> [Int: [UInt8]] {
        Dictionary(uniqueKeysWithValues: (0..<n).map { ($0, [UInt8](repeating: UInt8($0), count: 10_000)) })
    }

    @Test func previewsOfAnUntrustedSenderStayWithinTheirBound() async throws {
        let (store, dir) = try T.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.maxPendingUntrustedPreviewBytes = 25_000
        limits.maxPendingPerPeer = 10
        let inbox = Inbox(store: store, limits: limits, spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let p = T.peer()
        let first = T.offer(items: 2)
        let second = T.offer(items: 2)
        #expect(try await inbox.register(first, from: p, previews: Self.sealed(2)) == .pending)
        #expect(try store.previewIndices(first.id) == [0, 1])
        #expect(try store.preview(first.id, 1) == [UInt8](repeating: 1, count: 10_000))
        // 20,000 + 20,000 > 25,000: the second offer comes in, without its previews.
        #expect(try await inbox.register(second, from: p, previews: Self.sealed(2)) == .pending)
        #expect(try store.previewIndices(second.id).isEmpty)
        #expect(try store.pendingUntrustedPreviewBytes() == 20_000)
        // A trusted sender is not bound by it.
        try store.sawPeer(fingerprint: p.fingerprint, publicKey: p.publicKey.bytes, name: p.name, address: nil)
        try store.setTrust(p.fingerprint.description, .trusted)
        let third = T.offer(items: 2)
        #expect(try await inbox.register(third, from: p, previews: Self.sealed(2)) == .accept)
        #expect(try store.previewIndices(third.id) == [0, 1])
    }

    @Test func aRefusedOfferWritesNoPreview() async throws {
        let (store, dir) = try T.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try store.setSetting("policy", "trusted")
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = T.offer()
        guard case .refuse = try await inbox.register(o, from: T.peer(), previews: Self.sealed(1)) else {
            Issue.record("a stranger's offer was let in under policy trusted")
            return
        }
        #expect(try store.previewIndices(o.id).isEmpty)
        #expect(try store.offers().isEmpty)
    }

    @Test(arguments: [OfferRecord.State.rejected, .expired, .cancelled, .failed, .completed])
    func previewsGoWhenTheOfferEnds(_ end: OfferRecord.State) async throws {
        let (store, dir) = try T.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(
            store: store, limits: InboxLimits(), spoolDirectory: NSTemporaryDirectory(), clock: SystemClock())
        let o = T.offer(items: 3)
        #expect(try await inbox.register(o, from: T.peer(), previews: Self.sealed(3)) == .pending)
        try store.updateOffer(o.id) { $0.state = .accepted }  // still open: kept
        #expect(try store.previewIndices(o.id).count == 3)
        try store.updateOffer(o.id) { $0.state = end }
        #expect(try store.previewIndices(o.id).isEmpty)
        #expect(try store.preview(o.id, 0) == nil)
    }
}
