import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoVault
import Testing

@Suite("Vault: creation, locking, crash recovery")
struct VaultLifecycleTests {
    @Test func createMakesPrivateFilesAndDirectories() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        #expect(vault.isUnlocked)
        #expect(Vault.exists(at: sandbox.vault))
        #expect(Vault.exists(at: sandbox.vault + "/"))
        #expect(mode(sandbox.vault) == 0o700)
        #expect(mode(sandbox.vault + "/photos") == 0o700)
        #expect(mode(sandbox.vault + "/tmp") == 0o700)
        #expect(mode(sandbox.vault + "/catalog.sqlite") == 0o600)
        #expect(mode(sandbox.vault + "/vault.lock") == 0o600)
        let record = try vault.importFile(at: Fixtures.path("sample.png"))
        let loca = sandbox.vault + "/photos/\(record.id.prefix(2))/\(record.id).loca"
        #expect(mode(loca) == 0o600)
        #expect(mode(sandbox.vault + "/photos/\(record.id.prefix(2))") == 0o700)
        for extra in ["-wal", "-shm"] {
            if let m = mode(sandbox.vault + "/catalog.sqlite" + extra) { #expect(m == 0o600, "catalog.sqlite\(extra)") }
        }
        // The catalog holds no plaintext key material: neither the passphrase nor the photo.
        let catalog =
            try readFile(sandbox.vault + "/catalog.sqlite")
            + ((try? readFile(sandbox.vault + "/catalog.sqlite-wal")) ?? [])
        #expect(!contains(catalog, Array(testPassphrase.utf8)))
        #expect(!contains(try readFile(loca), try Fixtures.bytes("sample.png").suffix(64).map { $0 }))
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    @Test func createRefusesAnExistingVaultAndOpenRefusesAMissingOne() throws {
        let sandbox = Sandbox()
        _ = try makeVault(sandbox)
        #expect(vaultCode { _ = try makeVault(sandbox) } == .alreadyExists)
        #expect(!Vault.exists(at: sandbox.path + "/nothing"))
        let e = #expect(throws: VaultError.self) { _ = try Vault.open(at: sandbox.path + "/nothing") }
        #expect(e?.code == .notFound)
        #expect(e?.message.contains("locafoto vault init") == true)
    }

    @Test func reopenUnlockWrongPassphraseAndLock() throws {
        let sandbox = Sandbox()
        let id: String
        do {
            let vault = try makeVault(sandbox)
            id = try vault.importFile(at: Fixtures.path("sample.jpg")).id
        }
        let vault = try Vault.open(at: sandbox.vault)
        #expect(!vault.isUnlocked)

        // Everything about photos needs the key.
        #expect(vaultCode { _ = try vault.photos() } == .locked)
        #expect(vaultCode { _ = try vault.photo(matching: id) } == .locked)
        #expect(vaultCode { _ = try vault.photo(withContentHash: [UInt8](repeating: 0, count: 32)) } == .locked)
        #expect(vaultCode { _ = try vault.exportData(id) } == .locked)
        #expect(vaultCode { _ = try vault.export(id, toDirectory: sandbox.path) } == .locked)
        #expect(vaultCode { _ = try vault.beginImport(name: "x.jpg") } == .locked)
        #expect(vaultCode { _ = try vault.importFile(at: Fixtures.path("sample.png")) } == .locked)

        let wrong = #expect(throws: VaultError.self) { try vault.unlock(passphrase: secret("Tr0ub4dor&3")) }
        #expect(wrong?.code == .wrongPassphrase)
        #expect(wrong.map { !$0.description.contains("Tr0ub4dor") } == true)
        #expect(!vault.isUnlocked)
        #expect(vaultCode { try vault.unlock(passphrase: secret("")) } == .wrongPassphrase)

        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(vault.isUnlocked)
        #expect(try vault.photos().map(\.id) == [id])
        #expect(try vault.exportData(id) == Fixtures.bytes("sample.jpg"))

        vault.lock()
        #expect(!vault.isUnlocked)
        #expect(vaultCode { _ = try vault.photos() } == .locked)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photos().count == 1)
    }

    @Test func lockingDuringAnImportFailsItCleanly() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let importer = try vault.beginImport(name: "a.jpg")
        try importer.write(Fixtures.bytes("sample.jpg"))
        vault.lock()
        #expect(vaultCode { _ = try importer.finish() } == .locked)
        try vault.unlock(passphrase: secret(testPassphrase))
        try expectNothingStored(vault)
    }

    @Test func faultBetweenRenameAndCommitLeavesNothing() throws {
        struct InjectedFault: Error {}
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        _ = try vault.importFile(at: Fixtures.path("sample.gif"))
        let seen = LockedBox<[String]>([])
        vault.hooks = Vault.Hooks(beforeCatalogCommit: { id in
            // At this point the file has been renamed into photos/ ...
            let path = sandbox.vault + "/photos/\(id.prefix(2))/\(id).loca"
            seen.mutate { $0.append(FileManager.default.fileExists(atPath: path) ? "renamed" : "missing") }
            throw InjectedFault()
        })
        #expect(throws: (any Error).self) { _ = try vault.importFile(at: Fixtures.path("sample.png")) }
        #expect(seen.value == ["renamed"])
        // ... and afterwards neither the file nor a row remains.
        try expectNothingStored(vault, rows: 1)

        let importer = try vault.beginImport(name: "stream.webp")
        try importer.write(Fixtures.bytes("sample.webp"))
        #expect(throws: (any Error).self) { _ = try importer.finish() }
        try expectNothingStored(vault, rows: 1)

        vault.hooks = Vault.Hooks()
        let ok = try vault.importFile(at: Fixtures.path("sample.png"))
        #expect(try vault.exportData(ok.id) == Fixtures.bytes("sample.png"))
        try expectNothingStored(vault, rows: 2)
    }

    @Test func openSweepsLeftoversOfACrash() throws {
        let sandbox = Sandbox()
        let kept: PhotoRecord
        do {
            let vault = try makeVault(sandbox)
            kept = try vault.importFile(at: Fixtures.path("sample.jpg"))
        }
        // As if the process died: after the rename into photos/ but before the commit, and
        // in the middle of an import.
        let orphanID = UUID().uuidString.lowercased()
        let orphanRel = "photos/\(orphanID.prefix(2))/\(orphanID).loca"
        func plantLeftovers() throws {
            try FileManager.default.createDirectory(
                atPath: sandbox.vault + "/photos/\(orphanID.prefix(2))", withIntermediateDirectories: true)
            _ = try sandbox.write(
                "vault/" + orphanRel,
                try LOCA.seal(plaintext: [1, 2, 3], key: SecretBytes(randomCount: 32), timestamp: 0))
            _ = try sandbox.write("vault/tmp/\(UUID().uuidString.lowercased()).part", [UInt8](repeating: 0, count: 100))
        }

        // While another instance has the vault open, nothing is swept (it could be mid-write).
        do {
            let first = try Vault.open(at: sandbox.vault)
            try withExtendedLifetime(first) {
                try plantLeftovers()
                let second = try Vault.open(at: sandbox.vault)
                #expect(second.recovery.skipped)
                #expect(second.recovery.removedOrphanPhotos.isEmpty)
                #expect(FileManager.default.fileExists(atPath: sandbox.vault + "/" + orphanRel))
                #expect(files(under: sandbox.vault + "/tmp").count == 1)
            }
        }

        let vault = try Vault.open(at: sandbox.vault)
        #expect(!vault.recovery.skipped)
        #expect(vault.recovery.removedOrphanPhotos == [orphanRel])
        #expect(vault.recovery.removedTemporaryFiles.count == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.vault + "/" + orphanRel))
        #expect(files(under: sandbox.vault + "/tmp").isEmpty)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(try vault.photos().map(\.id) == [kept.id])
        #expect(try vault.exportData(kept.id) == Fixtures.bytes("sample.jpg"))
    }

    @Test func concurrentImportsFromSeveralThreads() async throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let names = ["sample.jpg", "sample.png", "sample.webp", "sample.heic", "sample.gif", "sample.tiff"]
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for name in names {
                group.addTask { try vault.importFile(at: Fixtures.path(name)).id }
            }
            var ids: [String] = []
            for try await id in group { ids.append(id) }
            return ids
        }
        #expect(Set(ids).count == names.count)
        #expect(try vault.photos().count == names.count)
        for id in ids {
            let r = try vault.photo(matching: id)
            #expect(try vault.exportData(id) == Fixtures.bytes(try #require(r.name)))
        }
    }
}

/// A tiny thread-safe box for values captured by @Sendable hooks.
final class LockedBox<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}

extension LockedBox {
    func popFirst<E>() -> E? where T == [E] {
        var out: E?
        mutate { if !$0.isEmpty { out = $0.removeFirst() } }
        return out
    }
}
