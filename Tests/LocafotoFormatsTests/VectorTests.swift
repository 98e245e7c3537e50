import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

// Vectors made by scripts/gen-vectors.py with PyNaCl / cryptography / hashlib (never with this
// code): protocol/vectors/fingerprint.json and protocol/vectors/bundle.json.

/// Shared by FingerprintTests, BundleTests and the vector tests of this target.
enum FormatsTestSupport {
    struct BadHex: Error, CustomStringConvertible {
        let text: String
        var description: String { "not hex: \(text.prefix(40))" }
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
        LocafotoTestSupport.outcome(FormatError.self, name: \.code.description, body)
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

@Suite("Protocol vectors (fingerprint.json, bundle.json)")
struct FormatsVectorTests {
    typealias S = FormatsTestSupport
    // The parameterized tests' cases, and what the *FileIsNotEmpty tests count: a file or a key
    // that cannot be read leaves a list empty, and those tests fail.
    static let fingerprints = Vector.entries("fingerprint.json", "vectors")
    static let rejected = Vector.entries("fingerprint.json", "rejected")
    static let bundles = Vector.entries("bundle.json", "vectors")
    static let invalidBundles = Vector.entries("bundle.json", "invalid")

    /// The shared reader (LocafotoTestSupport `Vector`): a field the file does not have, or of
    /// another type, fails the test with the file and the place, not with a wrong value.
    @Test func aMisreadVectorSaysWhere() throws {
        let valid = try Vector.load("lfs.json").valid.elements
        let absent = #expect(throws: VectorError.self) { try valid[0].keyNam.string }
        #expect(absent?.description == "vector lfs.json: valid[0].keyNam: absent")
        let mistyped = #expect(throws: VectorError.self) { try valid[1].key.int }
        #expect(
            mistyped?.description.hasPrefix(
                "vector lfs.json: valid[1].key: expected an integer that fits Int, found \"") == true)
        #expect(throws: VectorError.self) { try Vector(path: "x", json: .string("0g")).bytes }
        #expect(try Vector(path: "x", json: .string("00ff")).bytes == [0, 255])
    }

    // MARK: fingerprint.json

    @Test func fingerprintFileIsNotEmpty() throws {
        #expect(Self.fingerprints.count >= 10)
        #expect(Self.rejected.count >= 20)
        #expect(try Vector.load("fingerprint.json").alphabet.string == "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    }

    @Test(arguments: fingerprints)
    func fingerprintVector(_ v: Vector) throws {
        let pk = try SigningPublicKey(bytes: try v.publicKey.bytes)
        if let seed = v.seed.ifPresent {
            #expect(try S.key(seedHex: seed.string).publicKey == pk, "Ed25519 seed → public key")
        }
        #expect(SHA256.hash(pk.bytes) == (try v.sha256.bytes))
        let fp = Fingerprint(publicKey: pk)
        #expect(fp.digest == (try v.digest.string))
        #expect(fp.description == (try v.fingerprint.string))
        #expect(fp.short == (try v.short.string))
        for spelling in try v.accepted.strings {
            #expect(try Fingerprint(parsing: spelling) == fp, "accepted spelling '\(spelling)'")
        }
    }

    @Test(arguments: rejected)
    func fingerprintRejected(_ v: Vector) throws {
        let (input, reason) = (try v.input.string, try v.reason.string)
        #expect(S.outcome { _ = try Fingerprint(parsing: input) } == "malformed", "\(reason): '\(input)'")
    }

    /// `matches(prefix:)` is the comparison (spaces and dashes dropped, ASCII a-z only folded);
    /// the 4-character minimum is applied where a prefix names a peer, by `PeerResolver`, which
    /// PeerResolverTests runs on these same vectors. So a prefix too short to name a peer is
    /// checked here only when it must match.
    @Test func fingerprintPrefixes() throws {
        let prefixes = try Vector.load("fingerprint.json").prefixes.elements
        #expect(prefixes.count >= 20)
        for p in prefixes {
            let fp = try Fingerprint(parsing: p.fingerprint.string)
            let (prefix, matches) = (try p.prefix.string, try p.matches.bool)
            if matches || Fingerprint.normalise(prefix).count >= 4 {
                #expect(fp.matches(prefix: prefix) == matches, "prefix '\(prefix)'")
            }
        }
    }

    /// Luhn mod 32 table: a fingerprint made of four copies of `group + check` parses; any other
    /// check character does not.
    @Test func luhnCheckCharacters() throws {
        let file = try Vector.load("fingerprint.json")
        for l in try file.luhn.elements {
            let (group, check) = (try l.group.string, try l.check.string)
            let good = Array(repeating: group + check, count: 4).joined(separator: "-")
            #expect(try Fingerprint(parsing: good).digest == String(repeating: group, count: 4))
            for other in try file.alphabet.string where String(other) != check {
                let bad = Array(repeating: group + String(other), count: 4).joined(separator: "-")
                #expect(throws: FormatError.self) { try Fingerprint(parsing: bad) }
            }
        }
    }

    // MARK: bundle.json

    @Test func bundleFileIsNotEmpty() throws {
        #expect(Self.bundles.count >= 3)
        #expect(Self.invalidBundles.count >= 30)
        #expect(try Vector.load("bundle.json").signingDomain.bytes == Array("LOCAFOTO-BUNDLE-SIG-V2".utf8) + [0])
    }

    @Test(arguments: bundles)
    func bundleVectorOpens(_ v: Vector) throws {
        let sender = try S.key(seedHex: v.senderSeed.string)
        let recipient = try S.key(seedHex: v.recipientSeed.string)
        #expect(sender.publicKey.bytes == (try v.senderPublicKey.bytes))
        #expect(recipient.publicKey.bytes == (try v.recipientPublicKey.bytes))
        #expect(try recipient.publicKey.agreementKey().bytes == (try v.recipientX25519PublicKey.bytes))
        #expect(Fingerprint(publicKey: sender.publicKey).description == (try v.senderFingerprint.string))

        // Decoding: every field as the generator wrote it.
        let file = Data(try v.file.string.utf8)
        let (header, payload) = try LocaphotoFile.decode(file)
        #expect(header.version == "2.0")
        #expect(header.photoID == (try v.photoID.string))
        #expect(header.algorithm.name == (try v.algorithm.string))
        #expect(header.iv == (try v.iv.bytes))
        #expect(header.encryptedKey == (try v.encryptedKey.bytes))
        #expect(header.authTag == (try v.authTag.bytes))
        #expect(header.metadata == (try v.metadata.decoded(as: BundleMetadata.self)))
        #expect(header.sender == sender.publicKey)
        #expect(header.recipient == recipient.publicKey)
        #expect(header.signature == (try v.signature.bytes))
        #expect(payload == (try v.ciphertext.bytes))

        // Our signing input is byte for byte the documented one, and the signature is
        // deterministic Ed25519: re-signing with the sender's seed gives the vector's signature.
        #expect(Hex.encode(header.signingInput()) == (try v.signingInput.string))
        #expect(sender.signature(for: header.signingInput()) == (try v.signature.bytes))

        // The sealed box made by PyNaCl (from its definition) opens with our key.
        let key = try SealedBox.open(try v.encryptedKey.bytes, with: recipient.agreementKey())
        #expect(key.unsafeCopy() == (try v.photoKey.bytes))

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
            let (_, plain) = try S.open(file, as: recipient)
            #expect(plain == (try v.plaintext.bytes))
        }

        // Another node cannot open it.
        #expect(S.outcome { _ = try S.open(file, as: S.key(seed: 0xCC)) } == "wrongRecipient")
    }

    /// Our encoder writes what the generator wrote (modulo JSON formatting): decode the vector,
    /// encode it with LocaphotoFile, decode again.
    @Test(arguments: bundles)
    func bundleVectorReencodes(_ v: Vector) throws {
        let file = Data(try v.file.string.utf8)
        let (header, payload) = try LocaphotoFile.decode(file)
        let again = try LocaphotoFile.encode(header, encryptedData: payload)
        let (header2, payload2) = try LocaphotoFile.decode(again)
        #expect(header2 == header)
        #expect(payload2 == payload)
        // Same JSON values as the vector (key order and spacing aside); optional metadata that
        // the vector spells as null or omits is omitted.
        let a = try #require(try JSONSerialization.jsonObject(with: again) as? [String: Any])
        let b = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        #expect((a["photo"] as? NSDictionary) == (b["photo"] as? NSDictionary))
        #expect((a["signature"] as? String) == (b["signature"] as? String))
        #expect(((a["sender"] as? [String: Any])?["fingerprint"] as? String) == (try v.senderFingerprint.string))
        let metaA = (a["metadata"] as? [String: Any] ?? [:]).filter { !($0.value is NSNull) }
        let metaB = (b["metadata"] as? [String: Any] ?? [:]).filter { !($0.value is NSNull) }
        #expect(NSDictionary(dictionary: metaA) == NSDictionary(dictionary: metaB))
    }

    @Test(arguments: invalidBundles)
    func bundleInvalidVector(_ v: Vector) throws {
        let recipient = try S.key(seedHex: v.recipientSeed.string)
        let file = Data(try v.file.string.utf8)
        #expect(S.outcome { _ = try S.open(file, as: recipient) } == (try v.error.string))
    }
}
