internal import CSodium
import LocafotoErrors

/// libsodium's `crypto_secretstream_xchacha20poly1305`: an authenticated stream of messages
/// with ordering and truncation protection (the last message carries TAG_FINAL). Used for
/// vault backups, where one file holds many pieces.
public enum SecretStream {
    public static let headerLength = 24
    public static let overhead = 17  // ABYTES

    public enum Tag: UInt8, Sendable {
        case message = 0
        case final = 3
    }

    /// Derives a 32-byte subkey from `key` for one purpose (`crypto_kdf_derive_from_key`,
    /// BLAKE2b based). `context` must be exactly 8 bytes.
    public static func deriveKey(from key: SecretBytes, id: UInt64, context: String) -> SecretBytes {
        Sodium.ready()
        precondition(context.utf8.count == 8, "KDF context must be 8 bytes")
        let out = SecretBytes(count: 32)
        out.withUnsafeMutableBytes { o in
            key.withUnsafeBytes { k in
                _ = crypto_kdf_derive_from_key(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, id, context,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    public final class Writer {
        private let state: HeapState
        public let header: [UInt8]

        public init(key: SecretBytes) throws {
            Sodium.ready()
            guard key.count == 32 else { throw CryptoError.length("secretstream key", expected: 32, got: key.count) }
            let st = HeapState(bytes: crypto_secretstream_xchacha20poly1305_statebytes())
            var h = [UInt8](repeating: 0, count: SecretStream.headerLength)
            key.withUnsafeBytes { k in
                _ = crypto_secretstream_xchacha20poly1305_init_push(
                    st.pointer.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self), &h,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            state = st
            header = h
        }

        public func push(_ message: [UInt8], tag: Tag = .message, ad: [UInt8] = []) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: message.count + SecretStream.overhead)
            _ = crypto_secretstream_xchacha20poly1305_push(
                state.pointer.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self), &out, nil,
                message, UInt64(message.count), ad, UInt64(ad.count), tag.rawValue)
            return out
        }
    }

    public final class Reader {
        private let state: HeapState
        public private(set) var finished = false

        public init(key: SecretBytes, header: [UInt8]) throws {
            Sodium.ready()
            guard key.count == 32 else { throw CryptoError.length("secretstream key", expected: 32, got: key.count) }
            guard header.count == SecretStream.headerLength else {
                throw CryptoError.length("secretstream header", expected: SecretStream.headerLength, got: header.count)
            }
            let st = HeapState(bytes: crypto_secretstream_xchacha20poly1305_statebytes())
            let rc = key.withUnsafeBytes { k in
                crypto_secretstream_xchacha20poly1305_init_pull(
                    st.pointer.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self), header,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            state = st
            guard rc == 0 else { throw CryptoError(.invalidKey, "invalid secretstream header") }
        }

        /// Decrypts one message; throws if it was altered, reordered, or follows the final one.
        public func pull(_ ciphertext: [UInt8], ad: [UInt8] = []) throws -> (message: [UInt8], tag: Tag) {
            guard !finished else { throw CryptoError(.authenticationFailed, "data after the end of the stream") }
            guard ciphertext.count >= SecretStream.overhead else {
                throw CryptoError(
                    .invalidLength, "stream message shorter than its \(SecretStream.overhead)-byte overhead")
            }
            var out = [UInt8](repeating: 0, count: ciphertext.count - SecretStream.overhead)
            var tag: UInt8 = 0
            let rc = crypto_secretstream_xchacha20poly1305_pull(
                state.pointer.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self), &out, nil,
                &tag, ciphertext, UInt64(ciphertext.count), ad, UInt64(ad.count))
            guard rc == 0 else {
                throw CryptoError(
                    .authenticationFailed, "the stream was altered, truncated or reordered, or the key is wrong")
            }
            let t = Tag(rawValue: tag) ?? .message
            if t == .final { finished = true }
            return (out, t)
        }
    }
}
