import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

@testable import LocafotoVault

/// Named shared keys in the vault (seed 001): create, list, export, import, delete, at rest.
@Suite("SharedKey: named shared keys in the vault")
struct SharedKeyTests {
    /// 00 01 … 1f; SHA-256 of it starts 630dcd2966c43366 (Python hashlib).
    static let knownKey = SecretBytes(copying: (0..<32).map { UInt8($0) })
    static let knownFingerprint = "630dcd2966c43366"

    static func message(_ body: () throws -> Void) -> (VaultError.Code?, String) {
        let e = thrown(VaultError.Code.self, body)
        return (e?.code, e?.message ?? "")
    }

    @Test func createListExportDelete() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        #expect(try vault.keys().isEmpty)
        let before = Date()
        let family = try vault.createKey(name: "family-photos")
        #expect(family.name == "family-photos")
        #expect(family.photoCount == 0)
        #expect(family.fingerprint.count == 16 && Hex.decode(family.fingerprint) != nil)
        #expect(family.createdDate.timeIntervalSince(before) > -1 && family.createdDate.timeIntervalSinceNow < 1)
        let work = try vault.createKey(name: "Work")
        // Sorted by name (binary order: upper case first).
        #expect(try vault.keys() == [work, family])
        #expect(try vault.key(named: "family-photos") == family)

        let raw = try vault.exportKey(name: "family-photos")
        #expect(raw.count == 32)
        #expect(Vault.keyFingerprint(raw) == family.fingerprint)
        #expect(Hex.encode(Array(SHA256.hash(raw).prefix(8))) == family.fingerprint)
        #expect(!(try vault.exportKey(name: "Work")).constantTimeEquals(raw), "each key is random")
        // The same key comes out every time (it is stored, not derived).
        #expect(try vault.exportKey(name: "family-photos").constantTimeEquals(raw))

        #expect(try vault.deleteKey(name: "family-photos") == family)
        #expect(try vault.keys() == [work])
        for body in [
            { _ = try vault.exportKey(name: "family-photos") }, { _ = try vault.deleteKey(name: "family-photos") },
            { _ = try vault.key(named: "family-photos") },
        ] as [() throws -> Void] {
            let (code, text) = Self.message(body)
            #expect(code == .unknownKey)
            #expect(text.contains("'family-photos'"))
        }
    }

    @Test func keysSurviveReopening() throws {
        let sandbox = Sandbox()
        var vault: Vault? = try makeVault(sandbox)
        let info = try vault!.createKey(name: "фото-ключ 🔑")
        let raw = try vault!.exportKey(name: "фото-ключ 🔑").unsafeCopy()
        vault = nil
        let reopened = try Vault.open(at: sandbox.vault)
        #expect(vaultCode { _ = try reopened.keys() } == .locked)
        #expect(vaultCode { _ = try reopened.exportKey(name: "фото-ключ 🔑") } == .locked)
        #expect(vaultCode { _ = try reopened.createKey(name: "x") } == .locked)
        try reopened.unlock(passphrase: secret(testPassphrase))
        #expect(try reopened.keys() == [info])
        #expect(try reopened.exportKey(name: "фото-ключ 🔑").unsafeCopy() == raw)
        reopened.lock()
        #expect(vaultCode { _ = try reopened.importKey(name: "y", key: Self.knownKey) } == .locked)
    }

    @Test func importFromHexText() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let hex = Hex.encode(Self.knownKey)
        let chars = Array(hex)
        let pairs: [String] = stride(from: 0, to: 64, by: 2).map { i in String(chars[i..<i + 2]) }
        let split: String = "  " + String(hex.prefix(32)) + "\n" + String(hex.suffix(32)) + "\r\n"
        let texts: [String] = [hex + "\n", hex.uppercased(), split, pairs.joined(separator: " ")]
        for (i, text) in texts.enumerated() {
            let info = try vault.importKey(name: "shared-\(i)", key: SharedKeyHex.parse(text))
            #expect(info.fingerprint == Self.knownFingerprint)
            #expect(try vault.exportKey(name: "shared-\(i)").unsafeCopy() == Self.knownKey.unsafeCopy())
            #expect(SharedKeyHex.format(try vault.exportKey(name: "shared-\(i)")) == hex)
        }
        // Bad text never reaches the vault; the error does not echo it.
        for text in [String(hex.dropLast(2)), hex + "00", "0x" + hex, "zz" + hex.dropFirst(2), ""] {
            #expect(throws: FormatError.self) { _ = try SharedKeyHex.parse(text) }
            do {
                _ = try SharedKeyHex.parse(text)
            } catch let e as FormatError {
                #expect(e.code == .invalidKey)
                #expect(!e.message.contains(String(hex.prefix(10))))
            }
        }
        // Wrong lengths through the API.
        for n in [0, 16, 31, 33, 64] {
            #expect(
                vaultCode { _ = try vault.importKey(name: "len-\(n)", key: SecretBytes(randomCount: n)) } == .invalidKey
            )
        }
        #expect(try vault.keys().count == texts.count)
    }

    @Test func duplicateNamesAreRefused() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let original = try vault.createKey(name: "family")
        let (code, text) = Self.message { _ = try vault.createKey(name: "family") }
        #expect(code == .keyExists)
        #expect(text.contains("'family'") && text.contains(original.fingerprint))
        #expect(vaultCode { _ = try vault.importKey(name: "family", key: Self.knownKey) } == .keyExists)
        // The existing key is untouched.
        #expect(try vault.keys() == [original])
        #expect(Vault.keyFingerprint(try vault.exportKey(name: "family")) == original.fingerprint)

        // Canonically equivalent spellings are the same name: "café" NFC vs NFD.
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        let cafe = try vault.createKey(name: nfc)
        #expect(vaultCode { _ = try vault.createKey(name: nfd) } == .keyExists)
        #expect(try vault.key(named: nfd) == cafe, "lookups match canonically equivalent names")
        #expect(try vault.exportKey(name: nfd).constantTimeEquals(vault.exportKey(name: nfc)))

        // Case-sensitive: another key.
        let upper = try vault.createKey(name: "Family")
        #expect(upper.fingerprint != original.fingerprint)
        #expect(try vault.keys().map(\.name) == ["Family", "caf\u{E9}", "family"])
        // A case-only difference is hinted at when a name is unknown.
        let (missing, hint) = Self.message { _ = try vault.exportKey(name: "FAMILY") }
        #expect(missing == .unknownKey)
        #expect(hint.contains("case-sensitive"))
    }

    @Test func keyNameRules() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let good = [
            "a", String(repeating: "k", count: 128), String(repeating: "🔑", count: 32), "фото-ключ 🔑", "my documents",
            "👨‍👩‍👧 family",  // ZWJ sequences are fine
        ]
        for name in good {
            let info = try vault.createKey(name: name)
            #expect(info.name == name)
            #expect(Array(info.name.utf8) == Array(name.utf8), "stored byte for byte")
        }
        let bad = [
            "", String(repeating: "k", count: 129), String(repeating: "й", count: 64) + "k", "a\u{0}b", "tab\there",
            "line\nbreak", "del\u{7F}", "c1\u{85}", "\u{202E}evil", "x\u{2066}y", " leading", "trailing ",
            "\u{3000}ideo",
        ]
        for name in bad {
            #expect(vaultCode { _ = try vault.createKey(name: name) } == .invalidKeyName, "\(name.debugDescription)")
            #expect(vaultCode { _ = try vault.importKey(name: name, key: Self.knownKey) } == .invalidKeyName)
        }
        // Messages show control characters escaped, never raw.
        let (_, text) = Self.message { _ = try vault.createKey(name: "line\nbreak") }
        #expect(!text.contains("\n") && text.contains("\\u{a}"))
        #expect(try vault.keys().count == good.count)
    }

    @Test func keysAreWrappedAtRest() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.importKey(name: "known", key: Self.knownKey)
        let created = try vault.createKey(name: "random")
        let randomKey = try vault.exportKey(name: "random").unsafeCopy()
        let needles: [[UInt8]] = [
            Self.knownKey.unsafeCopy(), randomKey, Array(Hex.encode(Self.knownKey).utf8),
            Array(Hex.encode(randomKey).utf8),
            Array(Self.knownKey.unsafeCopy().prefix(16)), Array(randomKey.suffix(16)),
        ]
        // Every file of the vault directory: catalog, WAL, shared memory, lock.
        var checked = 0
        for rel in files(under: vault.directory) {
            let bytes = try readFile(vault.directory + "/" + rel)
            for needle in needles {
                #expect(!Self.contains(bytes, needle), "\(rel) contains key material")
            }
            checked += 1
        }
        #expect(checked >= 2)
        // The fingerprints are there (they are meant to be shown), the keys are not.
        let wal = (try? readFile(vault.directory + "/catalog.sqlite-wal")) ?? []
        let catalog = try readFile(vault.directory + "/catalog.sqlite") + wal
        #expect(Self.contains(catalog, Array(created.fingerprint.utf8)))
    }

    @Test func deletedKeyLeavesNoWrappedKeyBehind() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "keep")
        try vault.createKey(name: "gone")
        let wrapped: [UInt8] = try vault.db.read { db in
            [UInt8](try Data.fetchOne(db, sql: "SELECT wrappedKey FROM sharedKey WHERE name = 'gone'")!)
        }
        #expect(wrapped.count == 32 + 40)
        let all = files(under: vault.directory).map { (try? readFile(vault.directory + "/" + $0)) ?? [] }
        #expect(all.contains { Self.contains($0, wrapped) }, "the wrapped key is in the catalog before")
        try vault.deleteKey(name: "gone")
        for rel in files(under: vault.directory) {
            #expect(
                !Self.contains(try readFile(vault.directory + "/" + rel), wrapped), "\(rel) still holds the wrapped key"
            )
        }
        #expect(try vault.keys().map(\.name) == ["keep"])
    }

    @Test func wrappedKeyIsBoundToItsName() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "alpha")
        try vault.createKey(name: "beta")
        // Move alpha's wrapped key to beta's row: the associated data (the name) no longer matches.
        try vault.db.write { db in
            try db.execute(
                sql:
                    "UPDATE sharedKey SET wrappedKey = (SELECT wrappedKey FROM sharedKey WHERE name = 'alpha') WHERE name = 'beta'"
            )
        }
        #expect(vaultCode { _ = try vault.exportKey(name: "beta") } == .corrupt)
        #expect(try vault.exportKey(name: "alpha").count == 32)
    }

    @Test func keyInUseAndForce() throws {
        guard AEADAlgorithm.aes256gcm.isAvailable else { return }
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let info = try vault.createKey(name: "family")
        let key = try vault.exportKey(name: "family")
        let jpeg = Fixtures.jpegLike(2000)
        let a = try vault.importLFS(LFSFile.seal(plaintext: jpeg, keyName: "family", key: key), fileName: "a.jpg.lfs")
        _ = try vault.importLFS(LFSFile.seal(plaintext: Fixtures.jpegLike(100), keyName: "family", key: key))
        #expect(try vault.key(named: "family").photoCount == 2)
        #expect(try vault.keys().map(\.photoCount) == [2])
        #expect(try vault.sourceKey(ofPhoto: a.id)?.name == "family")
        #expect(try vault.sourceKey(ofPhoto: a.id)?.fingerprint == info.fingerprint)
        // A photo imported another way has no source key.
        let plain = try vault.importFile(at: Fixtures.path("sample.png"))
        #expect(try vault.sourceKey(ofPhoto: plain.id) == nil)

        let (code, text) = Self.message { _ = try vault.deleteKey(name: "family") }
        #expect(code == .keyInUse)
        #expect(text.contains("2 photos") && text.contains("--force"))
        #expect(try vault.keys().count == 1)

        let deleted = try vault.deleteKey(name: "family", force: true)
        #expect(deleted.photoCount == 2)
        #expect(try vault.keys().isEmpty)
        // The photos have their own keys: still readable.
        #expect(try vault.exportData(a.id) == jpeg)
        #expect(try vault.sourceKey(ofPhoto: a.id)?.name == "family", "provenance survives")

        // Re-importing the same key: the photos count again. A different key of that name: not.
        try vault.importKey(name: "family", key: key)
        #expect(try vault.key(named: "family").photoCount == 2)
        try vault.deleteKey(name: "family", force: true)
        try vault.createKey(name: "family")
        #expect(try vault.key(named: "family").photoCount == 0)
        try vault.deleteKey(name: "family")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && Array(haystack[i..<i + needle.count]) == needle { return true }
            i += 1
        }
        return false
    }
}
