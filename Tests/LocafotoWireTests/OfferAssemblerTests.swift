import LocafotoFormats
import LocafotoWire
import Testing

@Suite("Offer assembly and validation")
struct OfferAssemblerTests {
    typealias S = WireTestSupport

    static func items(_ n: Int, size: Int64 = 1000) -> [OfferItem] { (0..<n).map { S.item($0, size: size) } }

    /// Feeds every part; returns the outcome of each `add` ("none", "complete", or an error name).
    static func feed(_ parts: [Offer], limits: OfferLimits = OfferLimits()) -> (
        outcomes: [String], offer: AssembledOffer?
    ) {
        var a = OfferAssembler(limits: limits)
        var outcomes: [String] = []
        var result: AssembledOffer?
        for p in parts {
            var r: AssembledOffer?
            let o = S.outcome { r = try a.add(p) }
            outcomes.append(o == "ok" ? (r == nil ? "none" : "complete") : o)
            if let r { result = r }
            if o != "ok" { break }
        }
        return (outcomes, result)
    }

    static func outcome(_ item: OfferItem, limits: OfferLimits = OfferLimits()) -> String {
        feed([S.offer([item])], limits: limits).outcomes.last!
    }

    @Test func singleMessageOffer() throws {
        let items = Self.items(3)
        var a = OfferAssembler()
        let assembled = try #require(try a.add(S.offer(items)))
        #expect(assembled.id == S.offerID)
        #expect(assembled.items == items)
        #expect(assembled.totalBytes == 3000)
    }

    @Test(arguments: [1, 127, 128, 129, 256, 257, 300, 1000])
    func splitOffersReassemble(count: Int) throws {
        let items = (0..<count).map { S.item($0, size: Int64($0 * 7)) }
        let parts = Offer.parts(id: S.offerID, items: items)
        #expect(parts.count == (count + 127) / 128)
        #expect(parts.allSatisfy { $0.items.count <= WireProtocol.maxItemsPerOfferMessage })
        #expect(parts.dropLast().allSatisfy { $0.more && $0.items.count == 128 })
        #expect(parts.last?.more == false)
        #expect(
            parts.allSatisfy {
                $0.offer == S.offerID && $0.totalItems == count && $0.totalBytes == items.reduce(0) { $0 + $1.size }
            })
        // Each part fits in one wire message.
        for p in parts { #expect(try WireMessage.offer(p).encoded().count <= WireProtocol.maxMessageLength) }

        let (outcomes, assembled) = Self.feed(parts)
        #expect(outcomes == Array(repeating: "none", count: parts.count - 1) + ["complete"])
        #expect(assembled?.items == items)
        #expect(assembled?.totalBytes == items.reduce(0) { $0 + $1.size })
    }

    /// Pins current behaviour: an OFFER part with no items (and `more: true`) is accepted. Nothing
    /// in messages.md forbids it; see the note on bounding the number of parts.
    @Test func emptyContinuationsAreRefused() {
        let items = Self.items(2)
        let parts = [
            Offer(offer: S.offerID, items: [items[0]], more: true, totalItems: 2, totalBytes: 2000),
            Offer(offer: S.offerID, items: [], more: true, totalItems: 2, totalBytes: 2000),
        ]
        #expect(Self.feed(parts).outcomes == ["none", "protocol_violation"])
    }

    // MARK: limits

    @Test func tooManyItems() {
        var limits = OfferLimits()
        limits.maxItems = 3
        #expect(Self.feed([S.offer(Self.items(3))], limits: limits).outcomes == ["complete"])
        #expect(Self.feed([S.offer(Self.items(4))], limits: limits).outcomes == ["too_large"])
        // Judged on the announced total, before any item arrives.
        let announced = Offer(
            offer: S.offerID, items: [Self.items(1)[0]], more: true, totalItems: 10_001, totalBytes: 0)
        #expect(Self.feed([announced]).outcomes == ["too_large"])
        #expect(OfferLimits().maxItems == 10_000)
    }

    @Test func tooManyBytes() {
        var limits = OfferLimits()
        limits.maxTotalBytes = 2500
        #expect(Self.feed([S.offer(Self.items(2))], limits: limits).outcomes == ["complete"])
        #expect(Self.feed([S.offer(Self.items(3))], limits: limits).outcomes == ["too_large"])
        let huge = Offer(offer: S.offerID, items: [], more: true, totalItems: 1, totalBytes: (64 << 30) + 1)
        #expect(Self.feed([huge]).outcomes == ["too_large"])
        let negative = Offer(offer: S.offerID, items: [], more: true, totalItems: 1, totalBytes: -1)
        #expect(Self.feed([negative]).outcomes == ["too_large"])
        #expect(OfferLimits().maxTotalBytes == 64 << 30)
    }

    @Test func itemTooLarge() {
        var limits = OfferLimits()
        limits.maxItemBytes = 1000
        #expect(Self.outcome(S.item(0, size: 1000), limits: limits) == "complete")
        #expect(Self.outcome(S.item(0, size: 1001), limits: limits) == "too_large")
        #expect(Self.outcome(S.item(0, size: 1 << 32)) == "complete")
        #expect(Self.outcome(S.item(0, size: (1 << 32) + 1)) == "too_large")
        #expect(Self.outcome(S.item(0, size: -1)) == "too_large")
        #expect(Self.outcome(S.item(0, size: 0)) == "complete")
    }

    @Test func atLeastOneItemAndAtMost128PerMessage() {
        let none = Offer(offer: S.offerID, items: [], more: false, totalItems: 0, totalBytes: 0)
        #expect(Self.feed([none]).outcomes == ["protocol_violation"])
        #expect(Offer.parts(id: S.offerID, items: []).count == 1)
        #expect(Self.feed(Offer.parts(id: S.offerID, items: [])).outcomes == ["protocol_violation"])
        let items = Self.items(129)
        let oversized = Offer(offer: S.offerID, items: items, more: false, totalItems: 129, totalBytes: 129_000)
        #expect(Self.feed([oversized]).outcomes == ["protocol_violation"])
    }

    // MARK: identifiers and hashes

    @Test func duplicateItemIDs() {
        let a = S.item(1)
        var b = S.item(2)
        b.id = a.id
        #expect(Self.feed([S.offer([a, b])]).outcomes == ["protocol_violation"])
        // Also across parts of a split offer.
        let items = Self.items(200)
        var dup = items
        dup[150].id = dup[3].id
        #expect(Self.feed(Offer.parts(id: S.offerID, items: dup)).outcomes == ["none", "protocol_violation"])
    }

    static let badUUIDs = [
        "", "3F2C8A1E-7B4D-4C6E-9F10-A1B2C3D4E5F6", "3f2c8a1e7b4d4c6e9f10a1b2c3d4e5f6",
        "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f",
        "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6a", "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5fg",
        "{3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6}",
        "3f2c8a1e_7b4d-4c6e-9f10-a1b2c3d4e5f6", "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f\u{0}",
        "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5é",
        "../../../../../../../../etc/passwd", " 3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f",
    ]

    @Test(arguments: badUUIDs)
    func badOfferID(_ id: String) {
        #expect(Self.feed([S.offer(Self.items(1), id: id)]).outcomes == ["protocol_violation"], "'\(id)'")
    }

    @Test(arguments: badUUIDs)
    func badItemID(_ id: String) {
        var item = S.item(0)
        item.id = id
        #expect(Self.outcome(item) == "protocol_violation", "'\(id)'")
    }

    @Test func badHash() throws {
        let good = try #require(S.item(0).hash)
        #expect(good.count == 64)
        for hash in [
            "", String(good.dropLast()), good + "0", good.uppercased(), String(good.dropLast()) + "g",
            String(repeating: "0", count: 128), String(good.dropLast(2)) + "é",
        ] {
            var item = S.item(0)
            item.hash = hash
            #expect(Self.outcome(item) == "protocol_violation", "hash '\(hash)'")
        }
    }

    @Test("an item without hash: refused unless this receiver announced late-hash, and always in a relayed offer")
    func lateHash() throws {
        var item = S.item(0)
        item.hash = nil
        #expect(Self.outcome(item) == "protocol_violation")

        var strict = OfferAssembler()
        #expect(throws: WireError.self) { try strict.add(S.offer([item])) }
        var late = OfferAssembler(acceptsLateHash: true)
        let assembled = try #require(try late.add(S.offer([S.item(1), item])))
        #expect(assembled.items.map(\.hash) == [S.hash(1), nil])

        // A relayed offer is signed over its hashes: one without is refused even here.
        var relayed = S.offer([item])
        relayed.to = Bytes([UInt8](repeating: 7, count: 32))
        relayed.signature = Bytes([UInt8](repeating: 9, count: 64))
        var lateRelay = OfferAssembler(acceptsLateHash: true)
        #expect(S.outcome { _ = try lateRelay.add(relayed) } == "protocol_violation")
        // A bad hash is refused whatever the cap.
        item.hash = "00"
        var lateBad = OfferAssembler(acceptsLateHash: true)
        #expect(S.outcome { _ = try lateBad.add(S.offer([item])) } == "protocol_violation")
    }

    @Test("an item without hash is encoded without the key (not as null)")
    func lateHashEncoding() throws {
        var item = S.item(0)
        item.hash = nil
        let json = String(decoding: try WireMessage.offer(S.offer([item])).encoded().dropFirst(), as: UTF8.self)
        #expect(!json.contains("hash"))
        #expect(json.contains(#""size":1000"#))
    }

    // MARK: names and kinds

    @Test(arguments: [
        "a/b", "/etc/passwd", "../x.jpg", "a\\b", "..\\x.jpg", ".", "..", "", "a\u{0}b", "a\nb", "a\rb", "a\tb",
        "\u{1F}x",
        "x\u{7F}", String(repeating: "a", count: 256), String(repeating: "é", count: 128),
        String(repeating: "🌊", count: 64),
    ])
    func badNames(_ name: String) {
        #expect(Self.outcome(S.item(0, name: name)) == "protocol_violation", "name \(name.debugDescription)")
    }

    @Test(arguments: [
        "IMG_0001.jpg", "a", "...", ".hidden", "a..b", "Été 🌊.heic", "name with spaces.png", "C:photo.jpg",
        String(repeating: "a", count: 255), String(repeating: "é", count: 127) + "a",
        String(repeating: "🌊", count: 63) + "abc",
    ])
    func goodNames(_ name: String) {
        #expect(Self.outcome(S.item(0, name: name)) == "complete", "name \(name.debugDescription)")
    }

    @Test func nameLimitFollowsTheLimits() {
        var limits = OfferLimits()
        limits.maxNameBytes = 10
        #expect(Self.outcome(S.item(0, name: "0123456789"), limits: limits) == "complete")
        #expect(Self.outcome(S.item(0, name: "0123456789a"), limits: limits) == "protocol_violation")
    }

    @Test func kinds() {
        for type in ContentType.allCases {
            #expect(Self.outcome(S.item(0, kind: type.rawValue)) == "complete", "\(type)")
        }
        for kind in ["bmp", "JPEG", "Jpeg", "jpg", "", "image/jpeg", "jpeg ", "svg", "mp4"] {
            #expect(Self.outcome(S.item(0, kind: kind)) == "unsupported_content", "kind '\(kind)'")
        }
    }

    // MARK: totals and continuations

    @Test func mismatchedTotals() {
        let items = Self.items(3)
        func offer(_ items: [OfferItem], totalItems: Int, totalBytes: Int64, more: Bool = false) -> Offer {
            Offer(offer: S.offerID, items: items, more: more, totalItems: totalItems, totalBytes: totalBytes)
        }
        #expect(Self.feed([offer(items, totalItems: 3, totalBytes: 3000)]).outcomes == ["complete"])
        #expect(Self.feed([offer(items, totalItems: 3, totalBytes: 2999)]).outcomes == ["protocol_violation"])
        #expect(Self.feed([offer(items, totalItems: 3, totalBytes: 3001)]).outcomes == ["protocol_violation"])
        // ended early
        #expect(Self.feed([offer(items, totalItems: 4, totalBytes: 3000)]).outcomes == ["protocol_violation"])
        // more than announced
        #expect(Self.feed([offer(items, totalItems: 2, totalBytes: 3000)]).outcomes == ["protocol_violation"])
        // Across parts.
        #expect(
            Self.feed([
                offer(Array(items.prefix(2)), totalItems: 2, totalBytes: 3000, more: true),
                offer([items[2]], totalItems: 2, totalBytes: 3000),
            ])
            .outcomes == ["none", "protocol_violation"])
    }

    @Test func continuationsMustRepeatTheOffer() {
        let items = Self.items(2)
        let first = Offer(offer: S.offerID, items: [items[0]], more: true, totalItems: 2, totalBytes: 2000)
        var other = Offer(offer: S.uuid(77), items: [items[1]], more: false, totalItems: 2, totalBytes: 2000)
        #expect(Self.feed([first, other]).outcomes == ["none", "protocol_violation"])
        other = Offer(offer: S.offerID, items: [items[1]], more: false, totalItems: 3, totalBytes: 2000)
        #expect(Self.feed([first, other]).outcomes == ["none", "protocol_violation"])
        other = Offer(offer: S.offerID, items: [items[1]], more: false, totalItems: 2, totalBytes: 2001)
        #expect(Self.feed([first, other]).outcomes == ["none", "protocol_violation"])
        other = Offer(offer: S.offerID, items: [items[1]], more: false, totalItems: 2, totalBytes: 2000)
        #expect(Self.feed([first, other]).outcomes == ["none", "complete"])
    }
}
