import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

@Suite("Vault: albums")
struct AlbumTests {
    @Test func namesAreUniqueIgnoringCaseAndValidated() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let trip = try vault.createAlbum(named: "  Trip 2025  ")
        #expect(trip.name == "Trip 2025" && !trip.isPrivate && !trip.isLocked && trip.photoCount == 0)
        #expect(trip.coverPhotoID == nil && abs(trip.createdDate.timeIntervalSinceNow) < 60)
        #expect(UUID(uuidString: trip.id) != nil && trip.id == trip.id.lowercased())

        let dup = #expect(throws: VaultError.self) { try vault.createAlbum(named: "TRIP 2025") }
        #expect(dup?.code == .albumExists && dup?.message.contains("Trip 2025") == true)
        try vault.createAlbum(named: "Été")
        #expect(vaultCode { try vault.createAlbum(named: "ÉTÉ") } == .albumExists)
        // Decomposed "é" (e + combining acute) is the same name after NFC.
        #expect(vaultCode { try vault.createAlbum(named: "e\u{301}té") } == .albumExists)

        // 1 to 100 characters, no control characters.
        for bad in [
            "", "   ", "a\nb", "tab\there", "nul\u{0}", "\u{7F}", "rtl\u{202E}gpj.exe", "x\u{2028}y",
            String(repeating: "a", count: 101),
        ] {
            let e = #expect(throws: VaultError.self, "\(bad.debugDescription)") { try vault.createAlbum(named: bad) }
            #expect(e?.code == .invalidArgument, "\(bad.debugDescription)")
        }
        try vault.createAlbum(named: String(repeating: "é", count: 100))
        try vault.createAlbum(named: "Family 👨‍👩‍👧")  // ZWJ sequence: format characters are fine
        #expect(try vault.albums().map(\.name) == ["Family 👨‍👩‍👧", "Trip 2025", "Été", String(repeating: "é", count: 100)])

        // Found by name in any case or by ID; unknown names list the albums.
        #expect(try vault.album("trip 2025") == trip)
        #expect(try vault.album(trip.id) == trip)
        let missing = #expect(throws: VaultError.self) { _ = try vault.album("Nope") }
        #expect(missing?.code == .albumNotFound && missing?.message.contains("Trip 2025") == true)

        // Rename: a change of case is fine, another album's name is not.
        #expect(try vault.renameAlbum("trip 2025", to: "TRIP 2025").name == "TRIP 2025")
        #expect(vaultCode { try vault.renameAlbum("TRIP 2025", to: "été") } == .albumExists)
        #expect(vaultCode { try vault.renameAlbum("TRIP 2025", to: "a\u{0}") } == .invalidArgument)
        let renamed = try vault.renameAlbum(trip.id, to: "Road trip")
        #expect(renamed.id == trip.id && renamed.name == "Road trip")
        #expect(vaultCode { _ = try vault.album("Trip 2025") } == .albumNotFound)
        #expect(vaultCode { try vault.renameAlbum("Nope", to: "x") } == .albumNotFound)

        // Albums persist, and need the vault unlocked.
        vault.lock()
        #expect(vaultCode { _ = try vault.albums() } == .locked)
        #expect(vaultCode { try vault.createAlbum(named: "x") } == .locked)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.albums().count == 4)
    }

    @Test func copyAddsMoveRemovesFromTheSource() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let b = try Org.jpeg(vault, "b.jpg")
        let c = try Org.jpeg(vault, "c.jpg")
        try vault.createAlbum(named: "One")
        try vault.createAlbum(named: "Two")
        try vault.createAlbum(named: "Three")
        func members(_ album: String) throws -> Set<String> { Set(try Org.ids(vault, PhotoQuery(album: album))) }
        func counts() throws -> [String: Int] {
            Dictionary(uniqueKeysWithValues: try vault.albums().map { ($0.name, $0.photoCount ?? -1) })
        }

        #expect(try vault.addPhotos([a.id, b.id], toAlbum: "one") == 2)
        #expect(try vault.addPhotos([a.id, c.id], toAlbum: "one") == 1)  // a already there
        #expect(try members("One") == [a.id, b.id, c.id])

        // Copy: in both albums afterwards.
        #expect(try vault.copyPhotos([a.id, b.id], fromAlbum: "One", toAlbum: "Two") == 2)
        #expect(try members("One") == [a.id, b.id, c.id])
        #expect(try members("Two") == [a.id, b.id])
        #expect(try Set(vault.albums(containing: a.id).map(\.name)) == ["One", "Two"])

        // Move: out of the source, into the target.
        #expect(try vault.movePhotos([b.id], fromAlbum: "Two", toAlbum: "Three") == 1)
        #expect(try members("Two") == [a.id])
        #expect(try members("Three") == [b.id])
        #expect(try counts() == ["One": 3, "Two": 1, "Three": 1])

        // Moving or copying photos that are not in the source changes nothing at all.
        let notIn = #expect(throws: VaultError.self) {
            try vault.movePhotos([a.id, c.id], fromAlbum: "Two", toAlbum: "Three")
        }
        #expect(notIn?.code == .conflict && notIn?.message.contains(c.id) == true)
        #expect(vaultCode { try vault.copyPhotos([c.id], fromAlbum: "Three", toAlbum: "Two") } == .conflict)
        #expect(vaultCode { try vault.movePhotos([a.id], fromAlbum: "Two", toAlbum: "two") } == .invalidArgument)
        #expect(try counts() == ["One": 3, "Two": 1, "Three": 1])

        // Remove: out of that album only; the photos stay in the vault.
        #expect(try vault.removePhotos([a.id, b.id], fromAlbum: "One") == 2)
        #expect(vaultCode { try vault.removePhotos([a.id], fromAlbum: "One") } == .conflict)
        #expect(try members("One") == [c.id])
        #expect(try members("Two") == [a.id])
        #expect(try vault.photos().count == 3)

        // A query works as a selection: every jpeg not yet in "Three".
        #expect(try vault.addPhotos(.query(PhotoQuery(format: "jpeg")), toAlbum: "Three") == 2)
        #expect(try members("Three") == [a.id, b.id, c.id])
    }

    @Test func batchWithOneBadIDChangesNothing() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let ids = [
            "abcd0000-0000-4000-8000-000000000001", "abcd0000-0000-4000-8000-000000000002",
            "beef0000-0000-4000-8000-000000000003",
        ]
        let next = LockedBox(ids)
        vault.hooks = Vault.Hooks(makePhotoID: { next.popFirst() ?? UUID().uuidString.lowercased() })
        for i in 0..<3 { try Org.jpeg(vault, "p\(i).jpg") }
        try vault.createAlbum(named: "Album")

        let unknown = #expect(throws: VaultError.self) {
            try vault.addPhotos(["beef", ids[0], "ffff0000"], toAlbum: "Album")
        }
        #expect(unknown?.code == .photoNotFound)
        #expect(
            unknown?.message.contains("ffff0000") == true && unknown?.message.contains("nothing was changed") == true)
        let ambiguous = #expect(throws: VaultError.self) { try vault.addPhotos(["beef", "abcd"], toAlbum: "Album") }
        #expect(ambiguous?.code == .ambiguousPhoto && ambiguous?.message.contains("abcd") == true)
        let both = #expect(throws: VaultError.self) { try vault.addPhotos(["abcd", "nope!", "12"], toAlbum: "Album") }
        #expect(both?.code == .photoNotFound)
        #expect(
            both?.message.contains("abcd") == true && both?.message.contains("nope!") == true
                && both?.message.contains("\"12\"") == true)
        #expect(try vault.album("Album").photoCount == 0)

        // Unique prefixes, any case, duplicates once.
        #expect(
            try vault.addPhotos(["BEEF", "abcd0000-0000-4000-8000-000000000001", "beef0000"], toAlbum: "Album") == 2)
        #expect(try Set(Org.ids(vault, PhotoQuery(album: "Album"))) == [ids[0], ids[2]])
        #expect(vaultCode { try vault.addPhotos(["abcd"], toAlbum: "Nope") } == .albumNotFound)
    }

    @Test func coverMustBeAMemberAndIsClearedWhenItLeaves() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let b = try Org.jpeg(vault, "b.jpg")
        try vault.createAlbum(named: "Cats")
        try vault.addPhotos([a.id], toAlbum: "Cats")

        let notMember = #expect(throws: VaultError.self) { try vault.setCover(b.id, ofAlbum: "Cats") }
        #expect(notMember?.code == .conflict && notMember?.message.contains("Cats") == true)
        #expect(try vault.album("Cats").coverPhotoID == nil)
        #expect(try vault.setCover(String(a.id.prefix(8)), ofAlbum: "cats").coverPhotoID == a.id)
        #expect(try vault.setCover(nil, ofAlbum: "Cats").coverPhotoID == nil)
        #expect(vaultCode { try vault.setCover("ffff", ofAlbum: "Cats") } == .photoNotFound)

        // Leaving the album clears the cover; so does deleting the photo.
        try vault.setCover(a.id, ofAlbum: "Cats")
        try vault.removePhotos([a.id], fromAlbum: "Cats")
        #expect(try vault.album("Cats").coverPhotoID == nil)
        try vault.addPhotos([a.id, b.id], toAlbum: "Cats")
        try vault.setCover(b.id, ofAlbum: "Cats")
        try vault.deletePhotos([b.id])
        let cats = try vault.album("Cats")
        #expect(cats.coverPhotoID == nil && cats.photoCount == 1)
    }

    @Test func deletingAnAlbumKeepsItsPhotosUnlessAsked() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.fixture(vault, "sample.png")
        let b = try Org.fixture(vault, "sample.jpg")
        let c = try Org.jpeg(vault, "c.jpg")
        try vault.createAlbum(named: "Keep")
        try vault.createAlbum(named: "Drop")
        try vault.createAlbum(named: "Other")
        try vault.addPhotos([a.id, b.id], toAlbum: "Keep")
        try vault.addPhotos([b.id, c.id], toAlbum: "Drop")
        try vault.addPhotos([c.id], toAlbum: "Other")
        try vault.setCover(a.id, ofAlbum: "Keep")

        #expect(try vault.deleteAlbum("keep").isEmpty)
        #expect(try vault.albums().map(\.name) == ["Drop", "Other"])
        #expect(try vault.photos().count == 3)
        #expect(try vault.exportData(a.id) == Fixtures.bytes("sample.png"))
        #expect(files(under: sandbox.vault + "/photos").count == 3)

        // With its photos: rows, files and memberships elsewhere are gone.
        let deleted = try vault.deleteAlbum("Drop", deletePhotos: true)
        #expect(Set(deleted) == [b.id, c.id])
        #expect(try vault.photos().map(\.id) == [a.id])
        #expect(files(under: sandbox.vault + "/photos") == ["\(a.id.prefix(2))/\(a.id).loca"])
        #expect(try vault.album("Other").photoCount == 0)
        #expect(vaultCode { _ = try vault.exportData(b.id) } == .photoNotFound)
        #expect(vaultCode { try vault.deleteAlbum("Drop") } == .albumNotFound)
        #expect(try vault.albums().map(\.name) == ["Other"])
    }
}
