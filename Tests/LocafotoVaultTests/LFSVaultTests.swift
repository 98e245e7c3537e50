import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import LocafotoVault
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The seed's Python example, generalised (scripts/interop/lfs_tool.py), run as a separate
/// process. The interop tests FAIL — they do not skip — when python3 or its `cryptography`
/// package is missing (scripts/setup.sh installs both).
enum LFSPythonTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static var script: String { Checkout.url("scripts/interop/lfs_tool.py").path }

    /// Runs `python3 args…`; returns the exit status and stderr.
    static func python(_ args: [String]) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + args
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        do {
            try p.run()
        } catch {
            throw Failure(description: "could not start python3 through /usr/bin/env: \(error)")
        }
        let data = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Throws (a test failure, not a skip) unless python3 with `cryptography` can run the tool.
    static func requireAvailable() throws {
        let check = try python(["-c", "from cryptography.hazmat.primitives.ciphers.aead import AESGCM"])
        guard check.status == 0 else {
            throw Failure(
                description:
                    "the .lfs interoperability tests need python3 with the `cryptography` package (exit \(check.status): \(check.stderr.trimmingCharacters(in: .whitespacesAndNewlines))); run `bash scripts/setup.sh` or `python3 -m pip install cryptography`"
            )
        }
        guard FileManager.default.isReadableFile(atPath: script) else {
            throw Failure(description: "\(script) is missing")
        }
    }

    static func run(_ args: [String]) throws {
        let r = try python([script] + args)
        guard r.status == 0 else {
            throw Failure(description: "lfs_tool.py \(args.first ?? "") failed (exit \(r.status)): \(r.stderr)")
        }
    }

    /// Writes `key` as the hex text `locafoto key export` prints, mode 0600.
    static func writeKeyFile(_ key: SecretBytes, in sandbox: Sandbox, _ name: String = "key.txt") throws -> String {
        let path = try sandbox.write(name, Array((SharedKeyHex.format(key) + "\n").utf8))
        chmod(path, 0o600)
        return path
    }

    static func encrypt(keyFile: String, keyName: String, input: String, output: String) throws {
        try run(["encrypt", "--key-hex-file", keyFile, "--name-hex", Hex.encode(Array(keyName.utf8)), input, output])
    }

    static func decrypt(keyFile: String, input: String, output: String) throws {
        try run(["decrypt", "--key-hex-file", keyFile, input, output])
    }
}

@Suite(
    "LFS vault: importing and exporting .lfs files",
    .enabled(if: AEADAlgorithm.aes256gcm.isAvailable, "AES-256-GCM needs a CPU with AES-NI"))
struct LFSVaultTests {
    static func failure(_ body: () throws -> Void) -> (code: VaultError.Code?, message: String) {
        let e = thrown(VaultError.Code.self, body)
        return (e?.code, e?.message ?? "no error")
    }

    // MARK: - Import

    @Test func importRoundTrip() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "family-photos")
        let key = try vault.exportKey(name: "family-photos")
        let jpeg = try Fixtures.bytes("sample.jpg")
        let path = try sandbox.write(
            "IMG_0001.jpg.lfs", LFSFile.seal(plaintext: jpeg, keyName: "family-photos", key: key))

        let r = try vault.importLFS(at: path)
        #expect(r.name == "IMG_0001.jpg")
        #expect(r.contentType == .jpeg)
        #expect(r.originalSize == Int64(jpeg.count))
        #expect(r.contentHash == ContentHash.of(jpeg))
        #expect(try vault.exportData(r.id) == jpeg)
        #expect(try vault.sourceKey(ofPhoto: r.id)?.name == "family-photos")
        // Stored like any photo: a ChaCha20-Poly1305 LOCA file under its own key.
        let loca = try readFile(sandbox.vault + "/photos/\(r.id.prefix(2))/\(r.id).loca")
        #expect(try LOCAHeader(decoding: loca).algorithm == .chacha20poly1305)
        #expect(throws: FormatError.self, "not stored under the shared key") { _ = try LOCA.open(loca, key: key) }
        #expect(files(under: vault.directory + "/tmp").isEmpty)
        // The .lfs file itself is left where it was.
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func photoNames() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "k")
        let key = try vault.exportKey(name: "k")
        let png = try Fixtures.bytes("sample.png")
        let cases: [(String?, String?)] = [
            ("beach.lfs", "beach.png"), ("beach.LFS", "beach.png"), ("IMG_1.jpg.lfs", "IMG_1.jpg"),
            ("noext", "noext.png"),
            ("trailingdot..lfs", "trailingdot..png"), (".lfs", nil), (nil, nil), ("x.png.lfs", "x.png"),
        ]
        for (fileName, expected) in cases {
            let r = try vault.importLFS(LFSFile.seal(plaintext: png, keyName: "k", key: key), fileName: fileName)
            #expect(r.name == expected, "\(String(describing: fileName))")
        }
    }

    @Test func unknownKeyNamesTheKeyThenImportsAfterKeyImport() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let key = SecretBytes(randomCount: 32)
        let jpeg = Fixtures.jpegLike(5000)
        let path = try sandbox.write("shared.lfs", LFSFile.seal(plaintext: jpeg, keyName: "family-photos", key: key))

        let (code, message) = Self.failure { _ = try vault.importLFS(at: path) }
        #expect(code == .unknownKey)
        #expect(
            message == "this file needs the key 'family-photos'; import it with `locafoto key import family-photos`")
        try expectNothingStored(vault)

        // Names that need shell quoting are quoted in the suggested command.
        let odd = try sandbox.write("odd.lfs", LFSFile.seal(plaintext: jpeg, keyName: "фото-ключ 🔑", key: key))
        let (_, oddMessage) = Self.failure { _ = try vault.importLFS(at: odd) }
        #expect(
            oddMessage == "this file needs the key 'фото-ключ 🔑'; import it with `locafoto key import 'фото-ключ 🔑'`")
        // A name the vault could never hold says so.
        let control = try sandbox.write("ctl.lfs", LFSFile.seal(plaintext: jpeg, keyName: "bad\u{1B}name", key: key))
        let (ctlCode, ctlMessage) = Self.failure { _ = try vault.importLFS(at: control) }
        #expect(ctlCode == .unknownKey && ctlMessage.contains("\\u{1b}") && !ctlMessage.contains("\u{1B}"))

        // The key's owner exports it as hex; the recipient imports it; the file imports.
        try vault.importKey(name: "family-photos", key: SharedKeyHex.parse(SharedKeyHex.format(key) + "\n"))
        let r = try vault.importLFS(at: path)
        #expect(try vault.exportData(r.id) == jpeg)
        #expect(r.name == "shared.jpg")
    }

    @Test func sameNameDifferentKeyIsADecryptionFailure() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let info = try vault.createKey(name: "family")
        let theirs = SecretBytes(randomCount: 32)
        let path = try sandbox.write(
            "x.lfs", LFSFile.seal(plaintext: Fixtures.jpegLike(300), keyName: "family", key: theirs))
        let (code, message) = Self.failure { _ = try vault.importLFS(at: path) }
        #expect(code == .decryptionFailed)
        #expect(message.contains("'family'") && message.contains(info.fingerprint))
        try expectNothingStored(vault)
        #expect(try vault.key(named: "family").photoCount == 0)
    }

    @Test func alteredAndMalformedFiles() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "k")
        let key = try vault.exportKey(name: "k")
        let good = try LFSFile.seal(plaintext: Fixtures.jpegLike(1000), keyName: "k", key: key)
        var flipped = good
        flipped[500] ^= 0x04
        #expect(vaultCode { _ = try vault.importLFS(flipped) } == .decryptionFailed)
        #expect(vaultCode { _ = try vault.importLFS(Array(good.dropLast())) } == .decryptionFailed)
        for n in [0, 1, 127, 128, 155] {
            let path = try sandbox.write("short\(n).lfs", Array(good.prefix(n)))
            #expect(vaultCode { _ = try vault.importLFS(at: path) } == .malformedFile, "\(n) bytes")
            #expect(vaultCode { _ = try vault.importLFS(Array(good.prefix(n))) } == .malformedFile)
        }
        var nul = good
        nul[1] = 0
        nul[2] = 0x41
        #expect(vaultCode { _ = try vault.importLFS(nul) } == .malformedFile)
        var utf8 = good
        utf8[0] = 0xFF
        #expect(vaultCode { _ = try vault.importLFS(utf8) } == .malformedFile)
        #expect(vaultCode { _ = try vault.importLFS(at: sandbox.path + "/missing.lfs") } == .io)
        #expect(vaultCode { _ = try vault.importLFS(at: sandbox.path) } == .io)
        try expectNothingStored(vault)
    }

    @Test func oversizedFileIsRefusedBeforeReading() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "k")
        // A sparse file of 2 GiB + 1 byte with a valid header: refused from its size alone.
        let path = try sandbox.write("huge.lfs", try LFSFile.encodeHeader(keyName: "k"))
        #expect(truncate(path, off_t(LFSFile.maxFileSize) + 1) == 0)
        let (code, message) = Self.failure { _ = try vault.importLFS(at: path) }
        #expect(code == .tooLarge)
        #expect(message.contains("2 GiB"))
    }

    @Test func contentThatIsNotAnImage() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "docs")
        let key = try vault.exportKey(name: "docs")
        for plaintext in [[UInt8](), Array("%PDF-1.7 not a photo".utf8), [0xFF, 0xD8]] {
            let (code, message) = Self.failure {
                _ = try vault.importLFS(
                    LFSFile.seal(plaintext: plaintext, keyName: "docs", key: key), fileName: "doc.lfs")
            }
            #expect(code == .unsupportedContent, "\(plaintext.count) bytes: \(message)")
            #expect(message.contains("decrypted") && message.contains("not a supported image"))
        }
        try expectNothingStored(vault)
        #expect(try vault.key(named: "docs").photoCount == 0)
    }

    // MARK: - Export

    @Test func exportLFSWritesAnAtomicPrivateFile() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let info = try vault.createKey(name: "family")
        let key = try vault.exportKey(name: "family")
        let png = try Fixtures.bytes("sample.png")
        let r = try vault.importFile(at: Fixtures.path("sample.png"))
        let out = try sandbox.directory("out")
        let target = out + "/" + Vault.lfsFileName(for: r)
        #expect(Vault.lfsFileName(for: r) == "sample.png.lfs")

        #expect(try vault.exportLFS(r.id, keyName: "family", to: target) == target)
        #expect(mode(target) == 0o600)
        #expect(files(under: out) == ["sample.png.lfs"], "no temporary file left")
        let file = try readFile(target)
        #expect(file.count == png.count + 156)
        #expect(try LFSFile.keyName(of: file) == "family")
        #expect(try LFSFile.open(file, key: key) == png)

        // Never overwrites.
        let (code, _) = Self.failure { _ = try vault.exportLFS(r.id, keyName: "family", to: target) }
        #expect(code == .exists)
        #expect(try readFile(target) == file)
        // Fresh nonce each time.
        let second = try vault.exportLFS(r.id, keyName: "family", to: out + "/again.lfs")
        #expect(try readFile(second) != file)
        #expect(try LFSFile.open(readFile(second), key: key) == png)
        // In memory.
        #expect(try LFSFile.open(vault.exportLFSData(r.id, keyName: "family"), key: key) == png)
        #expect(vaultCode { _ = try vault.exportLFSData(r.id, keyName: "family", maxSize: 10) } == .tooLarge)

        // Errors: unknown key, unknown photo, bad targets.
        #expect(vaultCode { _ = try vault.exportLFS(r.id, keyName: "nope", to: out + "/n.lfs") } == .unknownKey)
        #expect(
            vaultCode { _ = try vault.exportLFS("ffffffff", keyName: "family", to: out + "/n.lfs") } == .photoNotFound)
        #expect(vaultCode { _ = try vault.exportLFS(r.id, keyName: "family", to: out) } == .io)
        #expect(vaultCode { _ = try vault.exportLFS(r.id, keyName: "family", to: out + "/") } == .io)
        #expect(
            vaultCode { _ = try vault.exportLFS(r.id, keyName: "family", to: sandbox.path + "/no/such/dir/x.lfs") }
                == .io)
        #expect(files(under: out).count == 2)
        // An .lfs exported here imports back into another vault that has the key.
        let other = Sandbox()
        let vault2 = try makeVault(other)
        try vault2.importKey(name: "family", key: key)
        let back = try vault2.importLFS(at: target)
        #expect(try vault2.exportData(back.id) == png)
        #expect(back.name == "sample.png")
        #expect(try vault2.key(named: "family").fingerprint == info.fingerprint)
        vault.lock()
        #expect(vaultCode { _ = try vault.exportLFS(r.id, keyName: "family", to: out + "/locked.lfs") } == .locked)
    }

    // MARK: - Interoperability with the seed's Python example (scripts/interop/lfs_tool.py)

    @Test func swiftExportPythonDecrypts() throws {
        try LFSPythonTool.requireAvailable()
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let out = try sandbox.directory("out")
        let images = ["sample.jpg", "sample.png", "sample.heic", "sample.webp"]
        let names = ["family-photos", String(repeating: "n", count: 128), "фото-ключ 🔑"]
        for name in names { try vault.createKey(name: name) }
        for (i, image) in images.enumerated() {
            let name = names[i % names.count]
            let keyFile = try LFSPythonTool.writeKeyFile(vault.exportKey(name: name), in: sandbox, "key\(i).txt")
            let r = try vault.importFile(at: Fixtures.path(image))
            let lfs = try vault.exportLFS(r.id, keyName: name, to: out + "/\(image).lfs")
            let decrypted = out + "/\(image).decrypted"
            try LFSPythonTool.decrypt(keyFile: keyFile, input: lfs, output: decrypted)
            #expect(try readFile(decrypted) == Fixtures.bytes(image), "\(image) with key \(name)")
        }
        // And Python refuses an altered file and the wrong key.
        var altered = try readFile(out + "/sample.jpg.lfs")
        altered[200] ^= 1
        let alteredPath = try sandbox.write("altered.lfs", altered)
        let keyFile = try LFSPythonTool.writeKeyFile(vault.exportKey(name: names[0]), in: sandbox, "k0.txt")
        #expect(
            try LFSPythonTool.python([
                LFSPythonTool.script, "decrypt", "--key-hex-file", keyFile, alteredPath, out + "/x",
            ]).status != 0)
        let wrongKey = try LFSPythonTool.writeKeyFile(vault.exportKey(name: names[1]), in: sandbox, "k1.txt")
        #expect(
            try LFSPythonTool.python([
                LFSPythonTool.script, "decrypt", "--key-hex-file", wrongKey, out + "/sample.jpg.lfs", out + "/y",
            ]).status != 0)
    }

    @Test(arguments: [
        ("family-photos", "sample.jpg"), (String(repeating: "k", count: 128), "sample.png"),
        (String(repeating: "🔑", count: 32), "sample.gif"), ("фото-ключ 🔑", "sample.heic"),
        ("my documents", "sample.tiff"),
    ])
    func pythonEncryptsSwiftImports(keyName: String, image: String) throws {
        try LFSPythonTool.requireAvailable()
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: keyName)
        let keyFile = try LFSPythonTool.writeKeyFile(vault.exportKey(name: keyName), in: sandbox)
        let lfs = sandbox.path + "/\(image).lfs"
        try LFSPythonTool.encrypt(keyFile: keyFile, keyName: keyName, input: Fixtures.path(image), output: lfs)
        #expect(try LFSFile.keyName(of: readFile(lfs)) == keyName)

        let r = try vault.importLFS(at: lfs)
        #expect(r.name == image)
        #expect(try vault.exportData(r.id) == Fixtures.bytes(image))
        // Back out as .lfs, decrypted by Python: byte-identical.
        let back = try vault.exportLFS(r.id, keyName: keyName, to: sandbox.path + "/back.lfs")
        try LFSPythonTool.decrypt(keyFile: keyFile, input: back, output: sandbox.path + "/back.bin")
        #expect(try readFile(sandbox.path + "/back.bin") == Fixtures.bytes(image))
    }

    @Test func pythonEncryptedEmptyFileIsUnsupportedContent() throws {
        try LFSPythonTool.requireAvailable()
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "empty")
        let keyFile = try LFSPythonTool.writeKeyFile(vault.exportKey(name: "empty"), in: sandbox)
        let empty = try sandbox.write("empty.bin", [])
        let lfs = sandbox.path + "/empty.lfs"
        try LFSPythonTool.encrypt(keyFile: keyFile, keyName: "empty", input: empty, output: lfs)
        let bytes = try readFile(lfs)
        #expect(bytes.count == 156)
        #expect(try LFSFile.open(bytes, key: vault.exportKey(name: "empty")) == [], "a valid .lfs file")
        // It decrypts (not a crypto error) but is not an image.
        let (code, message) = Self.failure { _ = try vault.importLFS(at: lfs) }
        #expect(code == .unsupportedContent, "\(message)")
        try expectNothingStored(vault)
    }

    @Test func pythonEncryptsALargeFile() throws {
        try LFSPythonTool.requireAvailable()
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try vault.createKey(name: "big")
        let keyFile = try LFSPythonTool.writeKeyFile(vault.exportKey(name: "big"), in: sandbox)
        // A real JPEG header (SOI + APP0/JFIF) then random bytes: 50 MiB + 1 byte.
        let jfif: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        let size = 50 << 20 + 1
        let plaintext = jfif + SecureRandom.bytes(size - jfif.count)
        let input = try sandbox.write("big.jpg", plaintext)
        let lfs = sandbox.path + "/big.jpg.lfs"
        try LFSPythonTool.encrypt(keyFile: keyFile, keyName: "big", input: input, output: lfs)

        let r = try vault.importLFS(at: lfs)
        #expect(r.originalSize == Int64(size))
        #expect(r.contentType == .jpeg)
        #expect(r.contentHash == ContentHash.of(plaintext))
        let out = try sandbox.directory("out")
        let exported = try vault.export(r.id, toDirectory: out)
        #expect(try readFile(exported) == plaintext)
        let back = try vault.exportLFS(r.id, keyName: "big", to: out + "/back.lfs")
        try LFSPythonTool.decrypt(keyFile: keyFile, input: back, output: out + "/back.jpg")
        #expect(try readFile(out + "/back.jpg") == plaintext)
    }
}
