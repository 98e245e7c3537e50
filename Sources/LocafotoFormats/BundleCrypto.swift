import LocafotoCrypto
import LocafotoErrors

/// Sender side: encrypts one photo for one recipient, piece by piece, and signs the result.
/// The photo key is fresh for every bundle (never a vault key) and is sealed to the recipient.
public final class BundleSealer {
    public let photoID: String
    public let iv: [UInt8]
    public let encryptedKey: [UInt8]
    private let stream: ChaChaPolyStream
    private let sender: SigningKey
    private let recipient: SigningPublicKey

    public convenience init(photoID: String, sender: SigningKey, recipient: SigningPublicKey) throws {
        let key = SecretBytes(randomCount: 32)
        let iv = SecureRandom.bytes(AEADAlgorithm.nonceLength)
        try self.init(
            photoID: photoID, sender: sender, recipient: recipient, key: key, iv: iv,
            encryptedKey: SealedBox.seal(key, to: try recipient.agreementKey()))
    }

    /// Seals again with a photo key, iv and sealed key chosen earlier: a resumed transfer must
    /// produce the same ciphertext as the interrupted one, so the receiver's spooled prefix stays valid.
    public init(
        photoID: String, sender: SigningKey, recipient: SigningPublicKey, key: SecretBytes, iv: [UInt8],
        encryptedKey: [UInt8]
    ) throws {
        guard key.count == 32, iv.count == AEADAlgorithm.nonceLength, encryptedKey.count == SealedBox.overhead + 32
        else {
            throw FormatError(.malformed, "a photo key is 32 bytes, an iv 12 and a sealed key 80")
        }
        self.photoID = photoID
        self.iv = iv
        self.encryptedKey = encryptedKey
        stream = try ChaChaPolyStream(.encrypt, key: key, nonce: iv)
        self.sender = sender
        self.recipient = recipient
    }

    /// Encrypts `buffer` in place.
    public func encrypt(_ buffer: UnsafeMutableRawBufferPointer) {
        stream.process(buffer)
    }

    /// Finishes the ciphertext and signs the header. `metadata.originalSize` must equal the bytes processed.
    public func finish(metadata: BundleMetadata) throws -> BundleHeader {
        guard UInt64(metadata.originalSize) == stream.processedLength else {
            throw FormatError(
                .sizeMismatch,
                "photo changed while it was being sent: \(stream.processedLength) bytes read, \(metadata.originalSize) announced"
            )
        }
        var header = BundleHeader(
            photoID: photoID, algorithm: .chacha20poly1305, iv: iv, encryptedKey: encryptedKey,
            authTag: stream.finalize(), metadata: metadata, sender: sender.publicKey, recipient: recipient,
            signature: [])
        header.signature = sender.signature(for: header.signingInput())
        return header
    }
}

/// Recipient side: opens the sealed photo key, decrypts piece by piece, then verifies the
/// signature and the AEAD tag. Nothing decrypted may be kept unless `finish` succeeds.
public final class BundleOpener {
    public let photoKey: SecretBytes
    private let stream: ChaChaPolyStream?
    private let oneShotAlgorithm: AEADAlgorithm

    /// - Parameters: `algorithm`, `iv`, `encryptedKey` from the bundle; `recipient`: this node's identity.
    public init(
        algorithm: AEADAlgorithm, iv: [UInt8], encryptedKey: [UInt8], recipientPublicKey: SigningPublicKey,
        recipient: SigningKey
    ) throws {
        guard recipientPublicKey == recipient.publicKey else {
            throw FormatError(.wrongRecipient, "this bundle is addressed to another node")
        }
        guard iv.count == AEADAlgorithm.nonceLength else { throw FormatError(.malformed, "bundle iv must be 12 bytes") }
        do {
            photoKey = try SealedBox.open(encryptedKey, with: try recipient.agreementKey())
        } catch {
            throw FormatError(
                .wrongRecipient, "the bundle's photo key is not sealed to this node's key, or was altered")
        }
        guard photoKey.count == 32 else { throw FormatError(.malformed, "the bundle's photo key is not 32 bytes") }
        oneShotAlgorithm = algorithm
        stream = algorithm == .chacha20poly1305 ? try ChaChaPolyStream(.decrypt, key: photoKey, nonce: iv) : nil
    }

    /// True when pieces can be decrypted as they arrive (ChaCha20-Poly1305). AES-GCM bundles
    /// must be opened whole with `AEAD.open` and `photoKey`.
    public var isStreaming: Bool { stream != nil }

    /// Decrypts `buffer` in place (unauthenticated until `finish`).
    public func decrypt(_ buffer: UnsafeMutableRawBufferPointer) {
        stream!.process(buffer)
    }

    /// Verifies the signature over the complete header, then the AEAD tag.
    public func finish(header: BundleHeader) throws -> SecretBytes {
        try header.validate()
        try header.verifySignature()
        if let s = stream {
            do { try s.verify(tag: header.authTag) } catch {
                throw FormatError(
                    .tagMismatch, "the photo data does not match its authentication tag: it was altered in transit")
            }
        }
        return photoKey
    }
}
