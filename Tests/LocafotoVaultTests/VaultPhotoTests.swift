import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoVault
import Testing

@Suite("Vault: importing, listing, exporting photos")
struct VaultPhotoTests {
    static let images: [(file: String, type: ContentType)] = [
        ("sample.jpg", .jpeg), ("sample.png", .png), ("sample.webp", .webp), ("sample.heic", .heic),
        ("sample.gif", .gif), ("sample.tiff", .tiff), ("sample.avif", .avif), ("png-renamed.jpg", .png),
    ]

    @Test func importListExportRealImages() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        var records: [PhotoRecord] = []
        for (file, type) in Self.images {
            let bytes = try Fixtures.bytes(file)
            let r = try vault.importFile(at: Fixtures.path(file))
            #expect(r.name == file)
            #expect(r.format == type.rawValue)
            #expect(r.contentType == type)
            #expect(r.originalSize == Int64(bytes.count))
            #expect(r.encryptedSize == Int64(64 + bytes.count + 16))
            #expect(r.contentHash == ContentHash.of(bytes))
            #expect(r.id == r.id.lowercased() && UUID(uuidString: r.id) != nil)
            #expect(r.tags.isEmpty && !r.isFavorite && !r.isHidden && r.senderFingerprint == nil)
            #expect(abs(r.importDate.timeIntervalSinceNow) < 60)
            // The stored file is a LOCA file (ChaCha20-Poly1305) of the right length.
            let loca = try readFile(sandbox.vault + "/photos/\(r.id.prefix(2))/\(r.id).loca")
            #expect(loca.count == 64 + bytes.count + 16)
            let header = try LOCAHeader(decoding: loca)
            #expect(header.algorithm == .chacha20poly1305)
            #expect(header.originalSize == UInt64(bytes.count))
            #expect(abs(Double(header.timestamp) - Date().timeIntervalSince1970) < 60)
            records.append(r)
        }
        // Newest import first; rows read back equal what the imports returned.
        #expect(try vault.photos() == records.reversed())

        let out = try sandbox.directory("out")
        for (r, (file, _)) in zip(records, Self.images) {
            let path = try vault.export(r.id, toDirectory: out)
            #expect(path == out + "/" + Self.exported(file))
            #expect(try readFile(path) == Fixtures.bytes(file))
            #expect(try vault.exportData(r.id) == Fixtures.bytes(file))
            var streamed: [UInt8] = []
            try vault.streamPhoto(r.id) { streamed += $0 }
            #expect(streamed == (try Fixtures.bytes(file)))
        }
        #expect(files(under: out) == Self.images.map { Self.exported($0.file) }.sorted())
    }

    /// The name a fixture exports as: its own, but a PNG named `.jpg` takes its format's extension.
    static func exported(_ file: String) -> String { file == "png-renamed.jpg" ? "png-renamed.png" : file }

    @Test(arguments: [1, 2, 7, 31, 32, 33, 1000])
    func chunkedStreamImport(_ chunk: Int) throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        for file in ["sample.png", "sample.heic"] {
            let bytes = try Fixtures.bytes(file)
            let importer = try vault.beginImport(name: nil)
            for start in stride(from: 0, to: bytes.count, by: chunk) {
                try importer.write(Array(bytes[start..<min(start + chunk, bytes.count)]))
            }
            #expect(importer.size == Int64(bytes.count))
            let r = try importer.finish()
            #expect(r.name == nil)
            #expect(r.contentHash == ContentHash.of(bytes))
            #expect(try vault.exportData(r.id) == bytes)
        }
    }

    @Test func largeImportCrossesTheChunkBuffer() throws {
        // 3.5 MiB in odd pieces, one of them larger than the 1 MiB working buffer.
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let bytes = Fixtures.jpegLike(3 * (1 << 20) + 12345)
        let importer = try vault.beginImport(name: "big.jpg", maxSize: Int64(bytes.count))
        var offset = 0
        for piece in [1, 2, 65537, (1 << 20) + 3, 999_999] {
            try importer.write(Array(bytes[offset..<offset + piece]))
            offset += piece
        }
        try importer.write(Array(bytes[offset...]))
        let r = try importer.finish()
        #expect(r.format == "jpeg")
        let out = try sandbox.directory("out")
        #expect(try readFile(try vault.export(r.id, toDirectory: out)) == bytes)
        #expect(try vault.exportData(r.id) == bytes)
        #expect(vaultCode { _ = try vault.exportData(r.id, maxSize: 1000) } == .tooLarge)
    }

    @Test func unsupportedContentStoresNothing() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let text = #expect(throws: VaultError.self) { _ = try vault.importFile(at: Fixtures.path("not-an-image.txt")) }
        #expect(text?.code == .unsupportedContent)
        #expect(text?.message.contains("JPEG") == true)
        let empty = try sandbox.write("empty.jpg", [])
        #expect(vaultCode { _ = try vault.importFile(at: empty) } == .unsupportedContent)
        let short = try sandbox.write("short.jpg", [0xFF, 0xD8])
        #expect(vaultCode { _ = try vault.importFile(at: short) } == .unsupportedContent)

        // Streamed: refused as soon as sniffLength bytes arrived, and stays refused.
        let importer = try vault.beginImport(name: "notes.txt")
        let lorem = Array(String(repeating: "lorem ipsum ", count: 10).utf8)
        try importer.write(Array(lorem.prefix(10)))
        #expect(vaultCode { try importer.write(Array(lorem.dropFirst(10))) } == .unsupportedContent)
        #expect(vaultCode { try importer.write([0xFF]) } == .unsupportedContent)
        #expect(vaultCode { _ = try importer.finish() } == .unsupportedContent)

        let empty2 = try vault.beginImport(name: nil)
        #expect(vaultCode { _ = try empty2.finish() } == .unsupportedContent)
        try expectNothingStored(vault)
        #expect(vaultCode { _ = try vault.importFile(at: sandbox.path + "/missing.jpg") } == .io)
        #expect(vaultCode { _ = try vault.importFile(at: sandbox.path) } == .io)
    }

    @Test func maxSizeIsEnforced() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let bytes = Fixtures.jpegLike(101)
        let over = try vault.beginImport(name: "big.jpg", maxSize: 100)
        try over.write(Array(bytes.prefix(60)))
        let e = #expect(throws: VaultError.self) { try over.write(Array(bytes.dropFirst(60))) }
        #expect(e?.code == .tooLarge)
        #expect(vaultCode { _ = try over.finish() } == .tooLarge)
        try expectNothingStored(vault)

        let exact = try vault.beginImport(name: "fits.jpg", maxSize: 101)
        try exact.write(bytes)
        _ = try exact.finish()
        try expectNothingStored(vault, rows: 1)
    }

    @Test func abortAndDeinitRemoveTheTemporaryFile() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try vault.beginImport(name: "a.png")
        try a.write(Fixtures.bytes("sample.png"))
        #expect(files(under: sandbox.vault + "/tmp").count == 1)
        a.abort()
        a.abort()
        #expect(files(under: sandbox.vault + "/tmp").isEmpty)
        #expect(throws: VaultError.self) { _ = try a.finish() }
        do {
            let b = try vault.beginImport(name: "b.png")
            try b.write(Fixtures.bytes("sample.png"))
            #expect(files(under: sandbox.vault + "/tmp").count == 1)
        }
        try expectNothingStored(vault)
    }

    @Test func corruptedFilesFailExportWithoutLeavingAPartialFile() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let out = try sandbox.directory("out")
        let bytes = try Fixtures.bytes("sample.jpg")
        // Ciphertext byte, tag byte, nonce byte, reserved header byte; then a truncated file.
        for offset in [64 + bytes.count / 2, 64 + bytes.count + 3, 10, 40] {
            let r = try vault.importFile(at: Fixtures.path("sample.jpg"))
            let path = sandbox.vault + "/photos/\(r.id.prefix(2))/\(r.id).loca"
            var file = try readFile(path)
            file[offset] ^= 0x01
            try Data(file).write(to: URL(fileURLWithPath: path))
            let e = #expect(throws: VaultError.self) { _ = try vault.export(r.id, toDirectory: out) }
            #expect(e?.code == .corrupt, "offset \(offset)")
            #expect(files(under: out).isEmpty, "offset \(offset)")
            #expect(vaultCode { _ = try vault.exportData(r.id) } == .corrupt)
            #expect(
                vaultCode { try vault.streamPhoto(r.id) { _ in Issue.record("unverified data delivered") } } == .corrupt
            )
        }
        let r = try vault.importFile(at: Fixtures.path("sample.jpg"))
        let path = sandbox.vault + "/photos/\(r.id.prefix(2))/\(r.id).loca"
        try Data(try readFile(path).dropLast(1)).write(to: URL(fileURLWithPath: path))
        #expect(vaultCode { _ = try vault.export(r.id, toDirectory: out) } == .corrupt)
        try FileManager.default.removeItem(atPath: path)
        #expect(vaultCode { _ = try vault.export(r.id, toDirectory: out) } == .corrupt)
        #expect(files(under: out).isEmpty)
    }

    @Test func exportNamesAreSanitisedAndNeverOverwrite() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let out = try sandbox.directory("out")
        let png = try Fixtures.bytes("sample.png")
        func stored(_ name: String?) throws -> PhotoRecord {
            let i = try vault.beginImport(name: name)
            try i.write(png)
            return try i.finish()
        }
        let cases: [(String?, String?)] = [
            ("../../etc/passwd", "_.._etc_passwd.png"),
            (".hidden", "hidden.png"),
            ("...", nil),
            ("/", "_.png"),
            ("a\u{0}b\nc\u{7F}d\u{202E}gnp.exe", "abcdgnp.png"),
            ("  holiday.png  ", "holiday.png"),
            ("dir\\file.png", "dir_file.png"),
            ("Été 2025 🌅.png", "Été 2025 🌅.png"),
            // The sender's extension never survives on other bytes (issue 42).
            ("holidays.html", "holidays.png"),
            ("open-me.desktop", "open-me.png"),
            ("IMG_0001.png.exe", "IMG_0001.png"),
            ("IMG_0001.PNG", "IMG_0001.PNG"),
            ("bashrc", "bashrc.png"),
            ("CON", "_CON.png"),
            ("lpt1.txt", "_lpt1.png"),
            ("NUL.tar.png", "_NUL.tar.png"),
            ("com0.png", "_com0.png"),
            ("Scan 2025.03.01", "Scan 2025.03.01.png"),
            ("trailing. . .", "trailing.png"),
            // One grapheme of many combining marks: cut by scalars, never a hidden `.png`.
            (String(repeating: "\u{301}", count: 400) + ".jpg", nil),
            (
                "e" + String(repeating: "\u{301}", count: 400) + ".jpg",
                "e" + String(repeating: "\u{301}", count: 97) + ".png"
            ),
            (nil, nil),
            ("", nil),
        ]
        for (name, expected) in cases {
            let r = try stored(name)
            let path = try vault.export(r.id, toDirectory: out)
            let file = String(path.dropFirst(out.count + 1))
            #expect(path.hasPrefix(out + "/") && !file.contains("/"), "\(String(describing: name))")
            #expect(file == (expected ?? "\(r.id).png"), "\(String(describing: name))")
            #expect(try readFile(path) == png)
        }
        #expect(files(under: sandbox.path).filter { $0.contains("passwd") && !$0.hasPrefix("out/") }.isEmpty)
        let long = PhotoRecord(
            id: UUID().uuidString.lowercased(), name: String(repeating: "é", count: 300) + ".jpeg", format: "jpeg",
            originalSize: 0, encryptedSize: 0, contentHash: [], captureDate: nil, importDate: Date(), width: nil,
            height: nil, tags: [], isFavorite: false, isHidden: false, senderFingerprint: nil, senderName: nil)
        let longName = Vault.exportFileName(for: long)
        var hostile = long
        hostile.name = "\u{1B}[31m../.x\u{0}y\u{202E}z.jpg\r\n"
        #expect(Vault.exportFileName(for: hostile) == "[31m.._.xyz.jpg")
        #expect(longName.utf8.count <= 200 && longName.hasSuffix(".jpeg"))

        // No overwrite without the flag; with it, the file is replaced.
        let r = try vault.importFile(at: Fixtures.path("sample.jpg"))
        let first = try vault.export(r.id, toDirectory: out)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: first))
        let e = #expect(throws: VaultError.self) { _ = try vault.export(r.id, toDirectory: out) }
        #expect(e?.code == .exists)
        #expect(try readFile(first) == [1, 2, 3])
        #expect(try vault.export(r.id, toDirectory: out, overwrite: true) == first)
        #expect(try readFile(first) == Fixtures.bytes("sample.jpg"))
        #expect(!files(under: out).contains { $0.hasSuffix(".partial") })
        #expect(vaultCode { _ = try vault.export(r.id, toDirectory: sandbox.path + "/no-such-dir") } == .io)
    }

    @Test func findingPhotosByIDPrefixAndContentHash() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let ids = [
            "abcd0000-0000-4000-8000-000000000001", "abcd0000-0000-4000-8000-000000000002",
            "abce0000-0000-4000-8000-000000000003",
        ]
        let next = LockedBox(ids)
        vault.hooks = Vault.Hooks(makePhotoID: { next.popFirst() ?? UUID().uuidString.lowercased() })
        let a = try vault.importFile(at: Fixtures.path("sample.jpg"))
        let b = try vault.importFile(at: Fixtures.path("sample.png"))
        let c = try vault.importFile(at: Fixtures.path("sample.jpg"))  // a duplicate is still imported
        #expect([a.id, b.id, c.id] == ids)

        #expect(try vault.photo(matching: a.id) == a)
        #expect(try vault.photo(matching: a.id.uppercased()) == a)
        #expect(try vault.photo(matching: "abce") == c)
        #expect(vaultCode { _ = try vault.photo(matching: "abcd0000-0000-4000-8000-00000000000") } == .ambiguousPhoto)
        let ambiguous = #expect(throws: VaultError.self) { _ = try vault.photo(matching: "abcd") }
        #expect(ambiguous?.code == .ambiguousPhoto)
        #expect(ambiguous?.message.contains(a.id) == true && ambiguous?.message.contains(b.id) == true)
        #expect(ambiguous?.message.contains("sample.png") == true)
        #expect(vaultCode { _ = try vault.photo(matching: "abc") } == .photoNotFound)
        #expect(vaultCode { _ = try vault.photo(matching: "ffff") } == .photoNotFound)
        #expect(vaultCode { _ = try vault.photo(matching: "abcd%") } == .photoNotFound)
        #expect(vaultCode { _ = try vault.photo(matching: "ab_d") } == .photoNotFound)
        #expect(vaultCode { _ = try vault.export("abcd", toDirectory: sandbox.path) } == .ambiguousPhoto)

        let jpegHash = ContentHash.of(try Fixtures.bytes("sample.jpg"))
        #expect(try vault.photo(withContentHash: jpegHash)?.id == c.id)  // the newest of the two
        #expect(try vault.photo(withContentHash: ContentHash.of(try Fixtures.bytes("sample.png"))) == b)
        #expect(try vault.photo(withContentHash: [UInt8](repeating: 0, count: 32)) == nil)
    }

    @Test func photoRecordJSONUsesHexForTheHash() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let r = try vault.importFile(at: Fixtures.path("sample.webp"))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let json = try encoder.encode(r)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["contentHash"] as? String == Hex.encode(r.contentHash))
        #expect(object["wrappedKey"] == nil && object["filePath"] == nil)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var back = try decoder.decode(PhotoRecord.self, from: json)
        back.importDate = r.importDate  // ISO 8601 has whole seconds
        #expect(back == r)
    }

    /// A peer sends header placeholder ‖ ciphertext ‖ tag, streamed with ChaChaPolyStream.
    static func spool(_ sandbox: Sandbox, _ plaintext: [UInt8], key: SecretBytes, nonce: [UInt8], chunk: Int = 100)
        throws -> String
    {
        let stream = try ChaChaPolyStream(.encrypt, key: key, nonce: nonce)
        var file = [UInt8](repeating: 0, count: 64)
        for start in stride(from: 0, to: plaintext.count, by: chunk) {
            var piece = Array(plaintext[start..<min(start + chunk, plaintext.count)])
            stream.process(&piece)
            file += piece
        }
        file += stream.finalize()
        return try sandbox.write("vault/tmp/incoming-\(UUID().uuidString).spool", file)
    }

    @Test func adoptReceivedCiphertext() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let plaintext = try Fixtures.bytes("sample.heic")
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        let spool = try Self.spool(sandbox, plaintext, key: key, nonce: nonce)
        let capture = Date(timeIntervalSince1970: 1_700_000_000.25)
        let r = try vault.adoptReceived(
            spoolPath: spool, photoKey: key, algorithm: .chacha20poly1305, nonce: nonce,
            originalSize: Int64(plaintext.count), contentHash: ContentHash.of(plaintext), format: .heic,
            name: "from-alice.heic", captureDate: capture, width: 64, height: 48,
            senderFingerprint: "ab12-cd34", senderName: "Alice")
        #expect(!FileManager.default.fileExists(atPath: spool))
        #expect(r.senderName == "Alice" && r.senderFingerprint == "ab12-cd34")
        #expect(r.width == 64 && r.height == 48 && r.captureDate == capture && r.format == "heic")
        #expect(try vault.photo(matching: r.id) == r)
        let out = try sandbox.directory("out")
        let path = try vault.export(r.id, toDirectory: out)
        #expect(path.hasSuffix("/from-alice.heic"))
        #expect(try readFile(path) == plaintext)

        // The sending side gets the stored file and key back as they are.
        let encrypted = try vault.encryptedFile(r.id)
        #expect(encrypted.header.nonce == nonce)
        #expect(encrypted.photoKey.constantTimeEquals(key))
        #expect(try LOCA.open(readFile(encrypted.path), key: encrypted.photoKey) == plaintext)

        // A spool of the wrong length is refused and nothing is stored.
        let bad = try Self.spool(sandbox, plaintext, key: key, nonce: nonce)
        #expect(
            vaultCode {
                _ = try vault.adoptReceived(
                    spoolPath: bad, photoKey: key, algorithm: .chacha20poly1305, nonce: nonce,
                    originalSize: Int64(plaintext.count) + 1, contentHash: ContentHash.of(plaintext), format: .heic,
                    name: nil, captureDate: nil, width: nil, height: nil, senderFingerprint: nil, senderName: nil)
            } == .corrupt)
        try FileManager.default.removeItem(atPath: bad)
        try expectNothingStored(vault, rows: 1)

        // A tampered ciphertext is adopted unverified (by contract) but never exported.
        let tampered = try Self.spool(sandbox, plaintext, key: key, nonce: nonce)
        var bytes = try readFile(tampered)
        bytes[100] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: tampered))
        let t = try vault.adoptReceived(
            spoolPath: tampered, photoKey: key, algorithm: .chacha20poly1305, nonce: nonce,
            originalSize: Int64(plaintext.count), contentHash: ContentHash.of(plaintext), format: .heic,
            name: "tampered.heic", captureDate: nil, width: nil, height: nil, senderFingerprint: nil, senderName: nil)
        #expect(vaultCode { _ = try vault.export(t.id, toDirectory: out) } == .corrupt)
        #expect(!FileManager.default.fileExists(atPath: out + "/tampered.heic"))
    }

    /// A receiver's group commit: several prepared photos enter the catalog in one transaction,
    /// all of them or (on a fault in the middle) none, files included.
    @Test func receivedPhotosCommitTogetherOrNotAtAll() throws {
        struct InjectedFault: Error {}
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let fixtures = ["sample.heic", "sample.png", "sample.gif"]
        func prepare(_ fixture: String) throws -> (ReceivedPhoto, [UInt8]) {
            let plaintext = try Fixtures.bytes(fixture)
            let key = SecretBytes(randomCount: 32)
            let nonce = SecureRandom.bytes(12)
            let spool = try Self.spool(sandbox, plaintext, key: key, nonce: nonce)
            let format = ContentType.sniff(plaintext)!
            let photo = try vault.prepareReceived(
                spoolPath: spool, photoKey: key, algorithm: .chacha20poly1305, nonce: nonce,
                originalSize: Int64(plaintext.count), contentHash: ContentHash.of(plaintext), format: format,
                name: fixture, captureDate: nil, width: nil, height: nil, senderFingerprint: nil, senderName: "Alice")
            return (photo, plaintext)
        }
        // A fault before the third row: the first two, already renamed and inserted, go too.
        let doomed = try fixtures.map(prepare)
        let inserted = LockedBox<[String]>([])
        vault.hooks = Vault.Hooks(beforeCatalogCommit: { id in
            inserted.mutate { $0.append(id) }
            if id == doomed[2].0.id { throw InjectedFault() }
        })
        #expect(throws: (any Error).self) { _ = try vault.commitReceived(doomed.map(\.0)) }
        #expect(inserted.value == doomed.map(\.0.id))
        try expectNothingStored(vault)
        #expect(files(under: sandbox.vault + "/tmp").isEmpty)

        // Without the fault: one call, every photo stored and readable, records in order.
        vault.hooks = Vault.Hooks()
        let batch = try fixtures.map(prepare)
        let records = try vault.commitReceived(batch.map(\.0))
        #expect(records.map(\.id) == batch.map(\.0.id))
        #expect(records.map(\.name) == fixtures)
        for (record, (_, plaintext)) in zip(records, batch) { #expect(try vault.exportData(record.id) == plaintext) }
        try expectNothingStored(vault, rows: 3)

        // A prepared photo that is discarded leaves nothing behind.
        let (unused, _) = try prepare("sample.webp")
        vault.discardReceived(unused)
        try expectNothingStored(vault, rows: 3)
        #expect(try vault.commitReceived([]).isEmpty)
    }

    @Test(.enabled(if: AEADAlgorithm.aes256gcm.isAvailable))
    func aesGCMFilesAreReadable() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let plaintext = try Fixtures.bytes("sample.tiff")
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        let (ciphertext, tag) = try AEAD.seal(.aes256gcm, key: key, nonce: nonce, plaintext: plaintext)
        let spool = try sandbox.write("received.spool", [UInt8](repeating: 0, count: 64) + ciphertext + tag)
        let r = try vault.adoptReceived(
            spoolPath: spool, photoKey: key, algorithm: .aes256gcm, nonce: nonce,
            originalSize: Int64(plaintext.count), contentHash: ContentHash.of(plaintext), format: .tiff,
            name: "scan.tiff", captureDate: nil, width: nil, height: nil, senderFingerprint: nil, senderName: nil)
        #expect(try vault.exportData(r.id) == plaintext)
        let out = try sandbox.directory("out")
        #expect(try readFile(try vault.export(r.id, toDirectory: out)) == plaintext)
        let stored = try readFile(sandbox.vault + "/photos/\(r.id.prefix(2))/\(r.id).loca")
        #expect(try LOCAHeader(decoding: stored).algorithm == .aes256gcm)
    }
}
