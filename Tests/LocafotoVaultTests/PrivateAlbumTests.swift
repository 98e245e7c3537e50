import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoQuery
import Synchronization
import Testing

@testable import LocafotoVault

@Suite("Vault: private albums")
struct PrivateAlbumTests {
    static let pin = "2468"

    @discardableResult
    static func makePrivate(_ vault: Vault, _ name: String = "Private") throws -> AlbumInfo {
        try vault.createAlbum(named: name, passphrase: secret(pin), kdf: .interactive)
    }

    @Test func photosAreInvisibleAndUnreadableWhileTheAlbumIsLocked() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let open = try Org.fixture(vault, "sample.jpg")
        let hidden = try Org.fixture(vault, "sample.png", name: "diary.png")
        let album = try Self.makePrivate(vault)
        #expect(album.isPrivate && !album.isLocked && album.photoCount == 0)  // unlocked on creation
        try vault.addPhotos([hidden.id], toAlbum: "Private")
        try vault.addTags(["secret"], to: [hidden.id])
        try vault.setCover(hidden.id, ofAlbum: "private")
        #expect(try vault.album("Private").coverPhotoID == hidden.id)
        #expect(try vault.exportData(hidden.id) == Fixtures.bytes("sample.png"))

        try vault.lockAlbum("private")
        // Invisible in every listing and query.
        #expect(try vault.photos().map(\.id) == [open.id])
        #expect(try Org.ids(vault, PhotoQuery(hidden: .include)) == [open.id])
        #expect(try Org.ids(vault, PhotoQuery(text: "diary")).isEmpty)
        #expect(try vault.photoCount(matching: PhotoQuery()) == 1)
        #expect(try vault.allTags().isEmpty)
        #expect(try vault.photo(withContentHash: hidden.contentHash) == nil)
        let listed = try vault.album("Private")
        #expect(listed.isLocked && listed.photoCount == nil && listed.coverPhotoID == nil)
        #expect(vaultCode { _ = try vault.photos(matching: PhotoQuery(album: "Private")) } == .albumLocked)

        // Unreadable, with the album named.
        let out = try sandbox.directory("out")
        let e = #expect(throws: VaultError.self) { _ = try vault.exportData(hidden.id) }
        #expect(e?.code == .albumLocked && e?.message.contains("\"Private\"") == true)
        #expect(vaultCode { _ = try vault.export(hidden.id, toDirectory: out) } == .albumLocked)
        #expect(vaultCode { try vault.streamPhoto(hidden.id) { _ in } } == .albumLocked)
        #expect(vaultCode { _ = try vault.encryptedFile(hidden.id) } == .albumLocked)
        #expect(vaultCode { _ = try vault.photo(matching: hidden.id) } == .albumLocked)
        #expect(files(under: out).isEmpty)
        // Nor can it be changed through a batch operation.
        let batch = #expect(throws: VaultError.self) { try vault.setFavorite(true, for: [open.id, hidden.id]) }
        #expect(batch?.code == .albumLocked && batch?.message.contains("Private") == true)
        #expect(vaultCode { try vault.deletePhotos([hidden.id]) } == .albumLocked)
        #expect(try !vault.photo(matching: open.id).isFavorite)
        #expect(vaultCode { try vault.renameAlbum("Private", to: "P") } == .albumLocked)
        #expect(vaultCode { try vault.removePhotos([hidden.id], fromAlbum: "Private") } == .albumLocked)

        // Visible and readable after unlocking.
        try vault.unlockAlbum("PRIVATE", passphrase: secret(Self.pin))
        #expect(Set(try vault.photos().map(\.id)) == [open.id, hidden.id])
        #expect(try Org.ids(vault, PhotoQuery(album: "Private")) == [hidden.id])
        #expect(try vault.exportData(hidden.id) == Fixtures.bytes("sample.png"))
        #expect(try readFile(try vault.export(hidden.id, toDirectory: out)) == Fixtures.bytes("sample.png"))
        #expect(try vault.album("Private").photoCount == 1)

        // Locking the vault locks the albums; a new instance starts with them locked.
        vault.lock()
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photos().map(\.id) == [open.id])
        let other = try Vault.open(at: sandbox.vault)
        try other.unlock(passphrase: secret(testPassphrase))
        #expect(try other.album("Private").isLocked)
        #expect(vaultCode { _ = try other.exportData(hidden.id) } == .albumLocked)
    }

    @Test func theMasterKeyAloneCannotUnwrapAPrivatePhotoKey() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let photo = try Org.fixture(vault, "sample.heic")
        let before = try vault.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        let master = try vault.requireMasterKey()
        let photoKey = try KeyWrap.unwrap(before.wrappedKey, with: master, aad: Array(photo.id.utf8))

        let album = try Self.makePrivate(vault)
        try vault.addPhotos([photo.id], toAlbum: album.name)
        let after = try vault.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        #expect(after.privateAlbumId == album.id)
        #expect(after.wrappedKey != before.wrappedKey)
        // Not under the master key, with either associated data.
        #expect(throws: (any Error).self) {
            _ = try KeyWrap.unwrap(after.wrappedKey, with: master, aad: Array(photo.id.utf8))
        }
        #expect(throws: (any Error).self) {
            _ = try KeyWrap.unwrap(
                after.wrappedKey, with: master, aad: Vault.albumPhotoKeyAAD(albumID: album.id, photoID: photo.id))
        }
        // The album key row needs the passphrase as well: the master key only removes the outer layer.
        let wrappedAlbumKey = try vault.db.read { db in
            try [UInt8](
                Data.fetchOne(db, sql: "SELECT wrappedAlbumKey FROM album WHERE id = ?", arguments: [album.id])!)
        }
        let inner = try KeyWrap.unwrap(wrappedAlbumKey, with: master, aad: Vault.albumKeyAAD(album.id))
        #expect(inner.count == KeyWrap.overhead + 32)
        #expect(throws: (any Error).self) {
            _ = try KeyWrap.unwrap(
                after.wrappedKey, with: inner, aad: Vault.albumPhotoKeyAAD(albumID: album.id, photoID: photo.id))
        }
        // With the album key (unlocked) it unwraps to the same photo key.
        let albumKey = try #require(vault.unlockedAlbums.withLock { $0[album.id] })
        let unwrapped = try KeyWrap.unwrap(
            after.wrappedKey, with: albumKey, aad: Vault.albumPhotoKeyAAD(albumID: album.id, photoID: photo.id))
        #expect(unwrapped.constantTimeEquals(photoKey))

        // Leaving the album wraps it under the master key again.
        try vault.removePhotos([photo.id], fromAlbum: album.name)
        let back = try vault.db.read { db in try PhotoRow.fetchOne(db, id: photo.id)! }
        #expect(back.privateAlbumId == nil)
        #expect(
            try KeyWrap.unwrap(back.wrappedKey, with: master, aad: Array(photo.id.utf8)).constantTimeEquals(photoKey))
        try vault.lockAlbum(album.name)
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.heic"))
    }

    @Test func wrongPassphrasesAreThrottledPerAlbum() throws {
        let sandbox = Sandbox()
        let clock = TestClock()
        let vault = try makeVault(sandbox)
        clock.install(vault)
        let photo = try Org.jpeg(vault, "p.jpg")
        try Self.makePrivate(vault, "One")
        try Self.makePrivate(vault, "Two")
        try vault.addPhotos([photo.id], toAlbum: "One")
        try vault.lockAlbum("One")
        try vault.lockAlbum("Two")
        clock.derivations.mutate { $0 = 0 }

        for _ in 1...3 {
            let e = #expect(throws: VaultError.self) { try vault.unlockAlbum("One", passphrase: secret("1111")) }
            #expect(e?.code == .wrongPassphrase && e?.message.contains("One") == true)
        }
        let throttled = #expect(throws: VaultError.self) { try vault.unlockAlbum("One", passphrase: secret(Self.pin)) }
        #expect(throttled?.code == .throttled && throttled?.message.contains("\"One\"") == true)
        #expect(clock.derivations.value == 3)  // the refused attempt derived nothing
        #expect(try vault.albumUnlockDelay("One") > 0)
        #expect(try vault.albumUnlockDelay("Two") == 0)
        #expect(try vault.failedUnlockCount() == 0)  // the vault's own count is separate
        // Another album is not affected.
        try vault.unlockAlbum("two", passphrase: secret(Self.pin))
        #expect(!(try vault.album("Two").isLocked))

        clock.advance(1)
        try vault.unlockAlbum("One", passphrase: secret(Self.pin))
        #expect(try vault.photos().map(\.id) == [photo.id])
        #expect(try vault.albumUnlockDelay("One") == 0)
        #expect(clock.derivations.value == 5)
        // Unlocking an unlocked album does nothing (no derivation).
        try vault.unlockAlbum("One", passphrase: secret(Self.pin))
        #expect(clock.derivations.value == 5)

        #expect(vaultCode { try vault.unlockAlbum("Nope", passphrase: secret(Self.pin)) } == .albumNotFound)
        try vault.createAlbum(named: "Plain")
        #expect(vaultCode { try vault.unlockAlbum("Plain", passphrase: secret(Self.pin)) } == .invalidArgument)
        #expect(vaultCode { try vault.createAlbum(named: "Empty pass", passphrase: secret("")) } == .invalidArgument)
        vault.lock()
        #expect(vaultCode { try vault.unlockAlbum("One", passphrase: secret(Self.pin)) } == .locked)
    }

    @Test func aPrivatePhotoIsInNoOtherAlbum() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.fixture(vault, "sample.jpg")
        let b = try Org.fixture(vault, "sample.webp")
        try Self.makePrivate(vault, "Vault A")
        try Self.makePrivate(vault, "Vault B")
        try vault.createAlbum(named: "Public")
        try vault.addPhotos([a.id], toAlbum: "Public")
        try vault.addPhotos([b.id], toAlbum: "Vault A")

        // Into a private album while in another album: refused, nothing changes.
        let into = #expect(throws: VaultError.self) { try vault.addPhotos([a.id, b.id], toAlbum: "Vault B") }
        #expect(
            into?.code == .conflict && into?.message.contains("Public") == true
                && into?.message.contains("Vault A") == true)
        #expect(vaultCode { try vault.copyPhotos([a.id], fromAlbum: "Public", toAlbum: "Vault A") } == .conflict)
        // Out of a private album into another without leaving it: refused.
        #expect(vaultCode { try vault.addPhotos([b.id], toAlbum: "Public") } == .conflict)
        #expect(vaultCode { try vault.copyPhotos([b.id], fromAlbum: "Vault A", toAlbum: "Public") } == .conflict)
        #expect(try vault.album("Public").photoCount == 1 && vault.album("Vault A").photoCount == 1)
        #expect(try vault.album("Vault B").photoCount == 0)

        // Moving is the way in and out, re-wrapping the key each time.
        try vault.movePhotos([a.id], fromAlbum: "Public", toAlbum: "Vault B")
        try vault.movePhotos([b.id], fromAlbum: "Vault A", toAlbum: "Vault B")
        #expect(try Set(Org.ids(vault, PhotoQuery(album: "Vault B"))) == [a.id, b.id])
        try vault.movePhotos([a.id], fromAlbum: "Vault B", toAlbum: "Public")
        try vault.lockAlbum("Vault B")
        #expect(try vault.photos().map(\.id) == [a.id])
        #expect(try vault.exportData(a.id) == Fixtures.bytes("sample.jpg"))
        #expect(vaultCode { _ = try vault.exportData(b.id) } == .albumLocked)
        // Moving needs the private album unlocked.
        #expect(vaultCode { try vault.movePhotos([a.id], fromAlbum: "Public", toAlbum: "Vault B") } == .albumLocked)
    }

    @Test func deletingAPrivateAlbum() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.fixture(vault, "sample.png")
        let b = try Org.fixture(vault, "sample.gif")
        try Self.makePrivate(vault, "Keep photos")
        try Self.makePrivate(vault, "Burn")
        try vault.addPhotos([a.id], toAlbum: "Keep photos")
        try vault.addPhotos([b.id], toAlbum: "Burn")
        try vault.lockAlbum("Keep photos")
        try vault.lockAlbum("Burn")

        // Keeping the photos needs the album unlocked (their keys move back under the master key).
        #expect(vaultCode { try vault.deleteAlbum("Keep photos") } == .albumLocked)
        try vault.unlockAlbum("Keep photos", passphrase: secret(Self.pin))
        #expect(try vault.deleteAlbum("Keep photos").isEmpty)
        #expect(try vault.photos().map(\.id) == [a.id])
        #expect(try vault.exportData(a.id) == Fixtures.bytes("sample.png"))

        // Destroying it with its photos works locked: the passphrase protects nothing any more.
        #expect(try vault.deleteAlbum("Burn", deletePhotos: true) == [b.id])
        #expect(try vault.albums().isEmpty)
        #expect(files(under: sandbox.vault + "/photos") == ["\(a.id.prefix(2))/\(a.id).loca"])
        let zeroed = try vault.db.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM photo WHERE privateAlbumId IS NOT NULL")
        }
        #expect(zeroed == 0)
    }
}
