import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

@Suite("LOCA encrypted photo files")
struct LOCATests {
    static let nonce: [UInt8] = Array(0x10..<0x1C)

    static func sampleHeader(_ algorithm: AEADAlgorithm = .chacha20poly1305) -> LOCAHeader {
        LOCAHeader(algorithm: algorithm, nonce: nonce, originalSize: 0xF102_0304, timestamp: 1_763_719_200)
    }

    static func code(_ body: () throws -> Void) -> FormatError.Code? { thrown(FormatError.Code.self, body)?.code }

    @Test func headerLayoutIsBigEndianAndExactly64Bytes() {
        let h = Self.sampleHeader()
        let b = h.encoded()
        #expect(b.count == LOCAHeader.length)
        #expect(Array(b[0..<4]) == Array("LOCA".utf8))
        #expect(Array(b[4..<6]) == [0x00, 0x01])
        #expect(b[6] == 0x02)
        #expect(b[7] == 0)
        #expect(Array(b[8..<20]) == Self.nonce)
        #expect(Array(b[20..<28]) == [0, 0, 0, 0, 0xF1, 0x02, 0x03, 0x04])
        #expect(Array(b[28..<36]) == [0, 0, 0, 0, 0x69, 0x20, 0x38, 0x20])
        #expect(b[36..<64].allSatisfy { $0 == 0 })
        #expect(h.expectedFileLength() == 64 + 0xF102_0304 + 16)
    }

    @Test(arguments: AEADAlgorithm.allCases)
    func headerRoundTrip(_ algorithm: AEADAlgorithm) throws {
        var h = Self.sampleHeader(algorithm)
        #expect(try LOCAHeader(decoding: h.encoded()) == h)
        h.timestamp = -42
        h.originalSize = LOCAHeader.maxOriginalSize
        #expect(try LOCAHeader(decoding: h.encoded()) == h)
        // Decoding reads the first 64 bytes of a longer buffer (a whole file).
        #expect(try LOCAHeader(decoding: h.encoded() + [1, 2, 3]) == h)
    }

    @Test func everyTruncationOfAHeaderIsTruncated() {
        let b = Self.sampleHeader().encoded()
        for n in 0..<LOCAHeader.length {
            #expect(Self.code { _ = try LOCAHeader(decoding: b.prefix(n)) } == .truncated, "prefix of \(n) bytes")
        }
    }

    @Test func badMagic() {
        var b = Self.sampleHeader().encoded()
        b[0] = UInt8(ascii: "X")
        #expect(Self.code { _ = try LOCAHeader(decoding: b) } == .badMagic)
        // Even a short prefix that is visibly not LOCA says so rather than "truncated".
        #expect(Self.code { _ = try LOCAHeader(decoding: Array("PK".utf8)) } == .badMagic)
        #expect(
            Self.code { _ = try LOCAHeader(decoding: [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 80)) }
                == .badMagic)
    }

    @Test func unsupportedVersion() {
        for version: [UInt8] in [[0, 0], [0, 2], [1, 1], [0xFF, 0xFF]] {
            var b = Self.sampleHeader().encoded()
            b[4] = version[0]
            b[5] = version[1]
            #expect(Self.code { _ = try LOCAHeader(decoding: b) } == .unsupportedVersion)
        }
    }

    @Test func unsupportedAlgorithm() {
        for alg: UInt8 in [0x00, 0x03, 0x80, 0xFF] {
            var b = Self.sampleHeader().encoded()
            b[6] = alg
            #expect(Self.code { _ = try LOCAHeader(decoding: b) } == .unsupportedAlgorithm)
        }
    }

    @Test func nonZeroReservedBytesAreMalformed() {
        for i in [7] + Array(36..<64) {
            var b = Self.sampleHeader().encoded()
            b[i] = 0x01
            #expect(Self.code { _ = try LOCAHeader(decoding: b) } == .malformed, "reserved byte \(i)")
        }
    }

    @Test func wrongNonceLengthIsMalformedAndHugeSizesAreRefused() {
        var h = Self.sampleHeader()
        h.nonce = [1, 2, 3]
        #expect(Self.code { try h.validate() } == .malformed)
        h = Self.sampleHeader()
        h.originalSize = LOCAHeader.maxOriginalSize + 1
        #expect(Self.code { try h.validate() } == .tooLarge)
        #expect(Self.code { _ = try LOCAHeader(decoding: h.encoded()) } == .tooLarge)
        #expect(
            Self.code {
                _ = try LOCA.seal(
                    plaintext: [1], key: SecretBytes(randomCount: 32), algorithm: .chacha20poly1305, nonce: [0],
                    timestamp: 0)
            } == .malformed)
    }

    @Test func fileLengthCheck() throws {
        let h = LOCAHeader(algorithm: .chacha20poly1305, nonce: Self.nonce, originalSize: 10, timestamp: 0)
        try h.checkFileLength(90)
        #expect(Self.code { try h.checkFileLength(89) } == .truncated)
        #expect(Self.code { try h.checkFileLength(0) } == .truncated)
        #expect(Self.code { try h.checkFileLength(91) } == .sizeMismatch)
    }

    static func algorithms() -> [AEADAlgorithm] {
        AEADAlgorithm.allCases.filter(\.isAvailable)
    }

    @Test(arguments: algorithms(), [0, 1, 15, 16, 17, 63, 64, 65, 1000])
    func sealOpenRoundTrip(_ algorithm: AEADAlgorithm, size: Int) throws {
        let key = SecretBytes(randomCount: 32)
        let plaintext = SecureRandom.bytes(size)
        let file = try LOCA.seal(plaintext: plaintext, key: key, algorithm: algorithm, timestamp: 1234)
        #expect(file.count == 64 + size + 16)
        let (header, opened) = try LOCA.openWithHeader(file, key: key)
        #expect(opened == plaintext)
        #expect(header.algorithm == algorithm)
        #expect(header.originalSize == UInt64(size))
        #expect(header.timestamp == 1234)
        #expect(try LOCA.open(file, key: key) == plaintext)
    }

    @Test(arguments: algorithms())
    func randomNoncesDiffer(_ algorithm: AEADAlgorithm) throws {
        let key = SecretBytes(randomCount: 32)
        let a = try LOCA.seal(plaintext: [1, 2, 3], key: key, algorithm: algorithm, timestamp: 0)
        let b = try LOCA.seal(plaintext: [1, 2, 3], key: key, algorithm: algorithm, timestamp: 0)
        #expect(a[8..<20] != b[8..<20])
    }

    @Test(arguments: algorithms())
    func flippedBytesAreDetected(_ algorithm: AEADAlgorithm) throws {
        let key = SecretBytes(randomCount: 32)
        let plaintext = Array("a small photo, honestly".utf8)
        let file = try LOCA.seal(plaintext: plaintext, key: key, algorithm: algorithm, timestamp: 99)
        // The timestamp (bytes 28..<36) is not authenticated: the AEAD has no associated data.
        for i in 0..<file.count where !(28..<36).contains(i) {
            var bad = file
            bad[i] ^= 0x01
            #expect(throws: (any Error).self, "byte \(i)") { _ = try LOCA.open(bad, key: key) }
        }
        var bad = file
        bad[64] ^= 0x80
        #expect(Self.code { _ = try LOCA.open(bad, key: key) } == .tagMismatch)
        bad = file
        bad[bad.count - 1] ^= 0x80
        #expect(Self.code { _ = try LOCA.open(bad, key: key) } == .tagMismatch)
        #expect(Self.code { _ = try LOCA.open(file, key: SecretBytes(randomCount: 32)) } == .tagMismatch)
    }

    @Test func lengthMismatchIsRefusedBeforeDecrypting() throws {
        let key = SecretBytes(randomCount: 32)
        let file = try LOCA.seal(plaintext: [UInt8](repeating: 7, count: 50), key: key, timestamp: 0)
        #expect(Self.code { _ = try LOCA.open(Array(file.dropLast()), key: key) } == .truncated)
        #expect(Self.code { _ = try LOCA.open(Array(file.prefix(64)), key: key) } == .truncated)
        #expect(Self.code { _ = try LOCA.open(file + [0], key: key) } == .sizeMismatch)
        #expect(Self.code { _ = try LOCA.open(Array(file.prefix(10)), key: key) } == .truncated)
        #expect(Self.code { _ = try LOCA.open([], key: key) } == .truncated)
    }

    @Test func streamedChaChaMatchesOneShotLOCA() throws {
        // What the vault writes (placeholder header, streamed ciphertext, header patched at the
        // end) is the same file as LOCA.seal with the same nonce.
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        let plaintext = SecureRandom.bytes(1000)
        let stream = try ChaChaPolyStream(.encrypt, key: key, nonce: nonce)
        var body: [UInt8] = []
        for chunk in stride(from: 0, to: plaintext.count, by: 77) {
            var piece = Array(plaintext[chunk..<min(chunk + 77, plaintext.count)])
            stream.process(&piece)
            body += piece
        }
        let tag = stream.finalize()
        let header = LOCAHeader(algorithm: .chacha20poly1305, nonce: nonce, originalSize: 1000, timestamp: 5)
        let streamed = header.encoded() + body + tag
        #expect(
            streamed
                == (try LOCA.seal(
                    plaintext: plaintext, key: key, algorithm: .chacha20poly1305, nonce: nonce, timestamp: 5)))
    }

    // MARK: - Independent test vectors (protocol/vectors/loca.json, made with Python `cryptography`)

    // A file or a key that cannot be read leaves the list empty, and the test below fails.
    static let vectors = Vector.entries("loca.json", "vectors")

    @Test func pythonVectorsCoverEveryAlgorithm() throws {
        #expect(Set(try Self.vectors.map { try $0.algorithm.string }) == Set(AEADAlgorithm.allCases.map(\.name)))
    }

    @Test(arguments: vectors)
    func pythonVector(_ v: Vector) throws {
        let algorithm = try #require(AEADAlgorithm(name: try v.algorithm.string))
        #expect(algorithm.rawValue == (try v.algorithmId.integer(UInt8.self)))
        guard algorithm.isAvailable else { return }
        let key = SecretBytes(copying: try v.key.bytes)
        let nonce = try v.nonce.bytes
        let plaintext = try v.plaintext.bytes
        let file = try v.file.bytes
        let timestamp = try v.timestamp.int64
        let sealed = try LOCA.seal(
            plaintext: plaintext, key: key, algorithm: algorithm, nonce: nonce, timestamp: timestamp)
        #expect(sealed == file)
        let (header, opened) = try LOCA.openWithHeader(file, key: key)
        #expect(opened == plaintext)
        #expect(header.timestamp == timestamp)
        #expect(header.nonce == nonce)
    }
}
