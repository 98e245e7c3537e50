import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import Testing

/// Late previews (HELLO cap `late-preview`, protocol/messages.md "Late previews"): a direct
/// offer is complete at its last OFFER part; the previews its items mark with `latePreview`
/// follow while the receiver decides, in item order, each once (an empty one: none made), and
/// those still in flight when the DECISION went are dropped up to the first ITEM_START.
@Suite("Late previews")
struct LatePreviewTests {
    typealias S = WireTestSupport
    typealias R = ReceiverSessionTests

    /// Items 0 and 2 of three (sizes as `ReceiverSessionTests.sizes`) mark a late preview.
    static func offer(late: [Int] = [0, 2]) -> Offer {
        var items = R.items
        for i in late { items[i].latePreview = true }
        return S.offer(items)
    }

    static func session() -> ReceiverSession { ReceiverSession(acceptsPreviews: true, acceptsLatePreviews: true) }

    static func preview(_ item: UInt32, _ sealed: [UInt8] = [1, 2, 3]) -> WireMessage {
        .preview(Preview(item: item, sealed: sealed))
    }

    @Test func theOfferIsCompleteAtOnceAndItsPreviewsFollowUntilTheDecision() throws {
        var s = Self.session()
        guard case .offerReceived(let offer) = try s.receive(.offer(Self.offer())) else {
            Issue.record("the offer did not complete at its last part")
            return
        }
        #expect(offer.items.map(\.latePreview) == [true, nil, true])
        #expect(s.latePreviewsOutstanding == 2)
        #expect(try s.receive(Self.preview(0, [9])) == .latePreviewReceived(item: 0, sealed: [9]))
        #expect(try s.receive(.ping) == .reply(.pong))
        #expect(try s.receive(Self.preview(2, [])) == .latePreviewReceived(item: 2, sealed: []))  // none made
        #expect(s.latePreviewsOutstanding == 0)
        #expect(S.outcome { _ = try s.receive(Self.preview(2)) } == "protocol_violation")  // once each
        _ = s.decide(.accepted)
        guard case .beginItem(let start) = try s.receive(R.start(1)) else {
            Issue.record("the first item did not begin")
            return
        }
        #expect(start.item == 1)
    }

    @Test func latePreviewsComeInItemOrderOnlyForMarkedItems() throws {
        for wrong: [UInt32] in [[2], [1], [0, 0], [0, 1], [7]] {
            var s = Self.session()
            _ = try s.receive(.offer(Self.offer()))
            let outcome = S.outcome {
                for i in wrong { _ = try s.receive(Self.preview(i)) }
            }
            #expect(outcome == "protocol_violation", "\(wrong)")
        }
        var tooLong = Self.session()
        _ = try tooLong.receive(.offer(Self.offer()))
        let box = [UInt8](repeating: 7, count: PreviewImage.maxBytes + SealedBox.overhead + 1)
        #expect(S.outcome { _ = try tooLong.receive(Self.preview(0, box)) } == "protocol_violation")
    }

    @Test func previewsInFlightAtTheDecisionAreDroppedUntilTheFirstItem() throws {
        var s = Self.session()
        _ = try s.receive(.offer(Self.offer()))
        _ = s.decide(.accepted)
        // The sender had not read the DECISION yet: what it sent meanwhile is dropped.
        #expect(try s.receive(Self.preview(0)) == .none)
        #expect(try s.receive(Self.preview(2)) == .none)
        var after = Self.session()
        _ = try after.receive(.offer(Self.offer()))
        _ = after.decide(.accepted)
        _ = try after.receive(R.start(1))
        // Once items flow, a preview is out of order again.
        #expect(S.outcome { _ = try after.receive(Self.preview(0)) } == "protocol_violation")
        // Out of order stays out of order after the decision too.
        var wrong = Self.session()
        _ = try wrong.receive(.offer(Self.offer()))
        _ = wrong.decide(.accepted)
        #expect(S.outcome { _ = try wrong.receive(Self.preview(2)) } == "protocol_violation")
    }

    @Test func onlyADirectOfferToAPeerWithTheCapMarksLatePreviews() {
        func outcome(_ items: [OfferItem], late: Bool = true, relayed: Bool = false) -> String {
            var a = OfferAssembler(acceptsPreviews: true, acceptsLatePreviews: late)
            var offer = S.offer(items)
            if relayed {
                offer.to = Bytes(Array(repeating: 1, count: 32))
                offer.signature = Bytes(Array(repeating: 2, count: 64))
            }
            return S.outcome { _ = try a.add(offer) }
        }
        var item = S.item(0)
        item.latePreview = true
        #expect(outcome([item]) == "ok")
        #expect(outcome([item], late: false) == "protocol_violation")  // cap not announced
        #expect(outcome([item], relayed: true) == "protocol_violation")  // a relayed offer
        var both = item
        both.preview = PreviewInfo(size: 10, hash: String(repeating: "a", count: 64))
        #expect(outcome([both]) == "protocol_violation")
        // `late-preview` without `preview` is no cap at all.
        var withoutPreview = OfferAssembler(acceptsPreviews: false, acceptsLatePreviews: true)
        #expect(S.outcome { _ = try withoutPreview.add(S.offer([item])) } == "protocol_violation")
        // On-time and late previews count together against the 100 an offer may carry.
        let many = (0...PreviewImage.maxPerOffer).map { n -> OfferItem in
            var i = S.item(n)
            if n.isMultiple(of: 2) { i.latePreview = true } else { i.preview = both.preview }
            return i
        }
        #expect(outcome(Array(many.dropLast())) == "ok")
        #expect(outcome(many) == "protocol_violation")
    }

    @Test func theFieldIsAbsentUnlessSet() throws {
        let plain = try WireMessage.offer(S.offer([S.item(0)])).encoded()
        #expect(!String(decoding: plain, as: UTF8.self).contains("latePreview"))
        let marked = try WireMessage.offer(Self.offer(late: [0])).encoded()
        #expect(String(decoding: marked, as: UTF8.self).contains("\"latePreview\":true"))
    }
}
