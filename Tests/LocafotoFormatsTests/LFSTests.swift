import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

/// The `.lfs` codec (seed 001). Independent vectors: protocol/vectors/lfs.json, made by
/// scripts/gen-vectors-lfs.py with Python `cryptography` exactly as the seed's example does.
@Suite(
    "LFS: the .lfs shared-key file",
    .enabled(if: AEADAlgorithm.aes256gcm.isAvailable, "AES-256-GCM needs a CPU with AES-NI"))
struct LFSTests {
    static func key(_ byte: UInt8) -> SecretBytes { SecretBytes(copying: [UInt8](repeating: byte, count: 32)) }

    static func code(_ body: () throws -> Void) -> String { FormatsTestSupport.outcome(body) }

    /// After a failed `openInPlace`: everything outside the ciphertext range is unchanged and
    /// the ciphertext range is either unchanged or zeroed (libsodium's AES-GCM zeroes its output
    /// on a tag failure) — never plaintext.
    static func noPlaintextLeft(_ after: [UInt8], original: [UInt8]) -> Bool {
        guard after.count == original.count else { return false }
        guard original.count >= LFSFile.overhead else { return after == original }
        let ct = LFSFile.headerLength..<(original.count - 28)
        return after[..<ct.lowerBound] == original[..<ct.lowerBound]
            && after[ct.upperBound...] == original[ct.upperBound...]
            && (after[ct] == original[ct] || after[ct].allSatisfy { $0 == 0 })
    }

    // MARK: - Vectors

    // The parameterized tests' cases; a file or a key that cannot be read leaves a list empty,
    // and the test below fails.
    static let valid = Vector.entries("lfs.json", "valid")
    static let invalid = Vector.entries("lfs.json", "invalid")

    @Test func pythonVectorsCoverEveryOutcome() throws {
        #expect(Self.valid.count >= 5)
        #expect(Set(try Self.invalid.map { try $0.error.string }) == ["truncated", "malformed", "tagMismatch"])
    }

    @Test(arguments: valid)
    func pythonVectorValid(_ v: Vector) throws {
        let key = SecretBytes(copying: try v.key.bytes)
        let plaintext = try v.plaintext.bytes
        let file = try v.file.bytes
        let keyName = try v.keyName.string
        #expect(Array(keyName.utf8) == (try v.keyNameHex.bytes))
        // Writer: byte-identical to Python.
        let sealed = try LFSFile.seal(plaintext: plaintext, keyName: keyName, key: key, nonce: try v.nonce.bytes)
        #expect(sealed == file)
        // Reader: name without the key, then the plaintext.
        #expect(try LFSFile.keyName(of: file) == keyName)
        #expect(try LFSFile.keyName(of: file.prefix(128)) == keyName)
        #expect(try LFSFile.open(file, key: key) == plaintext)
        var copy = file
        let range = try copy.withUnsafeMutableBytes { try LFSFile.openInPlace($0, key: key) }
        #expect(Array(copy[range]) == plaintext)
        #expect(file.count == plaintext.count + LFSFile.overhead)
    }

    @Test(arguments: invalid)
    func pythonVectorInvalid(_ v: Vector) throws {
        let key = SecretBytes(copying: try v.key.bytes)
        let file = try v.file.bytes
        let error = try v.error.string
        #expect(Self.code { _ = try LFSFile.open(file, key: key) } == error)
        var copy = file
        #expect(Self.code { _ = try copy.withUnsafeMutableBytes { try LFSFile.openInPlace($0, key: key) } } == error)
        #expect(Self.noPlaintextLeft(copy, original: file))
    }

    // MARK: - Layout and names

    @Test func layoutMatchesTheSeed() throws {
        let key = Self.key(7)
        let plaintext: [UInt8] = [0xFF, 0xD8, 0xFF] + Array(repeating: 0x42, count: 50)
        let nonce = SecureRandom.bytes(12)
        let file = try LFSFile.seal(plaintext: plaintext, keyName: "my-documents", key: key, nonce: nonce)
        #expect(file.count == 128 + 53 + 12 + 16)
        #expect(Array(file[0..<12]) == Array("my-documents".utf8))
        #expect(file[12..<128].allSatisfy { $0 == 0 })
        #expect(Array(file[(128 + 53)..<(128 + 53 + 12)]) == nonce)
        let (ct, tag) = try AEAD.seal(.aes256gcm, key: key, nonce: nonce, plaintext: plaintext)
        #expect(Array(file[128..<(128 + 53)]) == ct)
        #expect(Array(file.suffix(16)) == tag)
        // A fresh random nonce each time by default.
        let a = try LFSFile.seal(plaintext: plaintext, keyName: "k", key: key)
        let b = try LFSFile.seal(plaintext: plaintext, keyName: "k", key: key)
        #expect(a != b)
        #expect(try LFSFile.open(a, key: key) == plaintext && LFSFile.open(b, key: key) == plaintext)
    }

    @Test func keyNameOfExactly128Bytes() throws {
        let key = Self.key(1)
        for name in [
            String(repeating: "x", count: 128), String(repeating: "й", count: 64), String(repeating: "🔑", count: 32),
        ] {
            #expect(name.utf8.count == 128)
            let file = try LFSFile.seal(plaintext: [1, 2, 3], keyName: name, key: key)
            #expect(!file[0..<128].contains(0), "no NUL terminator")
            #expect(try LFSFile.keyName(of: file) == name)
            #expect(try LFSFile.open(file, key: key) == [1, 2, 3])
        }
        #expect(
            Self.code { _ = try LFSFile.seal(plaintext: [1], keyName: String(repeating: "x", count: 129), key: key) }
                == "malformed")
        #expect(
            Self.code {
                _ = try LFSFile.seal(plaintext: [1], keyName: String(repeating: "й", count: 64) + "x", key: key)
            } == "malformed")
    }

    @Test func nonASCIIKeyName() throws {
        let key = Self.key(2)
        let name = "фото-ключ 🔑"
        let file = try LFSFile.seal(plaintext: [9, 8, 7], keyName: name, key: key)
        #expect(Array(file[0..<name.utf8.count]) == Array(name.utf8))
        #expect(file[name.utf8.count..<128].allSatisfy { $0 == 0 })
        #expect(try LFSFile.keyName(of: file) == name)
        #expect(try LFSFile.open(file, key: key) == [9, 8, 7])
    }

    @Test func emptyPlaintextIsA156ByteFile() throws {
        let key = Self.key(3)
        let file = try LFSFile.seal(plaintext: [UInt8](), keyName: "empty", key: key)
        #expect(file.count == 156 && LFSFile.overhead == 156)
        #expect(try LFSFile.open(file, key: key) == [])
        var copy = file
        let range = try copy.withUnsafeMutableBytes { try LFSFile.openInPlace($0, key: key) }
        #expect(range == 128..<128)
        var flipped = file
        flipped[140] ^= 1
        #expect(Self.code { _ = try LFSFile.open(flipped, key: key) } == "tagMismatch")
    }

    @Test func invalidNamesAreRefused() throws {
        let key = Self.key(4)
        let good = try LFSFile.seal(plaintext: [1, 2, 3, 4], keyName: "abc", key: key)
        func with(header raw: [UInt8]) -> [UInt8] {
            raw + [UInt8](repeating: 0, count: 128 - raw.count) + good[128...]
        }
        // Empty name, NUL inside, invalid UTF-8 (stray continuation, overlong, surrogate, cut sequence).
        let bad: [[UInt8]] = [
            [], [0x61, 0x00, 0x62], Array("ab".utf8) + [0, 0, 0, 0x63], [0x61, 0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80],
            Array(Array("ключ".utf8).dropLast()), [0xFF],
        ]
        for raw in bad {
            #expect(Self.code { _ = try LFSFile.keyName(of: with(header: raw)) } == "malformed", "\(raw)")
            #expect(Self.code { _ = try LFSFile.open(with(header: raw), key: key) } == "malformed", "\(raw)")
        }
        // A non-NUL byte at the very end after NUL padding.
        var last = good
        last[127] = 0x41
        #expect(Self.code { _ = try LFSFile.keyName(of: last) } == "malformed")
        // Trailing NULs are padding: the name is the bytes before the first NUL.
        #expect(try LFSFile.keyName(of: good) == "abc")
        // Writers refuse what readers refuse.
        for name in ["", "a\u{0}b", "\u{0}"] {
            #expect(Self.code { _ = try LFSFile.seal(plaintext: [1], keyName: name, key: key) } == "malformed")
            #expect(Self.code { try LFSFile.validateKeyName(name) } == "malformed")
        }
        #expect(Self.code { _ = try LFSFile.keyName(of: [UInt8](repeating: 0x61, count: 127)) } == "truncated")
    }

    @Test func headerIsNotAuthenticated() throws {
        // As in the seed (no AAD): a renamed header still opens with the same key. The name
        // only selects the key; a wrong key fails the tag.
        let key = Self.key(5)
        let file = try LFSFile.seal(plaintext: [1, 2, 3], keyName: "family", key: key)
        let renamed = try LFSFile.encodeHeader(keyName: "friends") + file[128...]
        #expect(try LFSFile.keyName(of: renamed) == "friends")
        #expect(try LFSFile.open(renamed, key: key) == [1, 2, 3])
    }

    // MARK: - Damage

    @Test func everyTruncationIsRefused() throws {
        let key = Self.key(6)
        let plaintext: [UInt8] = [0x89, 0x50, 0x4E, 0x47] + SecureRandom.bytes(60)
        let file = try LFSFile.seal(plaintext: plaintext, keyName: "truncate-me", key: key)
        for n in 0..<file.count {
            let expected = n < 156 ? "truncated" : "tagMismatch"
            #expect(Self.code { _ = try LFSFile.open(Array(file.prefix(n)), key: key) } == expected, "prefix \(n)")
            #expect(
                Self.code { _ = try LFSFile.open(Array(file.suffix(from: file.count - n)), key: key) } != "ok",
                "suffix \(n)")
        }
        // Appended bytes are not ignored either: they shift the nonce and tag.
        #expect(Self.code { _ = try LFSFile.open(file + [0], key: key) } == "tagMismatch")
    }

    @Test func everyBitFlipAfterTheHeaderFailsTheTag() throws {
        let key = Self.key(7)
        let file = try LFSFile.seal(plaintext: [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 4], keyName: "flip", key: key)
        for i in 128..<file.count {
            for bit in [0, 3, 7] {
                var f = file
                f[i] ^= UInt8(1 << bit)
                #expect(Self.code { _ = try LFSFile.open(f, key: key) } == "tagMismatch", "byte \(i) bit \(bit)")
                var g = f
                #expect(
                    Self.code { _ = try g.withUnsafeMutableBytes { try LFSFile.openInPlace($0, key: key) } }
                        == "tagMismatch")
                #expect(Self.noPlaintextLeft(g, original: f), "byte \(i) bit \(bit)")
            }
        }
    }

    @Test func wrongKeyFailsTheTag() throws {
        let file = try LFSFile.seal(plaintext: [1, 2, 3], keyName: "k", key: Self.key(8))
        #expect(Self.code { _ = try LFSFile.open(file, key: Self.key(9)) } == "tagMismatch")
        #expect(throws: CryptoError.self) {
            _ = try LFSFile.open(file, key: SecretBytes(copying: [UInt8](repeating: 1, count: 16)))
        }
    }

    @Test func oversizedFilesAreRefused() throws {
        #expect(LFSFile.maxFileSize == 1 << 31)
        #expect(Self.code { try LFSFile.checkFileLength(LFSFile.maxFileSize) } == "ok")
        #expect(Self.code { try LFSFile.checkFileLength(LFSFile.maxFileSize + 1) } == "tooLarge")
        #expect(Self.code { try LFSFile.checkFileLength(155) } == "truncated")
        #expect(Self.code { try LFSFile.checkFileLength(156) } == "ok")
        #expect(LFSFile.plaintextLength(fileLength: 156) == 0)
        // The writer's limit, without allocating 2 GiB: a buffer that claims to be larger.
        let huge = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(bitPattern: 0x1000), count: Int(LFSFile.maxPlaintextSize) + 1)
        #expect(Self.code { _ = try LFSFile.seal(plaintext: huge, keyName: "big", key: Self.key(1)) } == "tooLarge")
    }

    // MARK: - Key text form

    @Test func sharedKeyHex() throws {
        let raw = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let hex = Hex.encode(raw)
        let spaced = stride(from: 0, to: 64, by: 8).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 8)])
        }.joined(separator: " ")
        let accepted = [
            hex, hex.uppercased(), hex + "\n", "  " + hex + "\r\n", spaced,
            String(hex.prefix(32)) + "\n" + String(hex.suffix(32)),
            "\t" + hex.prefix(1) + " " + hex.dropFirst(1),  // whitespace even inside a byte
        ]
        for text in accepted {
            #expect(try SharedKeyHex.parse(text).unsafeCopy() == raw)
        }
        #expect(SharedKeyHex.format(SecretBytes(copying: raw)) == hex)
        let refused = [
            "", "\n", String(hex.dropLast()), hex + "0", hex + hex, "0x" + hex, String(hex.dropLast()) + "g",
            hex.replacingOccurrences(of: "1", with: "١"), hex + ".", "\"" + hex + "\"", hex + "\u{00A0}",
        ]
        for text in refused {
            do {
                _ = try SharedKeyHex.parse(text)
                Issue.record("accepted \(text.debugDescription)")
            } catch let e as FormatError {
                #expect(e.code == .invalidKey)
                #expect(!e.message.contains(hex) && !e.message.contains(hex.prefix(8)), "never echoes the input")
            }
        }
    }
}
