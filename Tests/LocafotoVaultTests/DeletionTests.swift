import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

@Suite("Vault: deleting photos")
struct DeletionTests {
    /// A fake thumbnail where the thumbnail code will put one.
    static func plantThumbnail(_ sandbox: Sandbox, _ id: String) throws -> String {
        let rel = "thumbs/\(id.prefix(2))/\(id).loca"
        try FileManager.default.createDirectory(
            atPath: sandbox.vault + "/thumbs/\(id.prefix(2))", withIntermediateDirectories: true)
        _ = try sandbox.write(
            "vault/" + rel, try LOCA.seal(plaintext: [9, 9, 9], key: SecretBytes(randomCount: 32), timestamp: 0))
        return rel
    }

    static func catalogBytes(_ sandbox: Sandbox) throws -> [UInt8] {
        var all: [UInt8] = []
        for suffix in ["", "-wal"] {
            if let b = try? readFile(sandbox.vault + "/catalog.sqlite" + suffix) { all += b }
        }
        return all
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    @Test func deleteRemovesRowKeyFileAndThumbnail() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let keep = try Org.fixture(vault, "sample.jpg")
        let gone = try Org.fixture(vault, "sample.png")
        let thumb = try Self.plantThumbnail(sandbox, gone.id)
        let keepThumb = try Self.plantThumbnail(sandbox, keep.id)
        try vault.createAlbum(named: "A")
        try vault.addPhotos([keep.id, gone.id], toAlbum: "A")
        try vault.setCover(gone.id, ofAlbum: "A")
        try vault.addTags(["t"], to: [keep.id, gone.id])
        let wrappedKey = try vault.db.read { db in try PhotoRow.fetchOne(db, id: gone.id)!.wrappedKey }
        #expect(Self.contains(try Self.catalogBytes(sandbox), wrappedKey))  // the check below means something

        #expect(try vault.deletePhotos([String(gone.id.prefix(6))]) == [gone.id])

        // No row, no file, no thumbnail, no trace in photos/; the other photo is untouched.
        #expect(vaultCode { _ = try vault.photo(matching: gone.id) } == .photoNotFound)
        #expect(files(under: sandbox.vault + "/photos") == ["\(keep.id.prefix(2))/\(keep.id).loca"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.vault + "/" + thumb))
        #expect(FileManager.default.fileExists(atPath: sandbox.vault + "/" + keepThumb))
        #expect(try vault.album("A").photoCount == 1 && vault.album("A").coverPhotoID == nil)
        #expect(try vault.allTags() == [TagCount(tag: "t", photoCount: 1)])
        #expect(try vault.exportData(keep.id) == Fixtures.bytes("sample.jpg"))
        // The wrapped key is gone from the catalog files: zeroed, secure_delete, WAL truncated.
        #expect(!Self.contains(try Self.catalogBytes(sandbox), wrappedKey))
        let leftovers = try vault.db.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT (SELECT COUNT(*) FROM albumPhoto WHERE photoId = ?) + (SELECT COUNT(*) FROM clearTag WHERE photoId = ?)",
                arguments: [gone.id, gone.id])
        }
        #expect(leftovers == 0)

        // Deleting by query; an empty selection deletes nothing.
        #expect(try vault.deletePhotos(.query(PhotoQuery(tag: "nothing"))).isEmpty)
        #expect(try vault.deletePhotos(.query(PhotoQuery(tag: "t"))) == [keep.id])
        #expect(files(under: sandbox.vault + "/photos").isEmpty)
        #expect(try vault.photos().isEmpty)
    }

    @Test func oneBadIDDeletesNothing() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let b = try Org.jpeg(vault, "b.jpg")
        let e = #expect(throws: VaultError.self) { try vault.deletePhotos([a.id, b.id, "deadbeef"]) }
        #expect(e?.code == .photoNotFound && e?.message.contains("deadbeef") == true)
        #expect(try vault.photos().count == 2)
        #expect(files(under: sandbox.vault + "/photos").count == 2)
        vault.lock()
        #expect(vaultCode { try vault.deletePhotos([a.id]) } == .locked)
    }

    /// A crash after the catalog deletion committed and before the files were unlinked leaves
    /// orphan files; the next open sweeps them (photo and thumbnail).
    @Test func crashBetweenCommitAndUnlinkIsSweptOnOpen() throws {
        struct Crash: Error {}
        let sandbox = Sandbox()
        let keep: PhotoRecord
        let gone: PhotoRecord
        let thumb: String
        do {
            let vault = try makeVault(sandbox)
            keep = try Org.fixture(vault, "sample.webp")
            gone = try Org.fixture(vault, "sample.gif")
            thumb = try Self.plantThumbnail(sandbox, gone.id)
            let seen = LockedBox<[String]>([])
            vault.hooks = Vault.Hooks(afterDeleteCommit: { ids in
                seen.mutate { $0 += ids }
                throw Crash()
            })
            #expect(throws: Crash.self) { try vault.deletePhotos([gone.id]) }
            #expect(seen.value == [gone.id])
            // Committed: the row is gone, the files are still there.
            #expect(vaultCode { _ = try vault.photo(matching: gone.id) } == .photoNotFound)
            #expect(files(under: sandbox.vault + "/photos").count == 2)
            #expect(FileManager.default.fileExists(atPath: sandbox.vault + "/" + thumb))
        }
        let vault = try Vault.open(at: sandbox.vault)
        #expect(vault.recovery.removedOrphanPhotos == ["photos/\(gone.id.prefix(2))/\(gone.id).loca"])
        #expect(vault.recovery.removedOrphanThumbnails == [thumb])
        #expect(files(under: sandbox.vault + "/photos") == ["\(keep.id.prefix(2))/\(keep.id).loca"])
        #expect(files(under: sandbox.vault + "/thumbs").isEmpty)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.exportData(keep.id) == Fixtures.bytes("sample.webp"))
    }
}
