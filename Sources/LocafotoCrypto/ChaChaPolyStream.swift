internal import CSodium

/// ChaCha20-Poly1305 (RFC 8439 §2.8, the IETF AEAD) processed in pieces, so that a photo of any
/// size is encrypted or verified with memory bounded by the piece size.
///
/// This is not a new primitive: it is the RFC 8439 composition — Poly1305 key from ChaCha20 block 0,
/// ChaCha20 from block 1 for the data, Poly1305 over aad ‖ pad ‖ ciphertext ‖ pad ‖ le64 lengths —
/// built from libsodium's `crypto_stream_chacha20_ietf_xor_ic` and `crypto_onetimeauth_poly1305_*`,
/// exactly as libsodium composes its one-shot `crypto_aead_chacha20poly1305_ietf_*`. The output is
/// byte-identical to the one-shot API (tested), so any RFC 8439 implementation opens it. libsodium
/// 1.0.18 has no incremental AES-GCM, which is why the streaming path uses this algorithm.
public final class ChaChaPolyStream {
    public enum Direction: Sendable { case encrypt, decrypt }

    private let direction: Direction
    private let key: SecretBytes
    private let nonce: [UInt8]
    private let mac: HeapState
    private var counter: UInt32 = 1          // next ChaCha20 block number
    private let keystreamBox = SecretBytes(count: 64)  // zeroed on release
    private var keystreamUsed = 64           // bytes of `keystream` already consumed
    private var length: UInt64 = 0
    private let aadLength: UInt64
    private var finished = false

    public init(_ direction: Direction, key: SecretBytes, nonce: [UInt8], aad: [UInt8] = []) throws {
        Sodium.ready()
        guard key.count == 32 else { throw CryptoError.length("ChaCha20-Poly1305 key", expected: 32, got: key.count) }
        guard nonce.count == 12 else { throw CryptoError.length("ChaCha20-Poly1305 nonce", expected: 12, got: nonce.count) }
        self.direction = direction
        self.key = key
        self.nonce = nonce
        mac = HeapState(bytes: crypto_onetimeauth_poly1305_statebytes())
        aadLength = UInt64(aad.count)
        var block0 = [UInt8](repeating: 0, count: 64)
        key.withUnsafeBytes { k in
            _ = crypto_stream_chacha20_ietf(&block0, 64, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        crypto_onetimeauth_poly1305_init(macState, block0)
        secureZero(&block0)
        update(mac: aad)
        padMac(aad.count)
    }

    private var macState: UnsafeMutablePointer<crypto_onetimeauth_poly1305_state> {
        mac.pointer.assumingMemoryBound(to: crypto_onetimeauth_poly1305_state.self)
    }

    private func update(mac bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        crypto_onetimeauth_poly1305_update(macState, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    private func update(mac bytes: [UInt8]) {
        bytes.withUnsafeBytes { update(mac: $0) }
    }

    private func padMac(_ n: Int) {
        let rem = n % 16
        if rem != 0 { update(mac: [UInt8](repeating: 0, count: 16 - rem)) }
    }

    /// Encrypts or decrypts `buffer` in place. Decrypted bytes are unauthenticated until
    /// `verify(tag:)` succeeds: callers must not act on them before that.
    public func process(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(!finished, "ChaChaPolyStream used after finalisation")
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count > 0 else { return }
        if direction == .decrypt { update(mac: UnsafeRawBufferPointer(buffer)) }
        var offset = 0
        let n = buffer.count
        // 1. Leftover keystream from a previous partial block.
        keystreamBox.withUnsafeBytes { ks in
            while keystreamUsed < 64 && offset < n {
                base[offset] ^= ks[keystreamUsed]
                keystreamUsed += 1
                offset += 1
            }
        }
        // 2. Whole blocks straight through libsodium.
        let whole = (n - offset) / 64 * 64
        if whole > 0 {
            key.withUnsafeBytes { k in
                _ = crypto_stream_chacha20_ietf_xor_ic(
                    base + offset, base + offset, UInt64(whole), nonce, counter,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            counter &+= UInt32(whole / 64)
            offset += whole
        }
        // 3. A trailing partial block: generate one keystream block and keep the rest.
        if offset < n {
            keystreamBox.withUnsafeMutableBytes { ks in
                let kp = ks.baseAddress!.assumingMemoryBound(to: UInt8.self)
                // crypto_stream_chacha20_ietf_xor_ic over zeros yields the raw keystream block.
                ks.initializeMemory(as: UInt8.self, repeating: 0)
                key.withUnsafeBytes { k in
                    _ = crypto_stream_chacha20_ietf_xor_ic(
                        kp, kp, 64, nonce, counter, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            counter &+= 1
            keystreamUsed = 0
            keystreamBox.withUnsafeBytes { ks in
                while offset < n {
                    base[offset] ^= ks[keystreamUsed]
                    keystreamUsed += 1
                    offset += 1
                }
            }
        }
        if direction == .encrypt { update(mac: UnsafeRawBufferPointer(buffer)) }
        length += UInt64(n)
    }

    public func process(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { process($0) }
    }

    /// Total bytes processed so far.
    public var processedLength: UInt64 { length }

    private func computeTag() -> [UInt8] {
        precondition(!finished, "ChaChaPolyStream finalised twice")
        finished = true
        padMac(Int(length % 16))
        var lengths = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            lengths[i] = UInt8(truncatingIfNeeded: aadLength >> (8 * UInt64(i)))
            lengths[8 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(i)))
        }
        update(mac: lengths)
        var tag = [UInt8](repeating: 0, count: 16)
        crypto_onetimeauth_poly1305_final(macState, &tag)
        return tag
    }

    /// Encryption: the 16-byte tag over everything processed.
    public func finalize() -> [UInt8] {
        precondition(direction == .encrypt, "finalize() is for encryption; use verify(tag:)")
        return computeTag()
    }

    /// Decryption: throws unless `tag` authenticates everything processed.
    public func verify(tag: [UInt8]) throws {
        precondition(direction == .decrypt, "verify(tag:) is for decryption; use finalize()")
        let expected = computeTag()
        guard tag.count == 16, constantTimeEquals(expected, tag) else {
            throw CryptoError(.authenticationFailed, "authentication failed: wrong key or the data was altered")
        }
    }
}
