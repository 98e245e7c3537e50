import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

/// Helpers of the organisation tests (albums, tags, queries, deletion, private albums).
enum Org {
    /// A real streaming import of `size` JPEG-like bytes named `name`.
    @discardableResult
    static func jpeg(_ vault: Vault, _ name: String?, size: Int = 100, sender: String? = nil) throws -> PhotoRecord {
        let importer = try vault.beginImport(name: name)
        try importer.write(Fixtures.jpegLike(size))
        return try importer.finish(senderFingerprint: sender)
    }

    /// A real fixture image (its own format), optionally under another name.
    @discardableResult
    static func fixture(_ vault: Vault, _ file: String, name: String? = nil, sender: String? = nil) throws
        -> PhotoRecord
    {
        let importer = try vault.beginImport(name: name ?? file)
        try importer.write(Fixtures.bytes(file))
        return try importer.finish(senderFingerprint: sender)
    }

    /// Sets the capture and import dates in the catalog (imports take the current time).
    static func setDates(_ vault: Vault, _ id: String, capture: Date?, imported: Date) throws {
        try vault.db.write { db in
            try vault.reseal(db, id) { $0.captureDate = capture.map(CatalogSeal.Fields.databaseText) }
            try db.execute(sql: "UPDATE photo SET importDate = ? WHERE id = ?", arguments: [imported, id])
        }
    }

    static func day(_ n: Int, _ ms: Int = 0) -> Date {
        Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 86_400 + Double(ms) / 1000)
    }

    static func ids(_ vault: Vault, _ query: PhotoQuery) throws -> [String] {
        try vault.photos(matching: query).map(\.id)
    }
}

@Suite("Vault: photo queries (sort, filter, search, paging)")
struct QueryTests {
    /// Photos with distinct and equal keys for every sort order.
    static func sortFixture(_ vault: Vault) throws -> [PhotoRecord] {
        let specs: [(name: String?, size: Int, capture: Int?, imported: Int)] = [
            ("b.jpg", 300, 3, 10),
            ("A.jpg", 100, nil, 2),  // effective date: import day 2
            ("c.jpg", 200, 3, 12),  // same capture date as b.jpg
            ("a.jpg", 300, nil, 10),  // same name as A.jpg ignoring case, same size and import date as b.jpg
            (nil, 50, 1, 13),
            ("B.JPG", 300, 2, 2),  // same effective date as A.jpg
        ]
        var out: [PhotoRecord] = []
        for s in specs {
            let r = try Org.jpeg(vault, s.name, size: s.size)
            try Org.setDates(vault, r.id, capture: s.capture.map { Org.day($0) }, imported: Org.day(s.imported))
            out.append(try vault.photo(matching: r.id))
        }
        return out
    }

    /// The order the catalog must produce: key, then ID, both in the query's direction.
    static func expected(_ photos: [PhotoRecord], _ sort: PhotoQuery.Sort, _ order: PhotoQuery.Order) -> [String] {
        func key(_ p: PhotoRecord) -> String {
            switch sort {
            case .captureDate: return iso(p.captureDate ?? p.importDate)
            case .importDate: return iso(p.importDate)
            case .size: return String(format: "%020lld", p.originalSize)
            case .name: return p.name.map { "1" + $0.lowercased() } ?? "0"  // NULL first, ASCII NOCASE
            }
        }
        let ascending = photos.sorted { a, b in key(a) != key(b) ? key(a) < key(b) : a.id < b.id }
        return (order == .ascending ? ascending : ascending.reversed()).map(\.id)
    }

    static func iso(_ d: Date) -> String { String(format: "%015.3f", d.timeIntervalSince1970) }

    @Test func everySortOrderAndDirectionIsStable() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let photos = try Self.sortFixture(vault)
        for sort in PhotoQuery.Sort.allCases {
            for order in PhotoQuery.Order.allCases {
                let want = Self.expected(photos, sort, order)
                let got = try Org.ids(vault, PhotoQuery(sort: sort, order: order))
                #expect(got == want, "\(sort) \(order)")
                // Pages of 2 put together give the same order.
                var paged: [String] = []
                for offset in stride(from: 0, to: photos.count, by: 2) {
                    paged += try Org.ids(vault, PhotoQuery(sort: sort, order: order, limit: 2, offset: offset))
                }
                #expect(paged == want, "\(sort) \(order) paged")
                #expect(try Org.ids(vault, PhotoQuery(sort: sort, order: order, offset: 4)) == Array(want.dropFirst(4)))
            }
        }
        // Spot checks of the semantics behind `expected`.
        let byName = try vault.photos(matching: PhotoQuery(sort: .name, order: .ascending)).map(\.name)
        #expect(byName.first! == nil)
        #expect(Set(byName[1...2].map { $0! }) == ["A.jpg", "a.jpg"])
        let newest = try vault.photos(matching: PhotoQuery())  // default: effective date, descending
        #expect(newest.first?.name == "a.jpg")  // no capture date: imported on day 10
        #expect(try vault.photoCount(matching: PhotoQuery(limit: 1)) == photos.count)
        #expect(try vault.photos(matching: PhotoQuery(limit: 0)).isEmpty)
    }

    @Test func filtersAloneAndCombined() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let alice = "ab12-cd34"
        let beach = try Org.jpeg(vault, "beach.jpg", sender: alice)
        let city = try Org.fixture(vault, "sample.png", name: "city.png", sender: alice)
        let dog = try Org.fixture(vault, "sample.heic", name: "dog.heic")
        let secret = try Org.jpeg(vault, "secret.jpg")
        try Org.setDates(vault, beach.id, capture: Org.day(1), imported: Org.day(30))
        try Org.setDates(vault, city.id, capture: nil, imported: Org.day(5))  // effective: day 5
        try Org.setDates(vault, dog.id, capture: Org.day(10), imported: Org.day(31))
        try Org.setDates(vault, secret.id, capture: Org.day(5, 1), imported: Org.day(32))
        try vault.createAlbum(named: "Holidays")
        try vault.addPhotos([beach.id, city.id], toAlbum: "holidays")
        try vault.addTags(["Sea", "summer"], to: [beach.id])
        try vault.addTags(["summer"], to: [city.id, dog.id])
        try vault.setFavorite(true, for: [city.id, dog.id])
        try vault.setHidden(true, for: [secret.id])

        func ids(_ q: PhotoQuery) throws -> Set<String> { Set(try Org.ids(vault, q)) }
        // Hidden photos are excluded unless asked for.
        #expect(try ids(PhotoQuery()) == [beach.id, city.id, dog.id])
        #expect(try ids(PhotoQuery(hidden: .include)) == [beach.id, city.id, dog.id, secret.id])
        #expect(try ids(PhotoQuery(hidden: .only)) == [secret.id])
        // One filter at a time.
        #expect(try ids(PhotoQuery(album: "HOLIDAYS")) == [beach.id, city.id])
        #expect(try ids(PhotoQuery(tag: "summer")) == [beach.id, city.id, dog.id])
        #expect(try ids(PhotoQuery(tag: " SEA ")) == [beach.id])
        #expect(try ids(PhotoQuery(favorite: true)) == [city.id, dog.id])
        #expect(try ids(PhotoQuery(favorite: false)) == [beach.id])
        #expect(try ids(PhotoQuery(from: Org.day(5))) == [city.id, dog.id])  // city by its import date
        #expect(try ids(PhotoQuery(before: Org.day(5))) == [beach.id])
        #expect(try ids(PhotoQuery(hidden: .include, from: Org.day(5), before: Org.day(5, 1))) == [city.id])
        #expect(try ids(PhotoQuery(format: "PNG")) == [city.id])
        #expect(try ids(PhotoQuery(hidden: .include, format: "jpeg")) == [beach.id, secret.id])
        #expect(try ids(PhotoQuery(senderFingerprint: alice)) == [beach.id, city.id])
        #expect(try ids(PhotoQuery(text: "CITY")) == [city.id])  // name, ignoring case
        #expect(try ids(PhotoQuery(text: "umm")) == [beach.id, city.id, dog.id])  // a tag
        #expect(try ids(PhotoQuery(text: ".HEIC")) == [dog.id])
        #expect(try ids(PhotoQuery(text: "secret")).isEmpty)  // hidden
        #expect(try ids(PhotoQuery(text: "  ")) == [beach.id, city.id, dog.id])  // blank: no filter
        // Combined.
        #expect(try ids(PhotoQuery(album: "Holidays", tag: "summer", favorite: true)) == [city.id])
        #expect(try ids(PhotoQuery(tag: "summer", from: Org.day(2), format: "heic")) == [dog.id])
        #expect(try ids(PhotoQuery(album: "Holidays", senderFingerprint: alice, text: "sea")) == [beach.id])
        #expect(try ids(PhotoQuery(album: "Holidays", format: "heic")).isEmpty)
        #expect(try vault.photoCount(matching: PhotoQuery(tag: "summer", limit: 1)) == 3)
        #expect(try Org.ids(vault, PhotoQuery(tag: "summer", limit: 1)).count == 1)

        // Bad arguments are refused with a reason.
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery(album: "Nope")) } == .albumNotFound)
        let format = #expect(throws: VaultError.self) { _ = try vault.photos(matching: PhotoQuery(format: "bmp")) }
        #expect(format?.code == .invalidArgument && format?.message.contains("jpeg") == true)
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery(limit: -1)) } == .invalidArgument)
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery(offset: -1)) } == .invalidArgument)
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery(tag: "")) } == .invalidArgument)
        vault.lock()
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery()) } == .locked)
        #expect(vaultCode { _ = try vault.photoCount(matching: PhotoQuery()) } == .locked)
    }

    /// `list --min-size` and `--with-location` / `--without-location`, and the totals of `status`.
    @Test func minimumSizeLocationAndTotals() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let small = try Org.jpeg(vault, "small.jpg", size: 100)
        let big = try Org.jpeg(vault, "big.jpg", size: 5000)
        let mid = try Org.jpeg(vault, "mid.jpg", size: 2000)
        let media = { (gps: Bool) in
            PhotoMetadata(
                width: 1, height: 1, orientation: 1, captureDate: nil, cameraMake: nil, cameraModel: nil,
                hasLocation: gps)
        }
        try vault.recordMedia(big.id, media(true), thumbnail: nil)
        try vault.recordMedia(small.id, media(false), thumbnail: nil)
        // `mid` is not indexed: its position is unknown, so neither filter lists it.
        func ids(_ q: PhotoQuery) throws -> Set<String> { Set(try Org.ids(vault, q)) }
        #expect(try ids(PhotoQuery(minSize: 2000)) == [big.id, mid.id])
        #expect(try ids(PhotoQuery(minSize: 2001)) == [big.id])
        #expect(try ids(PhotoQuery(minSize: 0)) == [small.id, big.id, mid.id])
        #expect(try ids(PhotoQuery(hasLocation: true)) == [big.id])
        #expect(try ids(PhotoQuery(hasLocation: false)) == [small.id])
        #expect(try ids(PhotoQuery(minSize: 1000, hasLocation: false)) == [])
        #expect(throws: VaultError.self) { try vault.photos(matching: PhotoQuery(minSize: -1)) }

        try vault.setHidden(true, for: [mid.id])
        let t = try vault.totals()
        #expect(t.photoCount == 3)  // hidden photos count
        #expect(t.originalBytes == 7100)
        #expect(t.encryptedBytes == big.encryptedSize + mid.encryptedSize + small.encryptedSize)
    }

    @Test func searchTextEscapesLikeWildcards() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let percent = try Org.jpeg(vault, "100%_real.jpg")
        let plain = try Org.jpeg(vault, "1000 real.jpg")
        let underscore = try Org.jpeg(vault, "a_b.jpg")
        let axb = try Org.jpeg(vault, "axb.jpg")
        let backslash = try Org.jpeg(vault, #"back\slash.jpg"#)
        try vault.addTags(["50%off"], to: [axb.id])
        func search(_ text: String) throws -> Set<String> { Set(try Org.ids(vault, PhotoQuery(text: text))) }
        #expect(try search("%") == [percent.id, axb.id])  // the name, and the tag "50%off"
        #expect(try search("_") == [percent.id, underscore.id])
        #expect(try search("a_b") == [underscore.id])  // not axb
        #expect(try search("100%") == [percent.id])  // not "1000 real"
        #expect(try search("0%o") == [axb.id])
        #expect(try search(#"\"#) == [backslash.id])
        #expect(try search(#"k\s"#) == [backslash.id])
        #expect(try search("real") == [percent.id, plain.id])
        #expect(PhotoQuery.containsPattern(#"5%_\x"#) == #"%5\%\_\\x%"#)
    }

    /// Sorting by import date, capture date (effective date) and size reads an index in order:
    /// no temporary b-tree, whatever the direction and hidden filter.
    @Test func sortsUseIndexesNotTemporaryBTrees() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        for i in 0..<30 {
            let r = try Org.jpeg(vault, "p\(i).jpg", size: 10 + i % 7)
            try Org.setDates(vault, r.id, capture: i % 3 == 0 ? nil : Org.day(i % 5), imported: Org.day(i % 4))
            if i % 10 == 0 { try vault.setHidden(true, for: [r.id]) }
        }
        for sort in PhotoQuery.Sort.allCases {
            for order in PhotoQuery.Order.allCases {
                for hidden in PhotoQuery.HiddenPhotos.allCases {
                    let (sql, plan) = try vault.explain(PhotoQuery(sort: sort, order: order, hidden: hidden, limit: 10))
                    let text = plan.joined(separator: " | ")
                    #expect(!text.contains("TEMP B-TREE"), "\(sort) \(order) \(hidden): \(text)\n\(sql)")
                    #expect(text.contains("INDEX clear_"), "\(sort) \(order) \(hidden): \(text)")
                }
            }
        }
        // Filters keep the ordered index too (or a narrower one).
        for q in [
            PhotoQuery(sort: .importDate, favorite: true), PhotoQuery(sort: .size, format: "png"),
            PhotoQuery(from: Org.day(1), before: Org.day(3)), PhotoQuery(senderFingerprint: "x"),
        ] {
            let text = try vault.explain(q).plan.joined(separator: " | ")
            #expect(!text.contains("TEMP B-TREE"), "\(q): \(text)")
        }
        // With a private album unlocked the visibility test changes shape but not the plan.
        try vault.createAlbum(named: "Private", passphrase: secret("pin"), kdf: .interactive)
        let text = try vault.explain(PhotoQuery(sort: .importDate)).plan.joined(separator: " | ")
        #expect(!text.contains("TEMP B-TREE") && text.contains("clear_isHidden_importDate"), "\(text)")
    }
}
