import LocafotoCrypto
import LocafotoErrors

/// The 64-byte header of a LOCA encrypted photo file (seed 000, "Encryption Specification").
///
/// A LOCA file is `header (64) ‖ ciphertext (originalSize) ‖ tag (16)`. Header layout, integers
/// big-endian:
///
///     0  magic "LOCA" (4)        4  version u16 = 1     6  algorithm u8    7  reserved u8 = 0
///     8  nonce (12)             20  original size u64  28  timestamp i64 (Unix seconds)
///    36  reserved (28) = 0
///
/// The AEAD has no associated data, so the header fields are not authenticated as such: the
/// nonce, key and algorithm are implicitly (a change makes the tag fail), the original size is
/// through the file length check, but the timestamp is not — treat it as informational.
public struct LOCAHeader: Equatable, Sendable {
    public static let length = 64
    public static let tagLength = 16
    public static let magic: [UInt8] = Array("LOCA".utf8)
    public static let version: UInt16 = 1
    /// 4 GiB: larger photos are refused (`tooLarge`).
    public static let maxOriginalSize: UInt64 = 1 << 32

    public var algorithm: AEADAlgorithm
    /// 12 bytes (`AEADAlgorithm.nonceLength`).
    public var nonce: [UInt8]
    public var originalSize: UInt64
    /// Creation time of the file, Unix seconds.
    public var timestamp: Int64

    public init(algorithm: AEADAlgorithm, nonce: [UInt8], originalSize: UInt64, timestamp: Int64) {
        self.algorithm = algorithm
        self.nonce = nonce
        self.originalSize = originalSize
        self.timestamp = timestamp
    }

    /// Throws `malformed` for a nonce that is not 12 bytes and `tooLarge` above `maxOriginalSize`.
    public func validate() throws {
        guard nonce.count == AEADAlgorithm.nonceLength else {
            throw FormatError(
                .malformed, "LOCA nonce must be \(AEADAlgorithm.nonceLength) bytes, got \(nonce.count)")
        }
        guard originalSize <= Self.maxOriginalSize else {
            throw FormatError(
                .tooLarge,
                "the photo is \(originalSize) bytes; LOCA files hold at most \(Self.maxOriginalSize) bytes (4 GiB)")
        }
    }

    /// The 64 header bytes. The nonce must be 12 bytes (see `validate()`).
    public func encoded() -> [UInt8] {
        precondition(nonce.count == AEADAlgorithm.nonceLength, "LOCA nonce must be 12 bytes")
        var out: [UInt8] = []
        out.reserveCapacity(Self.length)
        out += Self.magic
        out += [UInt8(Self.version >> 8), UInt8(Self.version & 0xFF)]
        out.append(algorithm.rawValue)
        out.append(0)
        out += nonce
        appendBigEndian(&out, originalSize)
        appendBigEndian(&out, UInt64(bitPattern: timestamp))
        out += [UInt8](repeating: 0, count: 28)
        assert(out.count == Self.length)
        return out
    }

    /// Decodes the first 64 bytes of `bytes` (which may be a whole file). Throws `FormatError`:
    /// `badMagic` (not a LOCA file), `truncated` (fewer than 64 bytes), `unsupportedVersion`,
    /// `unsupportedAlgorithm`, `malformed` (non-zero reserved bytes) or `tooLarge`.
    public init(decoding bytes: some Collection<UInt8>) throws {
        let b = Array(bytes.prefix(Self.length))
        let magicPart = min(b.count, Self.magic.count)
        guard Array(b[0..<magicPart]) == Array(Self.magic[0..<magicPart]) else {
            throw FormatError(.badMagic, "not a LOCA file: it does not start with \"LOCA\"")
        }
        guard b.count == Self.length else {
            throw FormatError(
                .truncated, "LOCA header truncated: \(b.count) of \(Self.length) bytes; the file is incomplete")
        }
        let version = UInt16(b[4]) << 8 | UInt16(b[5])
        guard version == Self.version else {
            throw FormatError(
                .unsupportedVersion,
                "LOCA version \(version) is not supported (this build reads version \(Self.version)); update Locafoto")
        }
        guard let algorithm = AEADAlgorithm(rawValue: b[6]) else {
            throw FormatError(
                .unsupportedAlgorithm,
                "LOCA algorithm 0x\(Hex.encode([b[6]])) is unknown (known: 0x01 AES-256-GCM, 0x02 ChaCha20-Poly1305)")
        }
        guard b[7] == 0, b[36..<64].allSatisfy({ $0 == 0 }) else {
            throw FormatError(
                .malformed, "LOCA header has non-zero reserved bytes; the file is damaged or not version 1")
        }
        self.algorithm = algorithm
        nonce = Array(b[8..<20])
        originalSize = readBigEndian(b, at: 20)
        timestamp = Int64(bitPattern: readBigEndian(b, at: 28))
        try validate()
    }

    /// `64 + originalSize + 16`: the only valid total length of the file.
    public func expectedFileLength() -> UInt64 {
        UInt64(Self.length) + originalSize + UInt64(Self.tagLength)
    }

    /// Throws `truncated` when the file is shorter than the header announces, `sizeMismatch`
    /// when it is longer.
    public func checkFileLength(_ length: UInt64) throws {
        let expected = expectedFileLength()
        if length < expected {
            throw FormatError(
                .truncated, "LOCA file is truncated: \(length) bytes, the header announces \(expected)")
        }
        if length > expected {
            throw FormatError(
                .sizeMismatch,
                "LOCA file is \(length) bytes but its header announces \(expected): trailing data or a damaged header")
        }
    }
}

/// In-memory LOCA sealing and opening, for test vectors and small files. Large photos are
/// streamed by the vault with `ChaChaPolyStream` and `LOCAHeader` instead.
public enum LOCA {
    /// Encrypts `plaintext` under `key` (32 bytes) with a fresh random nonce.
    /// Throws `FormatError.tooLarge` above 4 GiB and `CryptoError` for a bad key or when
    /// AES-256-GCM is not available on this CPU.
    public static func seal(
        plaintext: some ContiguousBytes, key: SecretBytes, algorithm: AEADAlgorithm = .chacha20poly1305,
        timestamp: Int64
    ) throws -> [UInt8] {
        try seal(
            plaintext: plaintext, key: key, algorithm: algorithm,
            nonce: SecureRandom.bytes(AEADAlgorithm.nonceLength), timestamp: timestamp)
    }

    /// Encrypts with a caller-chosen nonce. Only for test vectors: a nonce must never be
    /// reused with the same key.
    public static func seal(
        plaintext: some ContiguousBytes, key: SecretBytes, algorithm: AEADAlgorithm, nonce: [UInt8],
        timestamp: Int64
    ) throws -> [UInt8] {
        let size = plaintext.withUnsafeBytes { UInt64($0.count) }
        let header = LOCAHeader(algorithm: algorithm, nonce: nonce, originalSize: size, timestamp: timestamp)
        try header.validate()
        let (ciphertext, tag) = try AEAD.seal(algorithm, key: key, nonce: nonce, plaintext: plaintext)
        var out = header.encoded()
        out.reserveCapacity(Int(header.expectedFileLength()))
        out += ciphertext
        out += tag
        return out
    }

    /// Validates the header and the length, then decrypts. Throws `FormatError` for a bad
    /// header or length and `tagMismatch` for a wrong key or altered bytes (`CryptoError` only
    /// for a key that is not 32 bytes or AES-256-GCM unavailable on this CPU).
    public static func open(_ file: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try openWithHeader(file, key: key).plaintext
    }

    /// Like `open(_:key:)`, also returning the decoded header.
    public static func openWithHeader(_ file: [UInt8], key: SecretBytes) throws -> (
        header: LOCAHeader, plaintext: [UInt8]
    ) {
        let header = try LOCAHeader(decoding: file)
        try header.checkFileLength(UInt64(file.count))
        let end = file.count - LOCAHeader.tagLength
        do {
            let plaintext = try AEAD.open(
                header.algorithm, key: key, nonce: header.nonce, ciphertext: file[LOCAHeader.length..<end],
                tag: Array(file[end...]))
            return (header, plaintext)
        } catch let e as CryptoError where e.code == .authenticationFailed {
            throw FormatError(.tagMismatch, "the LOCA file does not authenticate: wrong key, or the file was altered")
        }
    }
}

private func appendBigEndian(_ out: inout [UInt8], _ v: UInt64) {
    for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
}

private func readBigEndian(_ b: [UInt8], at offset: Int) -> UInt64 {
    var v: UInt64 = 0
    for i in 0..<8 { v = v << 8 | UInt64(b[offset + i]) }
    return v
}
