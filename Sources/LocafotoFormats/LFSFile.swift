import LocafotoCrypto
import LocafotoErrors

/// The `.lfs` file (Locafoto Shared Format, seed 001): one file encrypted under a *named* shared
/// key, so that files can be made outside Locafoto with any AES-GCM library.
///
///     offset        size  field
///     0             128   key name: UTF-8, then NUL (0x00) padding to 128 bytes
///     128           n     ciphertext (n = plaintext length)
///     128+n         12    nonce
///     140+n         16    tag
///
/// AES-256-GCM with the 32-byte shared key, the 12-byte nonce and no associated data. This is
/// byte for byte what the seed's Python example writes (`AESGCM(key).encrypt(nonce, data, None)`,
/// the tag split off the end, nonce then tag appended after the ciphertext).
///
/// Decisions where the seed is silent (protocol/formats.md, "The `.lfs` shared-key file"):
/// - The key name is the header bytes before the first NUL; a name of exactly 128 bytes has no
///   NUL. Every byte after the first NUL must be NUL (so a name cannot "contain" a NUL), the name
///   must be 1…128 bytes and valid UTF-8. Anything else is `malformed`.
/// - The header is not authenticated (no AAD, as in the seed): a changed name only changes which
///   key is tried, and the wrong key fails the tag.
/// - Empty plaintext is valid: the file is then exactly 156 bytes.
/// - Files shorter than 156 bytes are `truncated`; files over `maxFileSize` (2 GiB) are `tooLarge`.
///
/// libsodium's AES-256-GCM is one-shot (no incremental API), so a whole `.lfs` file is in
/// memory to be opened or sealed: `openInPlace`/`AEAD.sealInPlace` need one buffer of the file
/// size, `open`/`seal` two (input and output). That is why the limit is 2 GiB and not the
/// vault's 4 GiB. AES-256-GCM also needs a CPU with AES-NI (`CryptoError.unavailable` otherwise).
///
/// I/O-free: callers read and write the bytes.
public enum LFSFile {
    public static let fileExtension = "lfs"
    public static let algorithm: AEADAlgorithm = .aes256gcm
    public static let headerLength = 128
    public static let nonceLength = AEADAlgorithm.nonceLength
    public static let tagLength = AEADAlgorithm.tagLength
    /// Header + nonce + tag: the length of a file with empty plaintext (156).
    public static let overhead = headerLength + nonceLength + tagLength
    /// Largest `.lfs` file read or written: 2 GiB (2^31 bytes), because it is processed in memory.
    public static let maxFileSize: UInt64 = 1 << 31
    /// Largest plaintext: `maxFileSize - overhead`.
    public static let maxPlaintextSize: UInt64 = maxFileSize - UInt64(overhead)

    // MARK: - Key names

    /// Throws `malformed` unless `name` is 1…128 bytes of UTF-8 without U+0000 (the format's
    /// rule; the vault applies stricter rules to the names of its keys).
    public static func validateKeyName(_ name: String) throws {
        let n = name.utf8.count
        guard n > 0 else { throw FormatError(.malformed, "an .lfs key name cannot be empty") }
        guard n <= headerLength else {
            throw FormatError(
                .malformed, "the key name is \(n) bytes of UTF-8; an .lfs header holds at most \(headerLength)")
        }
        guard !name.utf8.contains(0) else {
            throw FormatError(.malformed, "an .lfs key name cannot contain a NUL character (U+0000)")
        }
    }

    /// The 128-byte header: the UTF-8 name followed by NUL padding.
    public static func encodeHeader(keyName: String) throws -> [UInt8] {
        try validateKeyName(keyName)
        var header = Array(keyName.utf8)
        header += [UInt8](repeating: 0, count: headerLength - header.count)
        return header
    }

    /// The key name in the header (the first 128 bytes of `bytes`, which may be a whole file or
    /// just its beginning), without needing the key. Throws `truncated` for fewer than 128
    /// bytes and `malformed` for an empty name, non-NUL bytes after the first NUL, or invalid
    /// UTF-8. Does not check the total length (see `checkFileLength`).
    public static func keyName(of bytes: some Collection<UInt8>) throws -> String {
        let header = Array(bytes.prefix(headerLength))
        guard header.count == headerLength else {
            throw FormatError(
                .truncated,
                "not an .lfs file: \(header.count) bytes, shorter than the \(headerLength)-byte key-name header")
        }
        let end = header.firstIndex(of: 0) ?? headerLength
        guard end > 0 else {
            throw FormatError(
                .malformed,
                "the .lfs header names no key (it starts with a NUL byte); the file is damaged or not an .lfs file")
        }
        guard header[end...].allSatisfy({ $0 == 0 }) else {
            throw FormatError(
                .malformed,
                "the .lfs key name has bytes after a NUL byte (the header must be the name then NUL padding); the file is damaged or not an .lfs file"
            )
        }
        guard let name = String(validating: header[..<end], as: UTF8.self) else {
            throw FormatError(
                .malformed, "the .lfs key name is not valid UTF-8; the file is damaged or not an .lfs file")
        }
        return name
    }

    // MARK: - Lengths

    /// Throws `truncated` below 156 bytes and `tooLarge` above `maxFileSize`.
    public static func checkFileLength(_ length: UInt64) throws {
        guard length >= UInt64(overhead) else {
            throw FormatError(
                .truncated, "the .lfs file is \(length) bytes; even an empty one is \(overhead) (header, nonce and tag)"
            )
        }
        guard length <= maxFileSize else {
            throw FormatError(
                .tooLarge,
                "the .lfs file is \(length) bytes; Locafoto reads .lfs files of at most \(maxFileSize) bytes (2 GiB) because AES-GCM is decrypted in memory"
            )
        }
    }

    /// The plaintext length of a file of `fileLength` bytes (after `checkFileLength`).
    public static func plaintextLength(fileLength: UInt64) -> UInt64 { fileLength - UInt64(overhead) }

    // MARK: - Sealing and opening

    /// Encrypts `plaintext` into a complete `.lfs` file. `nonce` defaults to 12 fresh random
    /// bytes; pass one only for test vectors (never reuse a nonce with the same key). Throws
    /// `FormatError` (`malformed` name, `tooLarge` plaintext) or `CryptoError` (key not 32 bytes,
    /// nonce not 12, AES-NI missing).
    public static func seal(
        plaintext: some ContiguousBytes, keyName: String, key: SecretBytes, nonce: [UInt8]? = nil
    ) throws -> [UInt8] {
        let header = try encodeHeader(keyName: keyName)
        let size = plaintext.withUnsafeBytes { UInt64($0.count) }
        guard size <= maxPlaintextSize else {
            throw FormatError(
                .tooLarge,
                "the data is \(size) bytes; an .lfs file holds at most \(maxPlaintextSize) bytes (2 GiB in all)")
        }
        let nonce = nonce ?? SecureRandom.bytes(nonceLength)
        let (ciphertext, tag) = try AEAD.seal(algorithm, key: key, nonce: nonce, plaintext: plaintext)
        var out: [UInt8] = []
        out.reserveCapacity(Int(size) + overhead)
        out += header
        out += ciphertext
        out += nonce
        out += tag
        return out
    }

    /// Checks length and header, then decrypts. Returns the plaintext. Throws `FormatError`
    /// (`truncated`, `tooLarge`, `malformed`, and `tagMismatch` for a wrong key or altered
    /// bytes) or `CryptoError` (key not 32 bytes, AES-NI missing).
    public static func open(_ bytes: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try checkFileLength(UInt64(bytes.count))
        _ = try keyName(of: bytes)
        let tagStart = bytes.count - tagLength
        let nonceStart = tagStart - nonceLength
        do {
            return try AEAD.open(
                algorithm, key: key, nonce: Array(bytes[nonceStart..<tagStart]),
                ciphertext: bytes[headerLength..<nonceStart], tag: Array(bytes[tagStart...]))
        } catch let e as CryptoError where e.code == .authenticationFailed {
            throw tagMismatch()
        }
    }

    /// Decrypts a whole file held in `file` in place and returns the range of `file` that now
    /// holds the plaintext (`128 ..< count - 28`). Same errors as `open`. When the tag does not
    /// verify, no plaintext is left in `file`: libsodium's AES-GCM decrypts while it
    /// authenticates and then zeroes the output, so the ciphertext range is all zeros afterwards
    /// (header, nonce and tag are untouched).
    public static func openInPlace(_ file: UnsafeMutableRawBufferPointer, key: SecretBytes) throws -> Range<Int> {
        try checkFileLength(UInt64(file.count))
        _ = try keyName(of: UnsafeRawBufferPointer(file))
        let tagStart = file.count - tagLength
        let nonceStart = tagStart - nonceLength
        let nonce = Array(file[nonceStart..<tagStart])
        let tag = Array(file[tagStart...])
        let range = headerLength..<nonceStart
        do {
            try AEAD.openInPlace(
                algorithm, key: key, nonce: nonce, buffer: UnsafeMutableRawBufferPointer(rebasing: file[range]),
                tag: tag)
        } catch let e as CryptoError where e.code == .authenticationFailed {
            throw tagMismatch()
        }
        return range
    }

    private static func tagMismatch() -> FormatError {
        FormatError(
            .tagMismatch,
            "the .lfs file does not decrypt: the key with this name is a different key, or the file was altered")
    }
}

/// The text form of a shared key: 64 hexadecimal digits (32 bytes), which is what
/// `locafoto key export` prints and what the seed's Python example reads
/// (`bytes.fromhex(f.read().strip())`).
public enum SharedKeyHex {
    public static let keyLength = 32

    /// 64 lowercase hexadecimal digits, no whitespace. Meant to be shown once, with a warning.
    public static func format(_ key: SecretBytes) -> String { Hex.encode(key) }

    /// Parses 64 hexadecimal digits (either case). ASCII whitespace (space, tab, CR, LF) is
    /// ignored anywhere, so a key pasted over several lines or with a trailing newline is
    /// accepted. Anything else — another character, a `0x` prefix, fewer or more digits — is
    /// refused with `FormatError.invalidKey`. Error messages never contain the input.
    public static func parse(_ text: String) throws -> SecretBytes {
        let out = SecretBytes(count: keyLength)
        var digits = 0
        var high: UInt8 = 0
        var invalid = false
        out.withUnsafeMutableBytes { o in
            for c in text.utf8 {
                let v: UInt8
                switch c {
                case 0x20, 0x09, 0x0A, 0x0D: continue
                case 0x30...0x39: v = c - 0x30
                case 0x61...0x66: v = c - 0x61 + 10
                case 0x41...0x46: v = c - 0x41 + 10
                default:
                    invalid = true
                    return
                }
                if digits < keyLength * 2 {
                    if digits % 2 == 0 { high = v } else { o[digits / 2] = high << 4 | v }
                }
                digits += 1
            }
        }
        high = 0
        guard !invalid else {
            throw FormatError(
                .invalidKey,
                "the key must be 64 hexadecimal digits (0-9, a-f); it contains another character (spaces and line breaks are fine)"
            )
        }
        guard digits == keyLength * 2 else {
            throw FormatError(
                .invalidKey, "the key must be 64 hexadecimal digits (32 bytes); this one has \(digits)")
        }
        return out
    }
}
