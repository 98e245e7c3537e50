import Foundation
import LocafotoCrypto
import LocafotoErrors

/// Everything of a `.locaphoto` bundle except the photo ciphertext (`encryptedData`), which is
/// streamed separately on the wire. See protocol/formats.md "The .locaphoto bundle".
public struct BundleHeader: Sendable, Equatable {
    public static let version = "2.0"
    public static let maxNameBytes = 255
    public static let maxFormatBytes = 16

    public var version: String = BundleHeader.version
    public var photoID: String
    public var algorithm: AEADAlgorithm
    public var iv: [UInt8]
    /// The photo key sealed (libsodium sealed box) to the recipient's X25519 key.
    public var encryptedKey: [UInt8]
    public var authTag: [UInt8]
    public var metadata: BundleMetadata
    public var sender: SigningPublicKey
    public var recipient: SigningPublicKey
    /// Ed25519 signature by `sender` over `signingInput()`.
    public var signature: [UInt8]

    public init(
        photoID: String, algorithm: AEADAlgorithm, iv: [UInt8], encryptedKey: [UInt8], authTag: [UInt8],
        metadata: BundleMetadata, sender: SigningPublicKey, recipient: SigningPublicKey, signature: [UInt8]
    ) {
        self.photoID = photoID
        self.algorithm = algorithm
        self.iv = iv
        self.encryptedKey = encryptedKey
        self.authTag = authTag
        self.metadata = metadata
        self.sender = sender
        self.recipient = recipient
        self.signature = signature
    }

    static let signingDomain = Array("LOCAFOTO-BUNDLE-SIG-V2".utf8) + [0]

    /// The exact bytes the sender signs: a domain string, then each field as a 32-bit big-endian
    /// length followed by its bytes, in a fixed order (protocol/formats.md lists it).
    public func signingInput() -> [UInt8] {
        var out = BundleHeader.signingDomain
        func field(_ b: [UInt8]) {
            let n = UInt32(b.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
            out += b
        }
        func be(_ v: UInt64, _ bytes: Int) -> [UInt8] {
            (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
        }
        field(Array(version.utf8))
        field(sender.bytes)
        field(recipient.bytes)
        field(Array(photoID.utf8))
        field([algorithm.rawValue])
        field(iv)
        field(encryptedKey)
        field(authTag)
        field(be(UInt64(metadata.originalSize), 8))
        field(Array(metadata.format.utf8))
        field(Array((metadata.captureDate ?? "").utf8))
        field(metadata.width.map { be(UInt64($0), 4) } ?? [])
        field(metadata.height.map { be(UInt64($0), 4) } ?? [])
        field(Array((metadata.name ?? "").utf8))
        return out
    }

    /// Checks lengths and limits of every field; run on anything read from outside.
    public func validate() throws {
        guard version == BundleHeader.version else {
            throw FormatError(
                .unsupportedVersion,
                "bundle version \(version) is not supported (this build reads \(BundleHeader.version))")
        }
        guard Self.isCanonicalUUID(photoID) else {
            throw FormatError(.malformed, "bundle photo id is not a lowercase UUID")
        }
        guard iv.count == AEADAlgorithm.nonceLength else { throw FormatError(.malformed, "bundle iv must be 12 bytes") }
        guard authTag.count == AEADAlgorithm.tagLength else {
            throw FormatError(.malformed, "bundle authTag must be 16 bytes")
        }
        guard encryptedKey.count == 32 + SealedBox.overhead else {
            throw FormatError(
                .malformed, "bundle encryptedKey must be \(32 + SealedBox.overhead) bytes (a sealed 32-byte key)")
        }
        guard signature.count == 64 else { throw FormatError(.malformed, "bundle signature must be 64 bytes") }
        try metadata.validate()
    }

    /// Verifies the sender's signature (does not decrypt anything).
    public func verifySignature() throws {
        guard sender.isValidSignature(signature, for: signingInput()) else {
            throw FormatError(
                .badSignature, "the bundle's signature does not verify: it was altered or not made by its sender")
        }
    }

    public static func isCanonicalUUID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                if c != UInt8(ascii: "-") { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)) {
                return false
            }
        }
        return true
    }
}

/// The seed's metadata object, plus the optional original file name.
public struct BundleMetadata: Sendable, Equatable, Codable {
    public var originalSize: Int64
    /// RFC 3339 UTC ("2025-11-15T10:30:00Z"), or nil when unknown.
    public var captureDate: String?
    public var width: Int?
    public var height: Int?
    /// Upper-case format name as in the seed: "JPEG", "PNG", "HEIC", "WEBP", ...
    public var format: String
    /// Original file name (no path); optional. Visible to a relay: senders may omit it.
    public var name: String?

    public init(
        originalSize: Int64, captureDate: String? = nil, width: Int? = nil, height: Int? = nil, format: String,
        name: String? = nil
    ) {
        self.originalSize = originalSize
        self.captureDate = captureDate
        self.width = width
        self.height = height
        self.format = format
        self.name = name
    }

    /// `captureDate` as a date (nil when absent or not a valid RFC 3339 UTC time).
    public var captureDateValue: Date? {
        captureDate.flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    public func validate() throws {
        guard originalSize >= 0, UInt64(originalSize) <= BundleLimits.maxPhotoSize else {
            throw FormatError(
                .tooLarge, "bundle photo size \(originalSize) is outside 0...\(BundleLimits.maxPhotoSize)")
        }
        guard !format.isEmpty, format.utf8.count <= BundleHeader.maxFormatBytes,
            format.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) })
        else { throw FormatError(.malformed, "bundle format must be 1-16 upper-case letters/digits") }
        if let n = name {
            guard n.utf8.count <= BundleHeader.maxNameBytes,
                !n.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "/" })
            else { throw FormatError(.malformed, "bundle file name is too long or contains '/' or control characters") }
        }
        if let d = captureDate {
            guard d.utf8.count == 20, d.hasSuffix("Z"), ISO8601DateFormatter().date(from: d) != nil else {
                throw FormatError(.malformed, "bundle captureDate must look like 2025-11-15T10:30:00Z")
            }
        }
        for v in [width, height] {
            if let v, !(1...1_000_000).contains(v) { throw FormatError(.malformed, "bundle width/height out of range") }
        }
    }
}

public enum BundleLimits {
    /// Largest photo a bundle may carry (the LOCA format's own limit is the same).
    public static let maxPhotoSize: UInt64 = 1 << 32
}
