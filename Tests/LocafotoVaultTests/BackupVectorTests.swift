import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoTestSupport
import LocafotoVault
import Testing

/// The committed backup vector (protocol/vectors/backup-v1.locabak, scripts/gen-vector-backup.sh),
/// also read by the independent Python reader (scripts/interop/read_backup.py,
/// Tests/Integration/test_backup_vector.py): a backup written by an earlier build must keep
/// restoring, and its photos must come out byte-identical to the fixtures they were made from.
@Suite("Backup vector (protocol/vectors/backup-v1)")
struct BackupVectorTests {
    static var vectorPath: String { Checkout.vectorURL("backup-v1.locabak").path }

    /// What backup-v1.json says of the vector: its passphrase, and each photo's fixture and hashes.
    static func meta() throws -> (passphrase: String, photoCount: Int, photos: [Vector]) {
        let meta = try Vector.load("backup-v1.json")
        return (try meta.passphrase.string, try meta.photoCount.int, try meta.photos.elements)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("restoreBackup of the vector → unlock → every photo equals its fixture")
    func restoresTheVector() throws {
        let meta = try Self.meta()
        let box = Sandbox()
        let target = box.path + "/restored/vault"
        let summary = try Vault.restoreBackup(from: Self.vectorPath, to: target, passphrase: secret(meta.passphrase))
        #expect(summary.photos == meta.photoCount)

        let vault = try Vault.open(at: target)
        try vault.unlock(passphrase: secret(meta.passphrase))
        let photos = try vault.photos()
        #expect(photos.count == meta.photoCount)
        #expect(Set(photos.compactMap(\.name)) == Set(try meta.photos.map { try $0.name.string }))
        for want in meta.photos {
            let name = try want.name.string
            let photo = try #require(photos.first { $0.name == name }, "\(name) is not in the restored vault")
            let fixture = try [UInt8](Data(contentsOf: Checkout.url(want.fixture.string)))
            #expect(fixture.count == (try want.size.int))
            #expect(Self.hex(photo.contentHash) == (try want.contentHash.string))
            #expect(photo.originalSize == (try want.size.int64))
            #expect(try vault.exportData(photo.id) == fixture)
        }
    }

    @Test("the vector refuses a wrong passphrase and leaves nothing behind")
    func wrongPassphrase() throws {
        let box = Sandbox()
        let target = box.path + "/restored/vault"
        #expect(
            vaultCode {
                _ = try Vault.restoreBackup(
                    from: Self.vectorPath, to: target, passphrase: secret("locafoto backup vector 2"))
            } == .wrongPassphrase)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: box.path + "/restored")) ?? []).isEmpty)
    }

    /// The vector's records, decrypted here with the passphrase (formats.md "Vault backup"), and
    /// a way to seal a changed list again: what only a key holder (a buggy writer) could produce.
    struct Opened {
        var header: [UInt8]
        var key: SecretBytes
        var records: [(message: [UInt8], tag: SecretStream.Tag)]

        init(_ file: [UInt8], passphrase: String) throws {
            func be32(_ at: Int) -> Int { file[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
            let h = be32(8)
            header = Array(file[12..<12 + h])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
            let salt = try #require(Data(base64Encoded: json["kdfSalt"] as? String ?? ""))
            let wrapped = try #require(Data(base64Encoded: json["wrappedMasterKey"] as? String ?? ""))
            let params = PasswordKDF.Parameters(
                opsLimit: UInt64(try #require(json["kdfOpsLimit"] as? Int)),
                memLimit: UInt64(try #require(json["kdfMemLimit"] as? Int)))
            let kek = try PasswordKDF.deriveKey(passphrase: secret(passphrase), salt: [UInt8](salt), parameters: params)
            let master = try KeyWrap.unwrap(
                [UInt8](wrapped), with: kek, aad: Array("locafoto vault master key v1".utf8))
            key = SecretStream.deriveKey(from: master, id: 1, context: "LOCABAK1")
            var offset = 12 + h + SecretStream.headerLength
            let reader = try SecretStream.Reader(key: key, header: Array(file[12 + h..<offset]))
            records = []
            while offset < file.count {
                let n = be32(offset)
                records.append(
                    try reader.pull(Array(file[offset + 4..<offset + 4 + n]), ad: records.isEmpty ? header : []))
                offset += 4 + n
            }
        }

        func seal(_ records: [(message: [UInt8], tag: SecretStream.Tag)]) throws -> [UInt8] {
            let writer = try SecretStream.Writer(key: key)
            func be32(_ n: Int) -> [UInt8] {
                [UInt8(n >> 24 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
            }
            var out = Array("LOCABAK".utf8) + [0] + be32(header.count) + header + writer.header
            for (i, r) in records.enumerated() {
                let c = writer.push(r.message, tag: r.tag, ad: i == 0 ? header : [])
                out += be32(c.count) + c
            }
            return out
        }
    }

    @Test("a stream resealed unchanged restores; the vector decodes as documented")
    func resealedUnchanged() throws {
        let meta = try Self.meta()
        let opened = try Opened(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.vectorPath))), passphrase: meta.passphrase)
        #expect(opened.records.first?.message.first == 0x01)
        #expect(opened.records.last?.message.first == 0x03)
        #expect(opened.records.last?.tag == .final)
        #expect(opened.records.dropLast().allSatisfy { $0.tag == .message })
        let box = Sandbox()
        let file = try box.write("same.locabak", try opened.seal(opened.records))
        #expect(
            try Vault.restoreBackup(from: file, to: box.path + "/r", passphrase: secret(meta.passphrase)).photos
                == meta.photoCount)
    }

    /// formats.md: the stream ends with an END record carrying TAG_FINAL, and readers MUST check
    /// every file against its declared size. Here the END record is missing and TAG_FINAL sits on
    /// the last DATA record, 100 bytes short of the last (thumbnail) file's declared size.
    /// scripts/interop/read_backup.py refuses it; Vault.restoreBackup restores it (it neither
    /// requires END nor checks the last file's size once the loop ends on TAG_FINAL).
    @Test("TAG_FINAL on a short last DATA record (no END) is refused")
    func finalTagOnShortData() throws {
        let meta = try Self.meta()
        let opened = try Opened(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.vectorPath))), passphrase: meta.passphrase)
        var records = Array(opened.records.dropLast())
        try #require(!records.isEmpty)
        let last = records.removeLast()
        try #require(last.message.first == 0x02 && last.message.count > 101)
        records.append((Array(last.message.dropLast(100)), .final))
        let box = Sandbox()
        let file = try box.write("short.locabak", try opened.seal(records))
        // A stream whose final tag sits on a short data record (no END) is refused.
        #expect(
            vaultCode {
                _ = try Vault.restoreBackup(from: file, to: box.path + "/r", passphrase: secret(meta.passphrase))
            } == .corrupt)
        #expect(!Vault.exists(at: box.path + "/r"))
    }
}
