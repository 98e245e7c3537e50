import Foundation
import LocafotoCrypto
import Testing

@testable import LocafotoVault

@Suite("Vault backup with the node identity")
struct BackupIdentityTests {
    /// Shaped like identity.json; the vault treats it as opaque bytes.
    static let identity = Array(#"{"version":1,"ed25519Seed":"c2VjcmV0IHNlZWQgYnl0ZXMgb2YgdGhlIG5vZGUga2V5IQ=="}"#.utf8)

    @Test func theIdentityIsEncryptedInTheBackupAndRestoredBesideTheVault() throws {
        let box = Sandbox()
        let v = try makeVault(box)
        _ = try v.importFile(at: Fixtures.path("sample.jpg"))
        let file = box.path + "/id.locabak"
        let summary = try v.writeBackup(to: file, identity: Self.identity)
        #expect(summary.identity == true && summary.files == 3)  // catalog, photo, identity
        let raw = try readFile(file)
        #expect(!raw.containsSubsequence(Array("ed25519Seed".utf8)))
        #expect(!raw.containsSubsequence(Array("c2VjcmV0IHNlZWQ".utf8)))
        #expect(raw.containsSubsequence(Array(#""version":2"#.utf8)))

        let home = try box.directory("home")
        let r = try Vault.restoreBackup(
            from: file, to: home + "/vault", passphrase: secret(testPassphrase), identityPath: home + "/identity.json")
        #expect(r.identity == true && r.photos == 1)
        #expect(try readFile(home + "/identity.json") == Self.identity)
        #expect(mode(home + "/identity.json") == 0o600)
        // Not left inside the vault directory.
        #expect(!FileManager.default.fileExists(atPath: home + "/vault/identity.json"))
        let restored = try Vault.open(at: home + "/vault")
        try restored.unlock(passphrase: secret(testPassphrase))
        #expect(try restored.photos().count == 1)
    }

    @Test func anotherIdentityInTheHomeIsNotReplacedAndNothingIsRestored() throws {
        let box = Sandbox()
        let v = try makeVault(box)
        let file = box.path + "/id.locabak"
        _ = try v.writeBackup(to: file, identity: Self.identity)
        let home = try box.directory("home")
        let other = Array(#"{"version":1,"ed25519Seed":"b3RoZXI="}"#.utf8)
        _ = try box.write("home/identity.json", other)
        #expect(
            vaultCode {
                _ = try Vault.restoreBackup(
                    from: file, to: home + "/vault", passphrase: secret(testPassphrase),
                    identityPath: home + "/identity.json")
            } == .alreadyExists)
        #expect(try readFile(home + "/identity.json") == other)
        #expect(!Vault.exists(at: home + "/vault"))
        // Without the identity it restores (the home keeps its own).
        let r = try Vault.restoreBackup(
            from: file, to: home + "/vault", passphrase: secret(testPassphrase), identityPath: nil)
        #expect(r.identity == nil)
        #expect(try readFile(home + "/identity.json") == other)
        #expect(!FileManager.default.fileExists(atPath: home + "/vault/identity.json"))
    }

    @Test func aVersion1BackupCannotSmuggleAnIdentityRecord() throws {
        // The path is accepted only when the (authenticated) header announces it.
        #expect(!Vault.isBackupPath("identity.json"))
        let box = Sandbox()
        let v = try makeVault(box)
        let file = box.path + "/plain.locabak"
        let s = try v.writeBackup(to: file)
        #expect(s.identity == nil)
        #expect(try readFile(file).containsSubsequence(Array(#""version":1"#.utf8)))
        let home = try box.directory("home")
        let r = try Vault.restoreBackup(
            from: file, to: home + "/vault", passphrase: secret(testPassphrase), identityPath: home + "/identity.json")
        #expect(r.identity == nil)
        #expect(!FileManager.default.fileExists(atPath: home + "/identity.json"))
    }
}
