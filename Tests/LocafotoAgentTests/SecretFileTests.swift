import Foundation
import LocafotoControl
import LocafotoErrors
import Testing

@testable import LocafotoAgent
@testable import LocafotoNode

/// `writeSecretFile` (the node identity): owner-only, replaced whole, and its temporary name is
/// unique and created exclusively, so nothing planted in the folder is written through or lost.
@Suite("Secret files")
struct SecretFileTests {
    @Test("the file is replaced whole, 0600, nothing else in the folder is touched, no temporary file stays")
    func replaces() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-secret-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/identity.json"
        // What an older writer's temporary names were, planted: a file of someone's and a link
        // to a file outside the folder. Neither may be written through, truncated or removed.
        let victim = dir + "/victim.txt"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path + ".tmp-\(getpid())"))
        try FileManager.default.createSymbolicLink(atPath: dir + "/.identity.json.partial", withDestinationPath: victim)

        try writeSecretFile(path, Data("first".utf8))
        try writeSecretFile(path, Data("second".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        #expect(try String(contentsOfFile: path + ".tmp-\(getpid())", encoding: .utf8) == "mine")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(
            names == [".identity.json.partial", "identity.json", "identity.json.tmp-\(getpid())", "victim.txt"],
            "no temporary file left")
    }

    @Test("a folder that cannot be written gives a clear error naming it")
    func unwritable() {
        let path = "/proc/locafoto-cannot-write-here/identity.json"
        #expect(throws: AgentError.self) { try writeSecretFile(path, Data("x".utf8)) }
        do {
            try writeSecretFile(path, Data("x".utf8))
        } catch let e as AgentError {
            #expect(e.message.contains("cannot write in /proc/locafoto-cannot-write-here"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
