import LocafotoFormats
import LocafotoWire
import Testing

@Suite("Item kinds")
struct ItemKindTests {
    @Test func imagesAndLfsAreOfferable() {
        for k in ContentType.allCases.map(\.rawValue) + ["lfs"] { #expect(ItemKind.isValid(k), "\(k)") }
        for k in ["LFS", "Lfs", "pdf", "", "jpeg ", "lfs\u{0}"] { #expect(!ItemKind.isValid(k), "\(k)") }
    }

    @Test func assemblerAcceptsLfsAndRefusesOtherKinds() throws {
        func offer(_ kind: String) -> Offer {
            Offer(
                offer: "11111111-2222-4333-8444-555555555555",
                items: [
                    OfferItem(
                        id: "aaaaaaaa-2222-4333-8444-555555555555", name: "x.lfs", kind: kind, size: 200,
                        hash: String(repeating: "0", count: 64))
                ],
                more: false, totalItems: 1, totalBytes: 200)
        }
        var a = OfferAssembler()
        #expect(try a.add(offer("lfs"))?.items.first?.kind == "lfs")
        var b = OfferAssembler()
        #expect(throws: WireError.self) { try b.add(offer("exe")) }
    }
}
