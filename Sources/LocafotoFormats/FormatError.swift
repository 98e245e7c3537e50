import LocafotoErrors

/// Errors of the format layer (LOCA files, content sniffing, bundles).
/// The message says what is wrong and, where there is something to do, what to do.
public typealias FormatError = LayerError<FormatErrorCode>

public enum FormatErrorCode: String, LayerErrorCode {
    /// Fewer bytes than the structure needs.
    case truncated
    /// The bytes do not start with the expected magic number: not this kind of file.
    case badMagic
    /// A version this build does not read.
    case unsupportedVersion
    /// An algorithm identifier this build does not know.
    case unsupportedAlgorithm
    /// A size above the format's limit.
    case tooLarge
    /// A field has a value the format forbids (e.g. non-zero reserved bytes).
    case malformed
    /// Content that is not one of the supported image formats.
    case unsupportedContent
    /// The total length disagrees with the length the header announces.
    case sizeMismatch
    /// A signature that does not verify: the bytes were altered or not made by the claimed sender.
    case badSignature
    /// A bundle addressed to another node's key.
    case wrongRecipient
    /// The ciphertext does not match its AEAD tag: altered in transit or at rest.
    case tagMismatch
    /// Key material in the wrong form (e.g. a shared key that is not 64 hex digits).
    case invalidKey
}
