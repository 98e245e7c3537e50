import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoReceiving
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWire
import Synchronization
import Testing

@testable import LocafotoAgent

/// HELLO cap `late-preview` between two real agents over real TCP: a receiver that announces it
/// gets the offer before any preview is made, and the previews follow while its user decides;
/// one that does not gets them before the offer is complete, as before the cap. Either way the
/// inbox ends up with the same previews.
@Suite("Previews after the offer, or before it")
struct LatePreviewAgentTests {
    /// An upright EXIF thumbnail, a HEIF thumbnail item, a small PNG (decoded whole), and a HEIC
    /// without a thumbnail item (no preview).
    static let files = ["upright.jpg", "thumb.heic", "photo.png", "nothumb.heic"].map {
        Fixtures.root.appendingPathComponent("Tests/LocafotoMediaTests/Fixtures/\($0)").path
    }

    /// Alice offers the files to Bob; returns Bob's previews (opened) once no more are coming,
    /// how many were outstanding when the offer reached his inbox, and which items' previews
    /// Alice made before the offer (kept in her plan: the OFFER announced them).
    static func previews(
        bobAnnouncesLatePreview: Bool
    ) async throws -> (previews: [Int: [UInt8]], outstandingAtArrival: Int, madeBeforeOffer: [Bool]) {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob") { $0.announcesLatePreview = bobAnnouncesLatePreview }
        defer {
            alice.stop()
            bob.stop()
        }
        try await bob.start()
        alice.sees(bob)
        let t = try alice.agent.send(to: "bob", paths: files)
        let offer = try await bob.waitForPendingOffer()
        let atArrival = bob.agent.inbox.latePreviewsOutstanding(offer.id)
        let before = t.plan.withLock { $0!.items.map { $0.previewSealedToSelf != nil } }
        try await bob.waitUntil("every preview in") { bob.agent.inbox.latePreviewsOutstanding(offer.id) == 0 }
        var out: [Int: [UInt8]] = [:]
        for i in try bob.agent.store.previewIndices(offer.id) {
            let sealed = try #require(try bob.agent.store.preview(offer.id, i))
            out[i] = try PreviewCheck.openLate(sealed, with: bob.agent.identity.agreementKey).withUnsafeBytes {
                Array($0)
            }
        }
        _ = try await bob.agent.inbox.decide(offer.id, .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        #expect(try bob.agent.vault().photos().count == files.count)
        return (out, atArrival, before)
    }

    @Test("previews follow the offer to a receiver with the cap, the same as before it without")
    func lateAndOnTimeAgree() async throws {
        let late = try await Self.previews(bobAnnouncesLatePreview: true)
        let onTime = try await Self.previews(bobAnnouncesLatePreview: false)
        #expect(onTime.outstandingAtArrival == 0)
        #expect(onTime.madeBeforeOffer == [true, true, true, false])
        #expect(
            late.madeBeforeOffer == [false, false, false, false], "the late offer went out before any preview was made")
        #expect(Set(onTime.previews.keys) == [0, 1, 2], "the HEIC without a thumbnail item has none")
        #expect(late.previews == onTime.previews)
        // The upright EXIF thumbnail is sent byte for byte.
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.files[0])))
        #expect(late.previews[0].map { photo.firstRange(of: $0) != nil } == true)
    }

    @Test("a trusted receiver accepts at once: no preview is made for it, none kept")
    func trustedReceiverTakesNone() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        try bob.trusts(alice)
        let t = try alice.agent.send(to: "bob", paths: Self.files)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done, "\(s.message ?? "")")
        let offer = try await bob.waitForOffer(t.id, .completed)
        #expect(try bob.agent.store.previewIndices(offer.id).isEmpty)
        // Its DECISION came before the PONG to the PING after the OFFER: no decode was started.
        #expect(t.previewMaker.withLock { $0?.madeCount } == 0)
    }
}
