import Foundation
import GRDB
import LocafotoCrypto
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

@Suite("Vault: tags, favourites, hidden photos")
struct OrganisationTests {
    @Test func tagsAreNormalisedAndMirroredInPhotoRecord() throws {
        let sandbox = Sandbox()
        let a: PhotoRecord
        let b: PhotoRecord
        do {
            let vault = try makeVault(sandbox)
            a = try Org.jpeg(vault, "a.jpg")
            b = try Org.jpeg(vault, "b.jpg")
            #expect(try vault.addTags(["  Paris ", "summer", "PARIS", "Été"], to: [a.id, b.id]) == 2)
            #expect(try vault.photo(matching: a.id).tags == ["paris", "summer", "été"])
            #expect(try vault.removeTags(["SUMMER", "not-there"], from: [b.id]) == 1)
            #expect(try vault.photo(matching: b.id).tags == ["paris", "été"])
            #expect(try vault.setTags(["b"], for: [a.id]) == 1)
            #expect(try vault.photo(matching: a.id).tags == ["b"])
            #expect(
                try vault.allTags() == [
                    TagCount(tag: "b", photoCount: 1), TagCount(tag: "paris", photoCount: 1),
                    TagCount(tag: "été", photoCount: 1),
                ])
            // Every read path sees the same tags: listing, query, lookup.
            #expect(try vault.photos().first { $0.id == b.id }?.tags == ["paris", "été"])
            #expect(try vault.photos(matching: PhotoQuery(tag: "ÉTÉ")).map(\.id) == [b.id])

            #expect(vaultCode { try vault.addTags([], to: [a.id]) } == .invalidArgument)
            #expect(vaultCode { try vault.addTags(["ok", "bad\ntag"], to: [a.id]) } == .invalidArgument)
            #expect(
                vaultCode { try vault.addTags([String(repeating: "x", count: 101)], to: [a.id]) } == .invalidArgument)
            #expect(try vault.photo(matching: a.id).tags == ["b"])
            #expect(try vault.setTags([], for: [a.id]) == 1)
            #expect(try vault.photo(matching: a.id).tags.isEmpty)
        }
        // Tags are in the catalog, not in memory.
        let vault = try Vault.open(at: sandbox.vault)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photo(matching: b.id).tags == ["paris", "été"])
        #expect(try vault.photo(matching: a.id).tags.isEmpty)
    }

    @Test func favouriteAndHiddenInBatch() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let photos = try (0..<5).map { try Org.jpeg(vault, "p\($0).jpg") }
        let ids = photos.map(\.id)
        #expect(try vault.setFavorite(true, for: .ids(Array(ids[0..<3]))) == 3)
        #expect(try vault.photos().filter(\.isFavorite).count == 3)
        #expect(try vault.setFavorite(false, for: [ids[0]]) == 1)
        #expect(Set(try Org.ids(vault, PhotoQuery(favorite: true))) == Set(ids[1..<3]))

        // Hiding by query: every favourite.
        #expect(try vault.setHidden(true, for: .query(PhotoQuery(favorite: true))) == 2)
        #expect(Set(try Org.ids(vault, PhotoQuery())) == [ids[0], ids[3], ids[4]])
        #expect(Set(try Org.ids(vault, PhotoQuery(hidden: .only))) == Set(ids[1..<3]))
        #expect(try vault.photo(matching: ids[1]).isHidden)  // direct access still works
        #expect(try vault.photos().count == 5)  // the full listing includes hidden photos
        #expect(try vault.setHidden(false, for: .query(PhotoQuery(hidden: .only))) == 2)
        #expect(try Org.ids(vault, PhotoQuery()).count == 5)

        // All or nothing: one unknown ID and nobody changes.
        #expect(vaultCode { try vault.setFavorite(true, for: [ids[3], ids[4], "0000ffff"]) } == .photoNotFound)
        #expect(vaultCode { try vault.setHidden(true, for: [ids[3], "zz"]) } == .photoNotFound)
        #expect(vaultCode { try vault.addTags(["x"], to: [ids[3], "0000"]) } == .photoNotFound)
        #expect(
            try vault.photos().filter { $0.isFavorite || $0.isHidden || !$0.tags.isEmpty }.map(\.id).sorted()
                == Array(ids[1..<3]).sorted())
        #expect(try vault.setFavorite(true, for: []) == 0)

        vault.lock()
        #expect(vaultCode { try vault.setFavorite(true, for: [ids[0]]) } == .locked)
        #expect(vaultCode { try vault.addTags(["x"], to: [ids[0]]) } == .locked)
    }

    /// A catalog written before v2-organisation (v1 only) is migrated on open: tags of the
    /// v1 JSON column move to `photoTag`, the unlock counter starts at 0, photos stay readable.
    @Test func upgradingAnOlderCatalog() throws {
        let sandbox = Sandbox()
        let source = try makeVault(sandbox)
        let photo = try Org.fixture(source, "sample.jpg")
        var row = try source.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        row.record.tags = ["  Paris", "beach", "paris", ""]
        let old = try makeOlderVault(sandbox, from: source, row: row, upTo: "v1") { db throws in
            #expect(try db.tableExists("photoTag") == false)
        }
        let vault = try Vault.open(at: old)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photo(matching: photo.id).tags == ["beach", "paris"])
        #expect(try vault.photos(matching: PhotoQuery(tag: "paris")).map(\.id) == [photo.id])
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.jpg"))
        #expect(try vault.failedUnlockCount() == 0)
        #expect(try vault.albums().isEmpty)
    }

    @Test func largeBatchesCrossTheParameterChunks() throws {
        // 1,200 photos (rows inserted through the import path's commit, without LOCA work) tagged,
        // favoured and hidden in single operations.
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let first = try Org.jpeg(vault, "seed.jpg")
        let template = try vault.db.read { db in try PhotoRow.fetchOne(db, id: first.id)! }
        try vault.db.write { db in
            for i in 0..<1199 {
                var row = template
                row.record.id = String(format: "%08x-0000-4000-8000-000000000000", i + 1)
                row.filePath = Vault.relativePath(row.record.id)
                try row.insert(db, keyRing: vault.keyRing)
            }
        }
        #expect(try vault.setFavorite(true, for: .query(PhotoQuery())) == 1200)
        #expect(try vault.addTags(["bulk"], to: .query(PhotoQuery(favorite: true))) == 1200)
        #expect(try vault.photoCount(matching: PhotoQuery(tag: "bulk")) == 1200)
        #expect(try vault.setHidden(true, for: .query(PhotoQuery(tag: "bulk", limit: 700))) == 700)
        #expect(try vault.photoCount(matching: PhotoQuery()) == 500)
    }
}
