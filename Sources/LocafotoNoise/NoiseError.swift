import LocafotoErrors

/// Errors of the Noise layer. The message says what happened; none carries key material.
public typealias NoiseError = LayerError<NoiseErrorCode>

public enum NoiseErrorCode: String, LayerErrorCode {
    /// An AEAD tag did not verify: wrong key, wrong transcript (prologue, keys) or altered bytes.
    case decryptFailed
    /// A message is shorter than its pattern requires, or longer than 65535 bytes (§3).
    case invalidMessage
    /// Writing when the peer should write, reading when we should write, or splitting twice.
    case outOfOrder
    /// A handshake message was written or read after the last one.
    case handshakeComplete
    /// `split()` before the last handshake message.
    case handshakeIncomplete
    /// An earlier error aborted this handshake; it cannot be resumed (its transcript is spoilt).
    case handshakeFailed
    /// A protocol name, pattern, DH, cipher or hash this implementation does not provide.
    case unsupported
    /// The nonce reached 2^64-1, which §5.1 reserves: the CipherState is used up.
    case nonceExhausted
    /// The pattern needs a key (local static, pre-message remote static, psk) that was not given.
    case missingKey
    /// A key of the wrong length, or a DH with a low-order public key.
    case invalidKey
    /// A programming error by the caller: wrong buffer size, a key the pattern must not be given.
    case invalidArgument
}
