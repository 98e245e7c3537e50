import Foundation
import LocafotoCrypto
import LocafotoErrors

/// The `.locaphoto` file: the seed's JSON bundle shape, with the photo key sealed to the
/// recipient and the whole signed by the sender (protocol/formats.md).
///
/// ```json
/// { "version": "2.0",
///   "photo": { "id", "algorithm", "encryptedData", "encryptedKey", "iv", "authTag" },
///   "metadata": { "originalSize", "captureDate", "width", "height", "format", "name" },
///   "sender": { "publicKey", "fingerprint" }, "recipient": { "publicKey" },
///   "signature" }
/// ```
/// Binary fields are standard base64 with padding.
public enum LocaphotoFile {
    /// Largest `.locaphoto` file read into memory (base64 inflates the photo by 4/3).
    public static let maxFileSize = 512 << 20
    public static let fileExtension = "locaphoto"

    struct Document: Codable {
        struct Photo: Codable {
            var id: String
            var algorithm: String
            var encryptedData: String?
            var encryptedKey: String
            var iv: String
            var authTag: String
        }
        struct Party: Codable {
            var publicKey: String
            var fingerprint: String?
        }
        var version: String
        var photo: Photo
        var metadata: BundleMetadata
        var sender: Party
        var recipient: Party
        var signature: String
    }

    /// Encodes a bundle; `encryptedData` nil writes a header-only document (used for queues).
    public static func encode(_ h: BundleHeader, encryptedData: [UInt8]?) throws -> Data {
        let doc = Document(
            version: h.version,
            photo: .init(
                id: h.photoID, algorithm: h.algorithm.name,
                encryptedData: encryptedData.map { Data($0).base64EncodedString() },
                encryptedKey: Data(h.encryptedKey).base64EncodedString(), iv: Data(h.iv).base64EncodedString(),
                authTag: Data(h.authTag).base64EncodedString()),
            metadata: h.metadata,
            sender: .init(
                publicKey: Data(h.sender.bytes).base64EncodedString(),
                fingerprint: Fingerprint(publicKey: h.sender).description),
            recipient: .init(publicKey: Data(h.recipient.bytes).base64EncodedString(), fingerprint: nil),
            signature: Data(h.signature).base64EncodedString())
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try e.encode(doc)
    }

    /// The version this reader accepts (formats.md).
    public static let version = "2.0"

    /// Why a JSON document that is not a version 2.0 bundle was refused, when it is a shape of
    /// another version (nil: not recognised; the caller says "invalid or truncated JSON"):
    ///
    /// - `"version": "1.0"`: the original app's share bundle (seed 000): `photo` {id,
    ///   encryptedData, encryptedKey, iv, authTag}, `metadata`, and a `signature` that is a plain
    ///   SHA-256 of the bundle: no sender key, no recipient, nothing this reader could verify.
    /// - no `version`, top-level `encryptedData` / `encryptedKey` / `iv` / `tag` (seed 001's
    ///   "standard format"): the photo key is not sealed to anyone and nothing is signed.
    /// - any other `version`: named as such (a newer Locafoto, say).
    /// - `"version": "2.0"` with fields missing or of the wrong type: said as such.
    static func olderShape(_ data: Data) -> FormatError? {
        guard let object = try? JSONSerialization.jsonObject(with: data), let doc = object as? [String: Any] else {
            return nil
        }
        let remedy = "ask the sender to seal it again with `locafoto bundle`, or to send it with `locafoto send`"
        switch doc["version"] {
        case let v as String where v == version:
            return FormatError(
                .malformed,
                "a version \(version) .locaphoto bundle with fields missing or of the wrong type (see protocol/formats.md); it cannot be opened"
            )
        case let v as String where v == "1.0" || v == "1":
            return FormatError(
                .unsupportedVersion,
                "this .locaphoto bundle is version 1.0 (the original app's share format), which Locafoto does not accept: it has no sender key or recipient, so it can be neither opened nor verified; this Locafoto reads version \(version); \(remedy)"
            )
        case let v as String:
            return FormatError(
                .unsupportedVersion,
                "this .locaphoto bundle is version \(v.prefix(16)), which this Locafoto does not accept (it reads version \(version)); \(remedy)"
            )
        case let v as NSNumber where v.doubleValue == 2.0:
            // 2.0 written as a number: the right version in the wrong type.
            return FormatError(
                .malformed,
                "a .locaphoto bundle whose version is the number 2.0, not the string \"2.0\" (see protocol/formats.md); it cannot be opened"
            )
        case let v as NSNumber:
            return FormatError(
                .unsupportedVersion,
                "this .locaphoto bundle is version \(v), which this Locafoto does not accept (it reads version \(version)); \(remedy)"
            )
        default:
            let unversioned = ["encryptedData", "encryptedKey", "iv", "tag"].filter { doc[$0] != nil }
            guard !unversioned.isEmpty else { return nil }
            return FormatError(
                .unsupportedVersion,
                "this .locaphoto bundle has no version: it is the original app's unversioned format (photo fields \(unversioned.joined(separator: ", ")) at the top level), which Locafoto does not accept: its key is not sealed to anyone and nothing is signed; this Locafoto reads version \(version); \(remedy)"
            )
        }
    }

    /// Decodes and validates a bundle (lengths, limits, signature). The ciphertext is NOT
    /// decrypted here: that needs the recipient's key (`BundleOpener`).
    public static func decode(_ data: Data, requireData: Bool = true) throws -> (BundleHeader, [UInt8]?) {
        guard data.count <= maxFileSize else {
            throw FormatError(.tooLarge, "bundle is \(data.count) bytes; the limit is \(maxFileSize)")
        }
        guard !data.isEmpty else { throw FormatError(.truncated, "bundle file is empty") }
        let doc: Document
        do {
            doc = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw olderShape(data) ?? FormatError(.malformed, "not a .locaphoto bundle (invalid or truncated JSON)")
        }
        guard let alg = AEADAlgorithm(name: doc.photo.algorithm) else {
            throw FormatError(.unsupportedAlgorithm, "bundle algorithm '\(doc.photo.algorithm)' is not supported")
        }
        func b64(_ s: String, _ what: String) throws -> [UInt8] {
            guard let d = Data(base64Encoded: s) else {
                throw FormatError(.malformed, "bundle field \(what) is not valid base64")
            }
            return [UInt8](d)
        }
        let header = BundleHeader(
            photoID: doc.photo.id, algorithm: alg, iv: try b64(doc.photo.iv, "iv"),
            encryptedKey: try b64(doc.photo.encryptedKey, "encryptedKey"),
            authTag: try b64(doc.photo.authTag, "authTag"),
            metadata: doc.metadata, sender: try key(doc.sender.publicKey, "sender"),
            recipient: try key(doc.recipient.publicKey, "recipient"),
            signature: try b64(doc.signature, "signature"))
        var h = header
        h.version = doc.version
        try h.validate()
        try h.verifySignature()
        var payload: [UInt8]? = nil
        if let enc = doc.photo.encryptedData {
            payload = try b64(enc, "encryptedData")
            guard payload!.count == Int(h.metadata.originalSize) else {
                throw FormatError(
                    .sizeMismatch,
                    "bundle carries \(payload!.count) bytes of photo data, metadata says \(h.metadata.originalSize)")
            }
        } else if requireData {
            throw FormatError(.truncated, "bundle has no encryptedData")
        }
        return (h, payload)

        func key(_ s: String, _ what: String) throws -> SigningPublicKey {
            guard let d = Data(base64Encoded: s), d.count == 32 else {
                throw FormatError(.malformed, "bundle \(what) public key must be 32 bytes of base64")
            }
            return try SigningPublicKey(bytes: [UInt8](d))
        }
    }
}
