import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import LocafotoVault
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A temporary directory removed when the value goes away.
final class Sandbox: Sendable {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/locafoto-vault-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        guard let made else { preconditionFailure("mkdtemp failed") }
        path = made
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var vault: String { path + "/vault" }

    /// A fresh directory inside the sandbox (export targets).
    func directory(_ name: String) throws -> String {
        let p = path + "/" + name
        try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let p = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }
}

enum Fixtures {
    /// The image fixtures live with the formats tests (scripts/make-fixtures.py); this test
    /// target has no resources of its own, so they are read from the source tree.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("LocafotoFormatsTests/Fixtures")

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func bytes(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// A fake but sniffable JPEG of `count` bytes (FF D8 FF then random data) for size tests.
    static func jpegLike(_ count: Int) -> [UInt8] {
        precondition(count >= 3)
        return [0xFF, 0xD8, 0xFF] + SecureRandom.bytes(count - 3)
    }
}

let testPassphrase = "correct horse battery staple"

func secret(_ s: String) -> SecretBytes { SecretBytes(copying: Array(s.utf8)) }

func makeVault(_ sandbox: Sandbox) throws -> Vault {
    try Vault.create(at: sandbox.vault, passphrase: secret(testPassphrase), kdf: .interactive)
}

func vaultCode(_ body: () throws -> Void) -> VaultError.Code? { thrown(VaultError.Code.self, body)?.code }

func mode(_ path: String) -> Int? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    return Int(st.st_mode & 0o7777)
}

/// Regular files below `dir`, relative paths, sorted.
func files(under dir: String) -> [String] {
    guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
    var out: [String] = []
    while let rel = e.nextObject() as? String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
            out.append(rel)
        }
    }
    return out.sorted()
}

func readFile(_ path: String) throws -> [UInt8] { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }

/// Checks that nothing of a failed import remains: no row, no photo file, no temporary file.
func expectNothingStored(_ vault: Vault, rows: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(try vault.photos().count == rows, sourceLocation: sourceLocation)
    #expect(files(under: vault.directory + "/photos").count == rows, sourceLocation: sourceLocation)
    #expect(files(under: vault.directory + "/tmp").isEmpty, sourceLocation: sourceLocation)
}
