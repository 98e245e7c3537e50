import LocafotoCrypto
import LocafotoErrors

/// §5.1: a cipher key `k` (possibly empty) and a 64-bit nonce `n`.
///
/// A value type, as the API requires: a copy carries the same key and nonce, so never encrypt
/// with two copies of one CipherState (that would reuse nonces). The key lives in `SecretBytes`,
/// which is never mutated once set, so sharing it between copies is safe and zeroed on release.
public struct CipherState: Sendable {
    /// Tag length of both AEADs (§5.1 ENCRYPT: "the ciphertext is 16 bytes larger").
    public static let tagLength = 16
    /// §5.1: 2^64-1 is reserved (for `rekey`); reaching it uses the state up.
    static let maxNonce = UInt64.max

    public let cipher: NoiseCipher
    private var k: SecretBytes?
    private var n: UInt64 = 0

    /// An empty CipherState (no key): encryption passes plaintext through, as during the first
    /// handshake messages.
    public init(cipher: NoiseCipher) {
        self.cipher = cipher
    }

    /// InitializeKey(key) with a 32-byte key, nonce 0.
    public init(cipher: NoiseCipher, key: SecretBytes) throws {
        self.cipher = cipher
        try initializeKey(key)
    }

    /// InitializeKey(key): sets `k` (nil = empty) and resets `n` to 0.
    mutating func initializeKey(_ key: SecretBytes?) throws {
        if let key, key.count != 32 {
            throw NoiseError(.invalidKey, "a cipher key must be 32 bytes, got \(key.count)")
        }
        k = key
        n = 0
    }

    /// HasKey().
    public var hasKey: Bool { k != nil }

    /// The nonce the next encryption or decryption uses.
    public var nonce: UInt64 { n }

    /// SetNonce(nonce), for out-of-order transports (§5.1); Locafoto's ordered stream never needs it.
    public mutating func setNonce(_ nonce: UInt64) { n = nonce }

    /// Zeroes the key in place and empties the state (used when a handshake completes or fails).
    mutating func clear() {
        k?.withUnsafeMutableBytes { secureZero($0) }
        k = nil
        n = 0
    }

    /// The key and nonce bytes for the next operation, after the checks every path shares.
    private func nextNonceBytes() throws -> [UInt8] {
        guard n != Self.maxNonce else {
            throw NoiseError(.nonceExhausted, "the nonce reached 2^64-1; this CipherState can no longer be used")
        }
        return cipher.nonceBytes(n)
    }

    // MARK: EncryptWithAd / DecryptWithAd

    /// EncryptWithAd(ad, plaintext): ENCRYPT(k, n++, ad, plaintext), or the plaintext itself if
    /// there is no key yet.
    public mutating func encrypt(ad: [UInt8] = [], plaintext: [UInt8]) throws -> [UInt8] {
        guard let k else {
            try Self.checkLength(plaintext.count)
            return plaintext
        }
        try Self.checkLength(plaintext.count + Self.tagLength)
        let nonce = try nextNonceBytes()
        let sealed = try Self.mapCrypto {
            try AEAD.seal(cipher.algorithm, key: k, nonce: nonce, plaintext: plaintext, aad: ad)
        }
        n += 1
        return sealed.ciphertext + sealed.tag
    }

    /// DecryptWithAd(ad, ciphertext): DECRYPT(k, n++, ad, ciphertext), or the ciphertext itself if
    /// there is no key yet. On authentication failure `n` is left unchanged (§5.1).
    public mutating func decrypt(ad: [UInt8] = [], ciphertext: [UInt8]) throws -> [UInt8] {
        try Self.checkLength(ciphertext.count)
        guard let k else { return ciphertext }
        guard ciphertext.count >= Self.tagLength else {
            throw NoiseError(.invalidMessage, "ciphertext of \(ciphertext.count) bytes is shorter than the 16-byte tag")
        }
        let nonce = try nextNonceBytes()
        let body = ciphertext.count - Self.tagLength
        let plaintext = try Self.mapCrypto {
            try AEAD.open(
                cipher.algorithm, key: k, nonce: nonce, ciphertext: ciphertext[..<body],
                tag: Array(ciphertext[body...]), aad: ad)
        }
        n += 1
        return plaintext
    }

    // MARK: Transport fast path

    /// Transport fast path: encrypts `plaintext` into `out` (out.count == plaintext.count + 16);
    /// they may alias (in place). Requires a key. ChaChaPoly runs truly in place through the
    /// libsodium AEAD, which accepts the same buffer as input and output.
    public mutating func encrypt(_ plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        guard let k else { throw NoiseError(.invalidArgument, "the in-place API needs a keyed CipherState") }
        guard out.count == plaintext.count + Self.tagLength else {
            throw NoiseError(
                .invalidArgument, "output buffer must be \(plaintext.count + Self.tagLength) bytes, got \(out.count)")
        }
        try Self.checkLength(out.count)
        let nonce = try nextNonceBytes()
        let p = plaintext.count
        // memmove semantics: harmless when plaintext and out share their start.
        if p > 0 { out.baseAddress!.copyMemory(from: plaintext.baseAddress!, byteCount: p) }
        let tag = try Self.mapCrypto {
            try AEAD.sealInPlace(
                cipher.algorithm, key: k, nonce: nonce, buffer: UnsafeMutableRawBufferPointer(rebasing: out[0..<p]))
        }
        UnsafeMutableRawBufferPointer(rebasing: out[p...]).copyBytes(from: tag)
        n += 1
    }

    /// Decrypts `ciphertext` (with its 16-byte tag at the end) into `out`
    /// (out.count == ciphertext.count - 16); may alias. On failure `out` is zeroed (it may have
    /// held unauthenticated plaintext) and `n` is unchanged.
    public mutating func decrypt(_ ciphertext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        guard let k else { throw NoiseError(.invalidArgument, "the in-place API needs a keyed CipherState") }
        try Self.checkLength(ciphertext.count)
        guard ciphertext.count >= Self.tagLength else {
            throw NoiseError(.invalidMessage, "ciphertext of \(ciphertext.count) bytes is shorter than the 16-byte tag")
        }
        let body = ciphertext.count - Self.tagLength
        guard out.count == body else {
            throw NoiseError(.invalidArgument, "output buffer must be \(body) bytes, got \(out.count)")
        }
        let nonce = try nextNonceBytes()
        // Copy the tag before anything writes to `out`, which may overlap it.
        let tag = Array(UnsafeRawBufferPointer(rebasing: ciphertext[body...]))
        if body > 0 { out.baseAddress!.copyMemory(from: ciphertext.baseAddress!, byteCount: body) }
        do {
            try AEAD.openInPlace(cipher.algorithm, key: k, nonce: nonce, buffer: out, tag: tag)
        } catch {
            secureZero(out)
            throw NoiseError(.decryptFailed, "transport message did not authenticate: wrong key or altered bytes")
        }
        n += 1
    }

    // MARK: Rekey

    /// Rekey(): k = REKEY(k), the first 32 bytes of ENCRYPT(k, 2^64-1, "", 32 zero bytes) (§4.2);
    /// `n` is unchanged.
    public mutating func rekey() throws {
        guard let k else { throw NoiseError(.missingKey, "cannot rekey a CipherState that has no key") }
        var sealed = try Self.mapCrypto {
            try AEAD.seal(
                cipher.algorithm, key: k, nonce: cipher.nonceBytes(Self.maxNonce),
                plaintext: [UInt8](repeating: 0, count: 32))
        }
        // The 32-byte ciphertext is the new key; the tag is discarded.
        self.k = SecretBytes(consuming: &sealed.ciphertext)
    }

    // MARK: Helpers

    /// §3: every Noise message, handshake or transport, is at most 65535 bytes.
    static func checkLength(_ count: Int) throws {
        guard count <= HandshakeState.maxMessageLength else {
            throw NoiseError(.invalidMessage, "a Noise message is at most 65535 bytes; this one would be \(count)")
        }
    }

    /// Translates the crypto layer's errors: a failed tag is `decryptFailed`; the rest can only be
    /// AES-GCM missing on this CPU.
    static func mapCrypto<R: ~Copyable>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as CryptoError where error.code == .authenticationFailed {
            throw NoiseError(
                .decryptFailed, "message did not authenticate: wrong key, wrong transcript or altered bytes")
        } catch let error as CryptoError where error.code == .unavailable {
            throw NoiseError(.unsupported, error.message)
        } catch let error as CryptoError {
            throw NoiseError(.invalidKey, error.message)
        }
    }
}
