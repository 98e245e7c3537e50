import Foundation
import GRDB
import LocafotoCrypto
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

/// Photos made from others (`locafoto filter`, `locafoto compress`): the `derivedFrom` link,
/// album membership, tags and dates, replacement, and the v3-derived migration.
@Suite("Vault: derived photos")
struct DerivedTests {
    @Test func aFilteredCopyIsLinkedAndInTheSameAlbums() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let original = try Org.fixture(vault, "sample.jpg")
        try vault.createAlbum(named: "Trip")
        try vault.createAlbum(named: "Best")
        try vault.addPhotos([original.id], toAlbum: "Trip")
        try vault.addPhotos([original.id], toAlbum: "Best")
        _ = try vault.addTags(["beach"], to: [original.id])
        let taken = Date(timeIntervalSince1970: 1_700_000_000)
        try vault.db.write { db in
            try vault.reseal(db, original.id) { $0.captureDate = CatalogSeal.Fields.databaseText(taken) }
        }

        let copy = try vault.addDerived(
            Fixtures.jpegLike(500), from: original.id, name: "sample-sepia.jpg", placement: .beside)
        #expect(copy.derivedFrom == original.id)
        #expect(copy.id != original.id)
        #expect(copy.captureDate == taken && copy.tags == ["beach"] && copy.name == "sample-sepia.jpg")
        #expect(Set(try vault.albums(containing: copy.id).map(\.name)) == ["Best", "Trip"])
        #expect(try vault.derivedPhotos(of: original.id) == [copy.id])
        // The original is untouched.
        #expect(try vault.exportData(original.id) == Fixtures.bytes("sample.jpg"))
        #expect(try vault.photo(matching: original.id).derivedFrom == nil)
        // Deleting the original keeps the copy, unlinked.
        _ = try vault.deletePhotos([original.id])
        #expect(try vault.photo(matching: copy.id).derivedFrom == nil)
    }

    @Test func aCopyInAnAlbumOfItsOwn() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let original = try Org.jpeg(vault, "a.jpg")
        let copy = try vault.addDerived(
            Fixtures.jpegLike(50), from: original.id, name: "a.jpg", placement: .inAlbum("Compressed – Trip"))
        #expect(try vault.albums(containing: copy.id).map(\.name) == ["Compressed – Trip"])
        #expect(try vault.albums(containing: original.id).isEmpty)
        #expect(copy.derivedFrom == original.id)
    }

    @Test func aPrivateAlbumsPhotoGetsItsCopyInsideThatAlbumOnly() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let original = try Org.jpeg(vault, "p.jpg")
        try vault.createAlbum(named: "Diary", passphrase: secret("album passphrase"), kdf: .interactive)
        try vault.addPhotos([original.id], toAlbum: "Diary")
        let copy = try vault.addDerived(
            Fixtures.jpegLike(60), from: original.id, name: "p-noir.jpg", placement: .beside)
        #expect(try vault.albums(containing: copy.id).map(\.name) == ["Diary"])
        // Its key is under the album's: locked, the copy is as invisible as the original.
        try vault.lockAlbum("Diary")
        #expect(vaultCode { _ = try vault.exportData(copy.id) } != nil)
        try vault.unlockAlbum("Diary", passphrase: secret("album passphrase"))
        // A copy into another album would leave the album's protection: refused, nothing added.
        let count = try vault.photos().count
        #expect(
            vaultCode {
                _ = try vault.addDerived(
                    Fixtures.jpegLike(60), from: original.id, name: nil, placement: .inAlbum("Out"))
            } == .conflict)
        #expect(try vault.photos().count == count)
    }

    @Test func replacingTakesTheOriginalsPlace() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let original = try Org.jpeg(vault, "big.jpg", size: 5000)
        let earlier = try vault.addDerived(
            Fixtures.jpegLike(900), from: original.id, name: "big-fade.jpg", placement: .beside)
        try vault.createAlbum(named: "Trip")
        try vault.addPhotos([original.id], toAlbum: "Trip")
        _ = try vault.setCover(original.id, ofAlbum: "Trip")
        _ = try vault.setFavorite(true, for: [original.id])
        _ = try vault.addTags(["keep"], to: [original.id])

        let small = try vault.addDerived(
            Fixtures.jpegLike(1000), from: original.id, name: "big.jpg", placement: .replacing)
        #expect(vaultCode { _ = try vault.photo(matching: original.id) } == .photoNotFound)
        #expect(
            small.isFavorite && small.tags == ["keep"] && small.importDate == original.importDate
                && small.derivedFrom == nil)
        #expect(try vault.album("Trip").coverPhotoID == small.id)
        #expect(try vault.albums(containing: small.id).map(\.name) == ["Trip"])
        // Copies made from the original now point at its replacement.
        #expect(try vault.photo(matching: earlier.id).derivedFrom == small.id)
    }

    /// A vault made by the previous version (catalog up to v2-media, with an album and a tag)
    /// opens, migrates to v3-derived and loses nothing.
    @Test func aCatalogOfThePreviousVersionMigrates() throws {
        let sandbox = Sandbox()
        let source = try makeVault(sandbox)
        let photo = try Org.fixture(source, "sample.jpg")
        let row = try source.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        let old = try makeOlderVault(sandbox, from: source, row: row, upTo: "v2-media") { db in
            try db.execute(
                sql: """
                    INSERT INTO album (id, name, nameKey, createdDate, isPrivate) VALUES ('a1', 'Trip', 'trip', ?, 0);
                    INSERT INTO albumPhoto (albumId, photoId, addedDate) VALUES ('a1', ?, ?);
                    INSERT INTO photoTag (photoId, tag) VALUES (?, 'paris');
                    """, arguments: [Date(), photo.id, Date(), photo.id])
            #expect(try db.columns(in: "photo").contains { $0.name == "derivedFrom" } == false)
        }
        let vault = try Vault.open(at: old)
        try vault.unlock(passphrase: secret(testPassphrase))
        let p = try vault.photo(matching: photo.id)
        #expect(p.derivedFrom == nil && p.tags == ["paris"] && p.contentHash == photo.contentHash)
        #expect(try vault.albums(containing: photo.id).map(\.name) == ["Trip"])
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.jpg"))
        #expect(try vault.db.read { db in try db.columns(in: "photo").contains { $0.name == "derivedFrom" } })
        let copy = try vault.addDerived(Fixtures.jpegLike(100), from: photo.id, name: nil, placement: .beside)
        #expect(copy.derivedFrom == photo.id)
        #expect(try vault.albums(containing: copy.id).map(\.name) == ["Trip"])
    }
}
