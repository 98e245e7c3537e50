// Vault backups (protocol/formats.md "Vault backup"), restored by Vault.restoreBackup into a
// scratch folder. Argon2id (64 MiB) is replaced by a fixed master key for the harness's own
// header (any other header is a wrong passphrase), so the restore runs at fuzzing speed.
// The first byte picks the mode:
//   even: the rest is the backup file as is (magic, header length, header JSON, KDF settings,
//         stream header, record framing, authentication);
//   odd:  the rest describes records (type, final flag, payload) that the harness encrypts
//         under the master key into an authentic backup, then optional trailing bytes: this
//         reaches the FILE/DATA/END logic, path checks and the catalog check behind the AEAD.
// Properties: errors are VaultError (CryptoError for a malformed stream header); a failed
// restore leaves neither the vault folder nor its staging folder behind; a successful one
// writes only vault files (catalog.sqlite, photos/, thumbs/) inside the vault folder.
import Foundation
import FuzzSupport
import LocafotoCrypto

@testable import LocafotoVault

let master = SecretBytes(copying: [UInt8](repeating: 0x42, count: 32))
// Globals hold arrays, not Data: LeakSanitizer cannot see through Data's enum-packed storage
// pointer and would report a global Data as leaked.
let salt = [UInt8](repeating: 0x5A, count: 16)
let headerJSON: [UInt8] = {
    let header = VaultBackup.Header(
        version: 1, created: Date(timeIntervalSince1970: 1_700_000_000), kdfAlgorithm: VaultKeyRow.kdfAlgorithmName,
        kdfSalt: Data(salt), kdfOpsLimit: 2, kdfMemLimit: 64 << 20, wrappedMasterKey: Data(repeating: 1, count: 72),
        photos: 0)
    let e = JSONEncoder()
    e.dateEncodingStrategy = .iso8601
    e.outputFormatting = .sortedKeys
    return [UInt8](try! e.encode(header))
}()

let scratch: String = {
    // tmpfs when there is one: every execution writes a file and a folder.
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    let dir = base + "locafoto-fuzz-backup-\(getpid())"
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: scratch) }
    return dir
}()
let file = scratch + "/in.locabak"
let vault = scratch + "/vault"

func be32(_ n: Int) -> [UInt8] {
    [UInt8(n >> 24 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
}

/// An authentic backup whose records come from the fuzzer.
func synthesize(_ r: inout FuzzReader) -> [UInt8] {
    let key = SecretStream.deriveKey(from: master, id: 1, context: VaultBackup.kdfContext)
    let writer = try! SecretStream.Writer(key: key)
    var out = VaultBackup.magic + be32(headerJSON.count) + headerJSON + writer.header
    var first = true
    var records = 0
    while !r.isEmpty && records < 64 {
        let control = r.byte()
        let payload = r.take(r.u16() % 2048)
        let c = writer.push(
            [control & 0x7F] + payload, tag: control & 0x80 != 0 ? .final : .message, ad: first ? headerJSON : [])
        first = false
        out += be32(c.count) + c
        records += 1
        if control & 0x80 != 0 { break }
    }
    return out + r.rest()
}

func unlock(_ header: VaultBackup.Header) throws -> SecretBytes {
    guard [UInt8](header.kdfSalt) == salt else {
        throw VaultError(.wrongPassphrase, "wrong passphrase for this backup")
    }
    return master
}

func leftovers() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []).filter { $0 != "in.locabak" }.sorted()
}

/// Regular files under the vault folder, relative paths.
func vaultFiles() -> [String] {
    guard let e = FileManager.default.enumerator(atPath: vault) else { return [] }
    return e.compactMap { $0 as? String }.filter {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: vault + "/" + $0, isDirectory: &isDirectory)
            && !isDirectory.boolValue
    }
}

func fuzz(_ input: [UInt8]) {
    var r = FuzzReader(input)
    let bytes = r.byte() & 1 == 0 ? r.rest() : synthesize(&r)
    guard FileManager.default.createFile(atPath: file, contents: Data(bytes)) else {
        check(false, "cannot write \(file)")
        return
    }
    defer { try? FileManager.default.removeItem(atPath: vault) }
    do {
        let summary = try Vault.restoreBackup(from: file, to: vault, unlock: unlock)
        let files = vaultFiles()
        check(files.contains("catalog.sqlite"), "restored a vault without catalog")
        check(
            files.allSatisfy { $0 == "catalog.sqlite" || Vault.isBackupPath($0) },
            "restored files outside the vault layout: \(files)")
        check(summary.files == files.count, "summary counts \(summary.files) files, \(files.count) restored")
        check(leftovers() == ["vault"], "a restore left \(leftovers()) besides the vault")
    } catch {
        checkError(error, isOneOf: [VaultError.self, CryptoError.self], "Vault.restoreBackup")
        check(leftovers().isEmpty, "a failed restore left \(leftovers()) behind")
    }
}

@_cdecl("fuzz_backup_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
