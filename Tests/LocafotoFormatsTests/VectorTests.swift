import Foundation
import LocafotoCrypto
import LocafotoFormats
import Testing
import LocafotoTestSupport

// Vectors made by scripts/gen-vectors.py with PyNaCl / cryptography / hashlib (never with this
// code): protocol/vectors/fingerprint.json and protocol/vectors/bundle.json.

/// Shared by FingerprintTests, BundleTests and the vector tests of this target.
enum FormatsTestSupport {
    struct BadHex: Error, CustomStringConvertible {
        let text: String
        var description: String { "not hex: \(text.prefix(40))" }
    }

    static func vectors<T: Decodable>(_ type: T.Type, _ file: String) throws -> T {
        try Checkout.vectors(type, file)
    }

    static func hex(_ s: String) throws -> [UInt8] {
        guard let b = Hex.decode(s) else { throw BadHex(text: s) }
        return b
    }

    static func key(seedHex: String) throws -> SigningKey {
        try SigningKey(seed: SecretBytes(copying: try hex(seedHex)))
    }

    static func key(seed byte: UInt8) -> SigningKey {
        try! SigningKey(seed: SecretBytes(copying: [UInt8](repeating: byte, count: 32)))
    }

    /// The FormatError code name thrown by `body` ("badSignature", ...), "ok" when nothing is
    /// thrown, or a description of any other error type (which is always a test failure).
    static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "ok"
        } catch let e as FormatError {
            return e.code.description
        } catch {
            return "unexpected \(type(of: error)): \(error)"
        }
    }

    /// What a recipient does with a `.locaphoto` file: decode (size, JSON, fields, signature),
    /// open the sealed key, decrypt, verify the tag. Returns the header and the plaintext.
    static func open(_ file: Data, as recipient: SigningKey) throws -> (BundleHeader, [UInt8]) {
        let (header, payload) = try LocaphotoFile.decode(file)
        let opener = try BundleOpener(
            algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
            recipientPublicKey: header.recipient, recipient: recipient)
        guard var data = payload else { throw FormatError(.truncated, "no payload") }
        if opener.isStreaming {
            data.withUnsafeMutableBytes { opener.decrypt($0) }
            _ = try opener.finish(header: header)
            return (header, data)
        }
        _ = try opener.finish(header: header)
        do {
            let plain = try AEAD.open(
                header.algorithm, key: opener.photoKey, nonce: header.iv, ciphertext: data, tag: header.authTag)
            return (header, plain)
        } catch let e as CryptoError where e.code == .authenticationFailed {
            throw FormatError(.tagMismatch, "tag")
        }
    }
}

struct FingerprintVectorFile: Decodable, Sendable {
    struct Vector: Decodable, Sendable {
        let name: String
        let seed: String?
        let publicKey: String
        let sha256: String
        let digest: String
        let fingerprint: String
        let short: String
        let accepted: [String]
    }
    struct Rejected: Decodable, Sendable {
        let input: String
        let reason: String
    }
    struct Prefix: Decodable, Sendable {
        let fingerprint: String
        let prefix: String
        let matches: Bool
    }
    struct Luhn: Decodable, Sendable {
        let group: String
        let check: String
    }
    let alphabet: String
    let vectors: [Vector]
    let rejected: [Rejected]
    let prefixes: [Prefix]
    let luhn: [Luhn]
}

struct BundleVectorFile: Decodable, Sendable {
    struct Vector: Decodable, Sendable {
        let name: String
        let senderSeed: String
        let senderPublicKey: String
        let senderFingerprint: String
        let recipientSeed: String
        let recipientPublicKey: String
        let recipientX25519PublicKey: String
        let photoID: String
        let algorithm: String
        let photoKey: String
        let iv: String
        let encryptedKey: String
        let authTag: String
        let metadata: BundleMetadata
        let plaintext: String
        let ciphertext: String
        let signingInput: String
        let signature: String
        let file: String
    }
    struct Invalid: Decodable, Sendable {
        let name: String
        let error: String
        let recipientSeed: String
        let file: String
    }
    let signingDomain: String
    let vectors: [Vector]
    let invalid: [Invalid]
}

@Suite("Protocol vectors (fingerprint.json, bundle.json)")
struct FormatsVectorTests {
    typealias S = FormatsTestSupport

    // Loaded once for the parameterized tests; a missing or unreadable file makes them empty,
    // and the *FileIsNotEmpty tests below then fail with the reason (instead of a crash).
    static let fingerprints =
        (try? S.vectors(FingerprintVectorFile.self, "fingerprint.json"))
        ?? FingerprintVectorFile(alphabet: "", vectors: [], rejected: [], prefixes: [], luhn: [])
    static let bundles =
        (try? S.vectors(BundleVectorFile.self, "bundle.json"))
        ?? BundleVectorFile(signingDomain: "", vectors: [], invalid: [])

    // MARK: fingerprint.json

    @Test func fingerprintFileIsNotEmpty() throws {
        _ = try S.vectors(FingerprintVectorFile.self, "fingerprint.json")
        #expect(Self.fingerprints.vectors.count >= 10)
        #expect(Self.fingerprints.rejected.count >= 20)
        #expect(Self.fingerprints.alphabet == "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    }

    @Test(arguments: fingerprints.vectors.map(\.name))
    func fingerprintVector(_ name: String) throws {
        let v = try #require(Self.fingerprints.vectors.first { $0.name == name })
        let pk = try SigningPublicKey(bytes: try S.hex(v.publicKey))
        if let seed = v.seed {
            #expect(try S.key(seedHex: seed).publicKey == pk, "Ed25519 seed → public key")
        }
        #expect(SHA256.hash(pk.bytes) == (try S.hex(v.sha256)))
        let fp = Fingerprint(publicKey: pk)
        #expect(fp.digest == v.digest)
        #expect(fp.description == v.fingerprint)
        #expect(fp.short == v.short)
        for spelling in v.accepted {
            #expect(try Fingerprint(parsing: spelling) == fp, "accepted spelling '\(spelling)'")
        }
    }

    @Test(arguments: fingerprints.rejected.map(\.input))
    func fingerprintRejected(_ input: String) throws {
        let reason = Self.fingerprints.rejected.first { $0.input == input }?.reason ?? ""
        #expect(S.outcome { _ = try Fingerprint(parsing: input) } == "malformed", "\(reason): '\(input)'")
    }

    /// `matches(prefix:)` is the comparison (spaces and dashes dropped, ASCII a-z only folded);
    /// the 4-character minimum is applied where a prefix names a peer, by `PeerResolver`, which
    /// PeerResolverTests runs on these same vectors. So a prefix too short to name a peer is
    /// checked here only when it must match.
    @Test func fingerprintPrefixes() throws {
        #expect(Self.fingerprints.prefixes.count >= 20)
        for p in Self.fingerprints.prefixes {
            let fp = try Fingerprint(parsing: p.fingerprint)
            if p.matches || Fingerprint.normalise(p.prefix).count >= 4 {
                #expect(fp.matches(prefix: p.prefix) == p.matches, "prefix '\(p.prefix)'")
            }
        }
    }

    /// Luhn mod 32 table: a fingerprint made of four copies of `group + check` parses; any other
    /// check character does not.
    @Test func luhnCheckCharacters() throws {
        for l in Self.fingerprints.luhn {
            let good = Array(repeating: l.group + l.check, count: 4).joined(separator: "-")
            #expect(try Fingerprint(parsing: good).digest == String(repeating: l.group, count: 4))
            for other in Self.fingerprints.alphabet where String(other) != l.check {
                let bad = Array(repeating: l.group + String(other), count: 4).joined(separator: "-")
                #expect(throws: FormatError.self) { try Fingerprint(parsing: bad) }
            }
        }
    }

    // MARK: bundle.json

    @Test func bundleFileIsNotEmpty() throws {
        _ = try S.vectors(BundleVectorFile.self, "bundle.json")
        #expect(Self.bundles.vectors.count >= 3)
        #expect(Self.bundles.invalid.count >= 30)
        #expect(try S.hex(Self.bundles.signingDomain) == Array("LOCAFOTO-BUNDLE-SIG-V2".utf8) + [0])
    }

    @Test(arguments: bundles.vectors.map(\.name))
    func bundleVectorOpens(_ name: String) throws {
        let v = try #require(Self.bundles.vectors.first { $0.name == name })
        let sender = try S.key(seedHex: v.senderSeed)
        let recipient = try S.key(seedHex: v.recipientSeed)
        #expect(sender.publicKey.bytes == (try S.hex(v.senderPublicKey)))
        #expect(recipient.publicKey.bytes == (try S.hex(v.recipientPublicKey)))
        #expect(try recipient.publicKey.agreementKey().bytes == (try S.hex(v.recipientX25519PublicKey)))
        #expect(Fingerprint(publicKey: sender.publicKey).description == v.senderFingerprint)

        // Decoding: every field as the generator wrote it.
        let (header, payload) = try LocaphotoFile.decode(Data(v.file.utf8))
        #expect(header.version == "2.0")
        #expect(header.photoID == v.photoID)
        #expect(header.algorithm.name == v.algorithm)
        #expect(header.iv == (try S.hex(v.iv)))
        #expect(header.encryptedKey == (try S.hex(v.encryptedKey)))
        #expect(header.authTag == (try S.hex(v.authTag)))
        #expect(header.metadata == v.metadata)
        #expect(header.sender == sender.publicKey)
        #expect(header.recipient == recipient.publicKey)
        #expect(header.signature == (try S.hex(v.signature)))
        #expect(payload == (try S.hex(v.ciphertext)))

        // Our signing input is byte for byte the documented one, and the signature is
        // deterministic Ed25519: re-signing with the sender's seed gives the vector's signature.
        #expect(Hex.encode(header.signingInput()) == v.signingInput)
        #expect(sender.signature(for: header.signingInput()) == (try S.hex(v.signature)))

        // The sealed box made by PyNaCl (from its definition) opens with our key.
        let key = try SealedBox.open(try S.hex(v.encryptedKey), with: recipient.agreementKey())
        #expect(key.unsafeCopy() == (try S.hex(v.photoKey)))

        // The whole pipeline yields the plaintext.
        if header.algorithm == .aes256gcm && !AEADAlgorithm.aes256gcm.isAvailable {
            // No AES-NI: everything but the AES decryption itself is checked above; the opener
            // still verifies the signature.
            let opener = try BundleOpener(
                algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
                recipientPublicKey: header.recipient, recipient: recipient)
            #expect(!opener.isStreaming)
            _ = try opener.finish(header: header)
        } else {
            let (_, plain) = try S.open(Data(v.file.utf8), as: recipient)
            #expect(plain == (try S.hex(v.plaintext)))
        }

        // Another node cannot open it.
        #expect(S.outcome { _ = try S.open(Data(v.file.utf8), as: S.key(seed: 0xCC)) } == "wrongRecipient")
    }

    /// Our encoder writes what the generator wrote (modulo JSON formatting): decode the vector,
    /// encode it with LocaphotoFile, decode again.
    @Test(arguments: bundles.vectors.map(\.name))
    func bundleVectorReencodes(_ name: String) throws {
        let v = try #require(Self.bundles.vectors.first { $0.name == name })
        let (header, payload) = try LocaphotoFile.decode(Data(v.file.utf8))
        let again = try LocaphotoFile.encode(header, encryptedData: payload)
        let (header2, payload2) = try LocaphotoFile.decode(again)
        #expect(header2 == header)
        #expect(payload2 == payload)
        // Same JSON values as the vector (key order and spacing aside); optional metadata that
        // the vector spells as null or omits is omitted.
        let a = try #require(try JSONSerialization.jsonObject(with: again) as? [String: Any])
        let b = try #require(try JSONSerialization.jsonObject(with: Data(v.file.utf8)) as? [String: Any])
        #expect((a["photo"] as? NSDictionary) == (b["photo"] as? NSDictionary))
        #expect((a["signature"] as? String) == (b["signature"] as? String))
        #expect(((a["sender"] as? [String: Any])?["fingerprint"] as? String) == v.senderFingerprint)
        let metaA = (a["metadata"] as? [String: Any] ?? [:]).filter { !($0.value is NSNull) }
        let metaB = (b["metadata"] as? [String: Any] ?? [:]).filter { !($0.value is NSNull) }
        #expect(NSDictionary(dictionary: metaA) == NSDictionary(dictionary: metaB))
    }

    @Test(arguments: bundles.invalid.map(\.name))
    func bundleInvalidVector(_ name: String) throws {
        let v = try #require(Self.bundles.invalid.first { $0.name == name })
        let recipient = try S.key(seedHex: v.recipientSeed)
        #expect(S.outcome { _ = try S.open(Data(v.file.utf8), as: recipient) } == v.error, "\(v.name)")
    }
}
