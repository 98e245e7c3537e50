import LocafotoErrors

/// ChaCha20-Poly1305 (RFC 8439 §2.8, the IETF AEAD) processed in pieces, so that a photo of any
/// size is encrypted or verified with memory bounded by the piece size.
///
/// This is the AEAD itself, fed incrementally: OpenSSL's EVP ChaCha20-Poly1305 accepts data in
/// pieces of any length and gives (or checks) the tag at the end (see `BulkAEAD` for why OpenSSL).
/// The output is byte-identical to the one-shot AEAD (tested against libsodium's), so any
/// RFC 8439 implementation opens it. AES-256-GCM could be streamed the same way; the formats use
/// ChaCha20-Poly1305 for streams because libsodium, which peers may use, has no incremental GCM.
public final class ChaChaPolyStream {
    public enum Direction: Sendable { case encrypt, decrypt }

    private let direction: Direction
    private let context: OpaquePointer
    private var length: UInt64 = 0
    private var finished = false

    public init(_ direction: Direction, key: SecretBytes, nonce: [UInt8], aad: [UInt8] = []) throws {
        guard key.count == 32 else { throw CryptoError.length("ChaCha20-Poly1305 key", expected: 32, got: key.count) }
        guard nonce.count == 12 else {
            throw CryptoError.length("ChaCha20-Poly1305 nonce", expected: 12, got: nonce.count)
        }
        self.direction = direction
        context = key.withUnsafeBytes { k in
            nonce.withUnsafeBufferPointer { n in
                BulkAEAD.context(
                    .chacha20poly1305, encrypt: direction == .encrypt,
                    key: k.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    nonce: n.baseAddress!)
            }
        }
        if !aad.isEmpty {
            aad.withUnsafeBufferPointer {
                BulkAEAD.update(
                    context, encrypt: direction == .encrypt, input: $0.baseAddress!, output: nil, count: $0.count)
            }
        }
    }

    deinit {
        BulkAEAD.free(context)
    }

    /// Encrypts or decrypts `buffer` in place. Decrypted bytes are unauthenticated until
    /// `verify(tag:)` succeeds: callers must not act on them before that.
    public func process(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(!finished, "ChaChaPolyStream used after finalisation")
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count > 0 else { return }
        BulkAEAD.update(context, encrypt: direction == .encrypt, input: base, output: base, count: buffer.count)
        length += UInt64(buffer.count)
    }

    public func process(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { process($0) }
    }

    /// Total bytes processed so far.
    public var processedLength: UInt64 { length }

    /// Encryption: the 16-byte tag over everything processed.
    public func finalize() -> [UInt8] {
        precondition(direction == .encrypt, "finalize() is for encryption; use verify(tag:)")
        precondition(!finished, "ChaChaPolyStream finalised twice")
        finished = true
        var tag = [UInt8](repeating: 0, count: 16)
        BulkAEAD.finishSeal(context, tag: &tag)
        return tag
    }

    /// Decryption: throws unless `tag` authenticates everything processed.
    public func verify(tag: [UInt8]) throws {
        precondition(direction == .decrypt, "verify(tag:) is for decryption; use finalize()")
        precondition(!finished, "ChaChaPolyStream finalised twice")
        finished = true
        guard BulkAEAD.finishOpen(context, tag: tag) else {
            throw CryptoError(.authenticationFailed, "authentication failed: wrong key or the data was altered")
        }
    }
}
