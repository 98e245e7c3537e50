import Foundation
import LocafotoErrors
import LocafotoFiles
import Testing

@testable import LocafotoVault

/// Files written beside the user's own (export, backup) go through a new temporary file of a
/// unique name, created exclusively: whatever stands in the folder — files at every name the
/// writer used before, a symbolic link — is left as it was.
@Suite("Vault: temporary files beside the user's")
struct PartialFileTests {
    /// What a folder holds: name → bytes (symbolic links as "-> target").
    static func contents(_ dir: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let path = dir + "/" + name
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                out[name] = "-> " + target
            } else {
                out[name] = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            }
        }
        return out
    }

    /// Plants the names an export or a backup of `name` could write to.
    static func plant(_ dir: String, around name: String) throws -> [String: String] {
        let victim = dir + "/victim-elsewhere.txt"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        for planted in [".\(name).partial", "\(name).partial", ".\(name).tmp", "\(name).tmp"] {
            try Data("user file \(planted)".utf8).write(to: URL(fileURLWithPath: dir + "/" + planted))
        }
        try FileManager.default.createSymbolicLink(atPath: dir + "/.\(name).link.partial", withDestinationPath: victim)
        return try contents(dir)
    }

    @Test func exportLeavesEveryOtherFileAsItWas() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let importer = try vault.beginImport(name: "victim.txt.jpg")
        try importer.write(Fixtures.bytes("sample.jpg"))
        let photo = try importer.finish(senderFingerprint: nil)
        let out = try sandbox.directory("out")
        let before = try Self.plant(out, around: "victim.txt.jpg")

        let path = try vault.export(photo.id, toDirectory: out)
        #expect(path == out + "/victim.txt.jpg")
        var after = try Self.contents(out)
        #expect(after.removeValue(forKey: "victim.txt.jpg") != nil)
        #expect(after == before, "nothing else was touched, and no temporary file is left")

        // Overwriting replaces the photo only.
        _ = try vault.export(photo.id, toDirectory: out, overwrite: true)
        after = try Self.contents(out)
        after.removeValue(forKey: "victim.txt.jpg")
        #expect(after == before)
    }

    @Test func aFailedExportLeavesNothing() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let photo = try Org.jpeg(vault, "a.jpg")
        let out = try sandbox.directory("out")
        let before = try Self.plant(out, around: "a.jpg")
        try Data("already here".utf8).write(to: URL(fileURLWithPath: out + "/a.jpg"))
        #expect(throws: VaultError.self) { _ = try vault.export(photo.id, toDirectory: out) }
        var after = try Self.contents(out)
        #expect(after.removeValue(forKey: "a.jpg") == "already here")
        #expect(after == before)
    }

    @Test func backupLeavesEveryOtherFileAsItWas() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try Org.jpeg(vault, "a.jpg")
        let out = try sandbox.directory("backups")
        let before = try Self.plant(out, around: "vault.lfb")
        let summary = try vault.writeBackup(to: out + "/vault.lfb")
        #expect(summary.photos == 1)
        var after = try Self.contents(out)
        #expect(after.removeValue(forKey: "vault.lfb") != nil)
        #expect(after == before)
    }

    @Test func aFolderThatCannotBeWrittenIsNamedWithTheReason() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let photo = try Org.jpeg(vault, "a.jpg")
        let out = try sandbox.directory("out")
        // A file where the folder's temporary file would go cannot be made by any user, root
        // included: the "folder" is a regular file's path component.
        let notAFolder = out + "/plain-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: notAFolder))
        let e = #expect(throws: VaultError.self) { _ = try disk.createPartial(beside: notAFolder + "/photo.jpg") }
        #expect(e?.code == .io)
        #expect(e?.message.contains("could not write in \(notAFolder)") == true, "\(e?.message ?? "")")
        #expect(e?.message.contains(".partial") == false, "the temporary name is not the user's business")
        _ = photo
    }
}
