import LocafotoErrors

/// Errors of the crypto layer. The message says what failed; none carries secret material.
public typealias CryptoError = LayerError<CryptoErrorCode>

public enum CryptoErrorCode: String, LayerErrorCode {
    /// An AEAD tag, signature or sealed box did not verify: wrong key or altered bytes.
    case authenticationFailed
    case invalidLength
    case invalidKey
    /// Argon2id could not run (usually: not enough memory for the chosen limits).
    case kdfFailed
    /// The primitive is not available on this CPU (AES-256-GCM without AES-NI).
    case unavailable
}

extension CryptoError {
    static func length(_ what: String, expected: Int, got: Int) -> CryptoError {
        CryptoError(.invalidLength, "\(what) must be \(expected) bytes, got \(got)")
    }
}
