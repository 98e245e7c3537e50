import Foundation
import LocafotoCrypto
import Testing

@testable import LocafotoVault

@Suite("Encrypted vault backup and restore")
struct BackupTests {
    static let names = ["sample.jpg", "sample.png", "sample.heic", "sample.webp"]

    static func filledVault(_ box: Sandbox) throws -> Vault {
        let v = try makeVault(box)
        for n in names { _ = try v.importFile(at: Fixtures.path(n)) }
        return v
    }

    @Test("backup → restore elsewhere with the passphrase → every photo byte-identical")
    func roundTrip() throws {
        let box = Sandbox()
        let v = try Self.filledVault(box)
        let file = box.path + "/vault.locabak"
        let summary = try v.writeBackup(to: file)
        #expect(summary.photos == 4)
        #expect(mode(file) == 0o600)
        // Nothing of the photos or names in clear in the backup file.
        let raw = try readFile(file)
        #expect(!raw.containsSubsequence(Array("sample.heic".utf8)))
        #expect(!raw.containsSubsequence(Array(try Fixtures.bytes("sample.png").prefix(64))))

        let restoredDir = box.path + "/elsewhere/vault"
        let r = try Vault.restoreBackup(from: file, to: restoredDir, passphrase: secret(testPassphrase))
        #expect(r.photos == 4)
        let restored = try Vault.open(at: restoredDir)
        try restored.unlock(passphrase: secret(testPassphrase))
        let photos = try restored.photos()
        #expect(Set(photos.compactMap(\.name)) == Set(Self.names))
        for p in photos {
            #expect(try restored.exportData(p.id) == (try Fixtures.bytes(p.name!)))
        }
        #expect(files(under: box.path + "/elsewhere").allSatisfy { !$0.contains(".restoring-") })
    }

    @Test("wrong passphrase, tampering and truncation are refused and leave nothing behind")
    func hostileBackups() throws {
        let box = Sandbox()
        let v = try Self.filledVault(box)
        let file = box.path + "/b.locabak"
        _ = try v.writeBackup(to: file)
        let good = try readFile(file)
        let target = box.path + "/restored"

        #expect(
            vaultCode { _ = try Vault.restoreBackup(from: file, to: target, passphrase: secret("wrong")) }
                == .wrongPassphrase)

        var cases: [(String, [UInt8])] = [
            ("empty", []),
            ("magic only", Array(good.prefix(8))),
            ("truncated header", Array(good.prefix(20))),
            ("truncated stream", Array(good.prefix(good.count / 2))),
            ("last byte missing", Array(good.dropLast())),
            ("appended byte", good + [0]),
            ("not a backup", Array("hello".utf8) + good),
        ]
        for offset in [good.count / 3, good.count / 2, good.count - 5] {
            var flipped = good
            flipped[offset] ^= 0x01
            cases.append(("bit flip at \(offset)", flipped))
        }
        for (what, bytes) in cases {
            let path = try box.write("bad.locabak", bytes)
            let code = vaultCode {
                _ = try Vault.restoreBackup(from: path, to: target, passphrase: secret(testPassphrase))
            }
            #expect(code == .corrupt, "\(what): \(String(describing: code))")
            #expect(!Vault.exists(at: target), "\(what) left a vault behind")
            #expect(
                !(try FileManager.default.contentsOfDirectory(atPath: box.path)).contains {
                    $0.contains(".restoring-")
                }, "\(what) left staging files")
        }
    }

    @Test("refuses to overwrite a backup file or an existing vault")
    func noOverwrite() throws {
        let box = Sandbox()
        let v = try Self.filledVault(box)
        let file = box.path + "/b.locabak"
        _ = try v.writeBackup(to: file)
        #expect(vaultCode { _ = try v.writeBackup(to: file) } == .exists)
        #expect(
            vaultCode { _ = try Vault.restoreBackup(from: file, to: box.vault, passphrase: secret(testPassphrase)) }
                == .alreadyExists)
        v.lock()
        #expect(vaultCode { _ = try v.writeBackup(to: box.path + "/other.locabak") } == .locked)
    }

    @Test("only vault files can come out of a backup")
    func pathsAreConfined() {
        let id = "0a1b2c3d-0000-4000-8000-000000000001"
        #expect(Vault.isBackupPath("catalog.sqlite"))
        #expect(Vault.isBackupPath("photos/0a/\(id).loca"))
        #expect(Vault.isBackupPath("thumbs/0a/\(id).loca"))
        for bad in [
            "../catalog.sqlite", "/etc/passwd", "photos/0a/../../x.loca", "photos/zz/\(id).loca",
            "photos/0b/\(id).loca",
            "photos/0a/\(id).sh", "photos/0a/sub/\(id).loca", "identity.json", "", "photos//\(id).loca",
        ] {
            #expect(!Vault.isBackupPath(bad), "\(bad)")
        }
    }
}

extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}
