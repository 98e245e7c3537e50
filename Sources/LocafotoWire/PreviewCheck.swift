import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats

/// The receiver's checks on one PREVIEW (protocol/messages.md "PREVIEW"): the sealed box is the
/// announced length plus the box's overhead, opens with this node's key, hashes to the
/// announced BLAKE2b-256, and is a JPEG a preview may be (`PreviewImage.validate`). A preview
/// that fails any of them is dropped, never stored or shown; the offer goes on without it.
public enum PreviewCheck {
    /// The opened JPEG (zeroed when released) if every check passes.
    public static func open(_ sealed: [UInt8], announced: PreviewInfo, with key: X25519SecretKey) throws -> SecretBytes
    {
        guard sealed.count == announced.size + SealedBox.overhead else {
            throw FormatError(
                .sizeMismatch,
                "the preview is \(sealed.count) sealed bytes; the offer announced \(announced.size) (+\(SealedBox.overhead))"
            )
        }
        let jpeg = try SealedBox.open(sealed, with: key, maxPlaintext: PreviewImage.maxBytes)
        let matches = jpeg.withUnsafeBytes { Hex.encode(ContentHash.of($0)) == announced.hash }
        guard matches else {
            throw FormatError(.sizeMismatch, "the preview does not match the hash the offer announced")
        }
        _ = try jpeg.withUnsafeBytes { try PreviewImage.validate($0) }
        return jpeg
    }

    /// A late preview (cap `late-preview`): nothing was announced, so the box opens within the
    /// preview bound and the JPEG is checked as a preview; the session vouches for its sender.
    public static func openLate(_ sealed: [UInt8], with key: X25519SecretKey) throws -> SecretBytes {
        let jpeg = try SealedBox.open(sealed, with: key, maxPlaintext: PreviewImage.maxBytes)
        _ = try jpeg.withUnsafeBytes { try PreviewImage.validate($0) }
        return jpeg
    }
}
