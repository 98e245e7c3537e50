import Foundation
import GRDB
import LocafotoCrypto
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

/// The sealed catalog (v4-sealed, CatalogSeal.swift) on real SQLite files: what the file shows
/// to someone holding the disk without the passphrase, the first-unlock migration of a clear
/// catalog, and records that do not open.
@Suite("Vault: sealed catalog")
struct SealedCatalogTests {
    /// Strings that describe the photos of `populate`; none may appear in the catalog's files.
    static let secrets = [
        "Holiday-Secret-Name", "zebratagunique", "Secret-Album-Name", "Hidden-Private-Album", "UniqueCamMake",
        "UniqueCamModel", "Alice-Sender-Name", "Private-Photo-Name",
    ]

    /// A vault with a named photo from a peer, a tag, camera data, an album and a private album.
    static func populate(_ vault: Vault) throws -> (photo: PhotoRecord, secretPhoto: PhotoRecord) {
        let importer = try vault.beginImport(name: "Holiday-Secret-Name.jpg")
        try importer.write(Fixtures.bytes("sample.jpg"))
        let photo = try importer.finish(senderFingerprint: nil, senderName: "Alice-Sender-Name")
        _ = try vault.addTags(["zebratagunique"], to: [photo.id])
        try vault.recordMedia(
            photo.id,
            PhotoMetadata(
                width: 640, height: 480, orientation: 1, captureDate: Date(timeIntervalSince1970: 1_600_000_000),
                cameraMake: "UniqueCamMake", cameraModel: "UniqueCamModel", hasLocation: true),
            thumbnail: nil)
        try vault.createAlbum(named: "Secret-Album-Name")
        _ = try vault.addPhotos([photo.id], toAlbum: "Secret-Album-Name")
        let secretPhoto = try Org.jpeg(vault, "Private-Photo-Name.jpg")
        try vault.createAlbum(named: "Hidden-Private-Album", passphrase: secret("album pin"), kdf: .interactive)
        _ = try vault.addPhotos([secretPhoto.id], toAlbum: "Hidden-Private-Album")
        return (try vault.photo(matching: photo.id), secretPhoto)
    }

    /// Every byte of catalog.sqlite and its WAL, as someone with the disk reads them.
    static func catalogBytes(_ vault: String) -> [UInt8] {
        ["", "-wal"].flatMap { suffix in
            (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: vault + "/catalog.sqlite" + suffix)))) ?? []
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in
            haystack[i..<i + needle.count].elementsEqual(needle)
        }
    }

    @Test func nothingThatDescribesAPhotoIsReadableWithoutThePassphrase() throws {
        let sandbox = Sandbox()
        let photo: PhotoRecord
        do {
            let vault = try makeVault(sandbox)
            photo = try Self.populate(vault).photo
            #expect(
                photo.name == "Holiday-Secret-Name.jpg" && photo.tags == ["zebratagunique"]
                    && photo.senderName == "Alice-Sender-Name")
            vault.lock()
        }
        let bytes = Self.catalogBytes(sandbox.vault)
        #expect(!bytes.isEmpty)
        for s in Self.secrets {
            #expect(!Self.contains(bytes, Array(s.utf8)), "\(s) is readable in catalog.sqlite")
        }
        #expect(!Self.contains(bytes, photo.contentHash), "the plaintext hash is readable")
        #expect(!Self.contains(bytes, Array(Hex.encode(photo.contentHash).utf8)))
        #expect(!Self.contains(bytes, Array("2020-09-13".utf8)), "the capture date is readable")

        // With sqlite itself (no keys): the clear columns are placeholders, photoTag is empty.
        let plain = try DatabaseQueue(path: sandbox.vault + "/catalog.sqlite")
        try plain.read { db in
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT name, format, captureDate, cameraMake, hasLocation, senderName, tags, length(sealed) AS n FROM photo WHERE id = ?",
                arguments: [photo.id])!
            #expect(row["name"] == nil as String? && row["format"] == "" && row["captureDate"] == nil as String?)
            #expect(
                row["cameraMake"] == nil as String? && row["hasLocation"] == nil as Bool?
                    && row["senderName"] == nil as String?)
            #expect(row["tags"] == "[]" && (row["n"] as Int? ?? 0) > 40)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM photoTag") == 0)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM album") == ["", ""])
        }
        try plain.close()

        // With the passphrase everything is back, in another instance.
        let vault = try Vault.open(at: sandbox.vault)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photo(matching: photo.id) == photo)
        #expect(try vault.mediaInfo(photo.id).cameraMake == "UniqueCamMake")
        #expect(try vault.albums().map(\.name) == ["Hidden-Private-Album", "Secret-Album-Name"])
        #expect(try vault.photos(matching: PhotoQuery(tag: "zebratagunique")).map(\.id) == [photo.id])
        #expect(try vault.photos(matching: PhotoQuery(text: "secret-name")).map(\.id) == [photo.id])
        #expect(try vault.allTags() == [TagCount(tag: "zebratagunique", photoCount: 1)])
    }

    /// A private album's photos are sealed under a key from the album's key: the vault's
    /// passphrase alone does not open their records.
    @Test func aLockedPrivateAlbumsRecordsStaySealedUnderItsKey() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let secretPhoto = try Self.populate(vault).secretPhoto
        try vault.lockAlbum("Hidden-Private-Album")
        let row = try vault.db.read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT p.sealed, c.available, c.name FROM main.photo p JOIN clearPhoto c ON c.id = p.id WHERE p.id = ?",
                arguments: [secretPhoto.id])!
        }
        let sealed: Data = row["sealed"]
        #expect(sealed.first == CatalogSeal.KeyClass.privateAlbum.rawValue)
        #expect(row["available"] == false && row["name"] == nil as String?)
        #expect(vault.keyRing.openPhoto(id: secretPhoto.id, privateAlbum: nil, sealed: sealed) == nil)
        #expect(try vault.allTags().count == 1)  // the public photo's only

        try vault.unlockAlbum("Hidden-Private-Album", passphrase: secret("album pin"))
        #expect(try vault.photo(matching: secretPhoto.id).name == "Private-Photo-Name.jpg")
        // Out of the album, the record moves back under the vault's key.
        _ = try vault.movePhotos([secretPhoto.id], fromAlbum: "Hidden-Private-Album", toAlbum: "Secret-Album-Name")
        let moved: Data = try vault.db.read {
            try Data.fetchOne($0, sql: "SELECT sealed FROM main.photo WHERE id = ?", arguments: [secretPhoto.id])!
        }
        #expect(moved.first == CatalogSeal.KeyClass.vault.rawValue)
        try vault.lockAlbum("Hidden-Private-Album")
        #expect(try vault.photo(matching: secretPhoto.id).name == "Private-Photo-Name.jpg")
    }

    /// A record copied onto another photo's row does not open there (its id is in the aad): the
    /// photo shows without metadata instead of with another photo's.
    @Test func aRecordMovedToAnotherRowDoesNotOpen() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let b = try Org.jpeg(vault, "b.jpg")
        try vault.db.write { db in
            try db.execute(
                sql: "UPDATE main.photo SET sealed = (SELECT sealed FROM main.photo WHERE id = ?) WHERE id = ?",
                arguments: [a.id, b.id])
        }
        let damaged = try vault.photo(matching: b.id)
        #expect(damaged.name == nil && damaged.contentHash.isEmpty)
        #expect(try vault.photo(matching: a.id).name == "a.jpg")
        #expect(vaultCode { _ = try vault.addTags(["x"], to: [b.id]) } == .corrupt)
    }

    /// A catalog of the previous version (v3-derived, everything in clear) opens locked as it
    /// was, and is sealed at the first unlock, in one transaction, without loss; afterwards the
    /// clear text is gone from the file.
    @Test func aClearCatalogIsSealedAtTheFirstUnlock() throws {
        let sandbox = Sandbox()
        let source = try makeVault(sandbox)
        let photo = try Org.fixture(source, "sample.jpg", name: "Holiday-Secret-Name.jpg")
        var row = try source.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        row.record.senderName = "Alice-Sender-Name"
        let old = try makeOlderVault(sandbox, from: source, row: row, upTo: "v3-derived") { db in
            try db.execute(
                sql: """
                    INSERT INTO album (id, name, nameKey, createdDate, isPrivate) VALUES ('a1', 'Secret-Album-Name', 'secret-album-name', ?, 0);
                    INSERT INTO albumPhoto (albumId, photoId, addedDate) VALUES ('a1', ?, ?);
                    INSERT INTO photoTag (photoId, tag) VALUES (?, 'zebratagunique');
                    UPDATE photo SET cameraMake = 'UniqueCamMake', hasLocation = 1 WHERE id = ?;
                    """, arguments: [Date(), photo.id, Date(), photo.id, photo.id])
        }
        #expect(Self.contains(Self.catalogBytes(old), Array("Secret-Album-Name".utf8)))

        // A failure before the commit leaves the clear catalog as it was; the next unlock seals.
        let vault = try Vault.open(at: old)
        vault.hooks.beforeSealCommit = { throw InjectedCrash() }
        #expect(throws: (any Error).self) { try vault.unlock(passphrase: secret(testPassphrase)) }
        #expect(!vault.isUnlocked)
        #expect(
            try vault.db.read {
                try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM photo WHERE sealed IS NULL AND name IS NOT NULL")
            } == 1)
        vault.hooks.beforeSealCommit = nil
        try vault.unlock(passphrase: secret(testPassphrase))

        let p = try vault.photo(matching: photo.id)
        #expect(
            p.name == "Holiday-Secret-Name.jpg" && p.tags == ["zebratagunique"] && p.senderName == "Alice-Sender-Name")
        #expect(p.contentHash == photo.contentHash && p.captureDate == photo.captureDate)
        #expect(try vault.mediaInfo(photo.id).cameraMake == "UniqueCamMake")
        #expect(try vault.photos(matching: PhotoQuery(hasLocation: true)).map(\.id) == [photo.id])
        #expect(try vault.albums(containing: photo.id).map(\.name) == ["Secret-Album-Name"])
        #expect(try vault.album("secret-album-name").name == "Secret-Album-Name")
        #expect(vaultCode { try vault.createAlbum(named: "SECRET-album-name") } == .albumExists)
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.jpg"))
        // The photo is found as a duplicate by its hash, as before.
        #expect(try vault.photo(withContentHash: photo.contentHash)?.id == photo.id)

        let bytes = Self.catalogBytes(old)
        for s in ["Holiday-Secret-Name", "zebratagunique", "Secret-Album-Name", "UniqueCamMake", "Alice-Sender-Name"] {
            #expect(!Self.contains(bytes, Array(s.utf8)), "\(s) is still readable after sealing")
        }
        #expect(!Self.contains(bytes, photo.contentHash))
    }

    /// A photo of a private album in a clear catalog: sealed under the vault's key at the first
    /// unlock (the album's key is not there), invisible while its album is locked, and moved
    /// under the album's key at the album's next unlock, without loss (formats.md "Sealed
    /// catalog").
    @Test func aPrivateAlbumsPhotoOfAClearCatalogMovesUnderTheAlbumKeyAtItsUnlock() throws {
        let sandbox = Sandbox()
        let source = try makeVault(sandbox)
        let photo = try Org.fixture(source, "sample.jpg", name: "Private-Legacy-Name.jpg")
        try source.createAlbum(named: "Legacy-Diary", passphrase: secret("album pin"), kdf: .interactive)
        _ = try source.addPhotos([photo.id], toAlbum: "Legacy-Diary")
        // The photo row as stored now: its key wrapped under the album key, `privateAlbumId` set.
        var row = try source.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        row.record.tags = ["diarytagunique"]  // the older catalog's trigger files it in photoTag too
        let album = try source.db.read { db in
            try AlbumRow.fetchOne(db, sql: "SELECT * FROM album WHERE isPrivate = 1")!
        }
        let old = try makeOlderVault(sandbox, from: source, row: row, upTo: "v3-derived") { db in
            try db.execute(
                sql: """
                    INSERT INTO album (id, name, nameKey, createdDate, isPrivate, wrappedAlbumKey, kdfAlgorithm, kdfSalt, kdfOpsLimit, kdfMemLimit)
                    VALUES (?, 'Legacy-Diary', 'legacy-diary', ?, 1, ?, ?, ?, ?, ?);
                    UPDATE photo SET privateAlbumId = ? WHERE id = ?;
                    INSERT INTO albumPhoto (albumId, photoId, addedDate) VALUES (?, ?, ?);
                    """,
                arguments: [
                    album.id, Date(), album.wrappedAlbumKey, album.kdfAlgorithm, album.kdfSalt, album.kdfOpsLimit,
                    album.kdfMemLimit,
                    album.id, photo.id, album.id, photo.id, Date(),
                ])
        }
        let vault = try Vault.open(at: old)
        try vault.unlock(passphrase: secret(testPassphrase))
        func keyClass() throws -> UInt8? {
            try vault.db.read {
                try Data.fetchOne($0, sql: "SELECT sealed FROM main.photo WHERE id = ?", arguments: [photo.id])
            }?.first
        }
        #expect(try keyClass() == CatalogSeal.KeyClass.vault.rawValue, "sealed under the vault key first")
        #expect(try vault.photos().isEmpty, "invisible while its album is locked")
        for s in ["Private-Legacy-Name", "diarytagunique"] {
            #expect(!Self.contains(Self.catalogBytes(old), Array(s.utf8)), "\(s) is still readable after sealing")
        }

        try vault.unlockAlbum("Legacy-Diary", passphrase: secret("album pin"))
        #expect(
            try keyClass() == CatalogSeal.KeyClass.privateAlbum.rawValue, "under the album's key once it is unlocked")
        let p = try vault.photo(matching: photo.id)
        #expect(
            p.name == "Private-Legacy-Name.jpg" && p.tags == ["diarytagunique"] && p.contentHash == photo.contentHash)
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.jpg"))

        // Locked again: the vault key alone no longer opens it; reopened: still there.
        try vault.lockAlbum("Legacy-Diary")
        #expect(try vault.photos().isEmpty)
        let sealed = try #require(
            try vault.db.read {
                try Data.fetchOne($0, sql: "SELECT sealed FROM main.photo WHERE id = ?", arguments: [photo.id])
            })
        #expect(sealed.first == CatalogSeal.KeyClass.privateAlbum.rawValue)
        #expect(
            vault.keyRing.openPhoto(id: photo.id, privateAlbum: nil, sealed: sealed) == nil,
            "the vault key alone no longer opens it")
        try vault.unlockAlbum("Legacy-Diary", passphrase: secret("album pin"))
        #expect(try vault.photo(matching: photo.id).name == "Private-Legacy-Name.jpg")
    }

    /// The vector of protocol/formats.md "Sealed catalog", computed with PyNaCl.
    @Test func theFormatsVectorOpens() throws {
        let ring = CatalogKeyRing()
        ring.unlock(master: SecretBytes(copying: Array(0..<32) as [UInt8]))
        let payload =
            #"{"captureDate":"2024-05-01 12:00:00.000","contentHash":"abababababababababababababababababababababababababababababababab","format":"jpeg","height":3024,"name":"beach.jpg","tags":["holiday"],"width":4032}"#
        let sealed = Data(
            Hex.decode(
                "0124242424242424242424242424242424242424242424242461919ca67c243b370b1126d3da2702eebb212367a2bd8ac6c2954915c1697c88cf6fe6b677965ed7c2a898caf8c13f6922ee40e5ac35c7a862807445b8751af946970e30fea3e098b7602dfae7d153f7382f4262b01e8950b6e333036ef15d3148809ea990089030c1b88d8b006548774b2469dbbd59daa7e67d1ccb5ea361a85b654b8c29c0adfb429d3534a56b18cc13d0f215245bad8287e7e4628af1b30b02fffc7b48a7f485ea21f0d083f17afd00043404d98bfb79c316eab4e51de03d10a478e06dd06402c1e3c3ba7605a1b286c60fe051d889a9f3b619"
            )!)
        let id = "aa00b2cb-1741-4d94-8453-ecf4a3f1a6fb"
        #expect(ring.openPhoto(id: id, privateAlbum: nil, sealed: sealed) == payload)
        #expect(ring.openPhoto(id: "aa00b2cb-1741-4d94-8453-ecf4a3f1a6fc", privateAlbum: nil, sealed: sealed) == nil)
        // This implementation writes the same JSON for these fields.
        var fields = try JSONDecoder().decode(CatalogSeal.Fields.self, from: Data(payload.utf8))
        #expect(String(decoding: try fields.json(), as: UTF8.self) == payload)
        fields.tags = []
        #expect(String(decoding: try fields.json(), as: UTF8.self) != payload)
        let album = Data(
            Hex.decode(
                "242424242424242424242424242424242424242424242424f648bdc9460260f529b24626db65c2d7a0a10365efd4d76a133961c5"
            )!)
        #expect(ring.openAlbumName(id: "5d0c3f4e-9a41-4b7e-8f00-3c2d1e0f9a8b", sealed: album) == "Holiday 2024")
        #expect(
            try ring.blindNameKey(Vault.nameKey("Holiday 2024"))
                == "8bc087a0795900befa48ed432a3e12402b71b49fabaaaad371293598316d0ee5")
    }
}
