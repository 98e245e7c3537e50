import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("Bundles (.locaphoto)")
struct BundleTests {
    typealias S = FormatsTestSupport

    static let alice = S.key(seed: 0xA1)
    static let bob = S.key(seed: 0xB0)
    static let carol = S.key(seed: 0xC0)
    static let photoID = "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5b"

    /// Reproducible "random" chunkings and photo bytes.
    typealias RNG = SplitMix64

    static func photo(_ n: Int, seed: UInt64 = 7) -> [UInt8] {
        var rng = RNG(seed)
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func metadata(_ size: Int, name: String? = "IMG_0001.jpg") -> BundleMetadata {
        BundleMetadata(
            originalSize: Int64(size), captureDate: "2025-11-15T10:30:00Z", width: 4032, height: 3024, format: "JPEG",
            name: name)
    }

    /// Piece sizes summing to `total`: empty pieces, odd sizes, whole ChaCha20 blocks.
    static func chunks(_ total: Int, _ rng: inout RNG) -> [Int] {
        var out: [Int] = []
        var left = total
        while left > 0 {
            let n: Int
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: n = 0
            case 1: n = Int.random(in: 1...3, using: &rng)
            case 2: n = 64 * Int.random(in: 1...4, using: &rng)
            case 3: n = Int.random(in: 1...200, using: &rng)
            default: n = Int.random(in: 1...5000, using: &rng)
            }
            out.append(min(n, left))
            left -= min(n, left)
        }
        return out.isEmpty ? [0] : out
    }

    static func process(_ bytes: inout [UInt8], in pieces: [Int], _ body: (UnsafeMutableRawBufferPointer) -> Void) {
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            for n in pieces {
                body(UnsafeMutableRawBufferPointer(rebasing: raw[offset..<offset + n]))
                offset += n
            }
            precondition(offset == raw.count)
        }
    }

    /// A bundle from Alice to `recipient` (Bob by default), encrypted in `pieces`.
    static func seal(
        _ plain: [UInt8], pieces: [Int]? = nil, metadata: BundleMetadata? = nil, sender: SigningKey = alice,
        recipient: SigningPublicKey = bob.publicKey
    ) throws -> (BundleHeader, [UInt8]) {
        let sealer = try BundleSealer(photoID: photoID, sender: sender, recipient: recipient)
        var data = plain
        process(&data, in: pieces ?? [plain.count]) { sealer.encrypt($0) }
        let header = try sealer.finish(metadata: metadata ?? Self.metadata(plain.count))
        return (header, data)
    }

    static func file(_ plain: [UInt8] = photo(100)) throws -> (Data, BundleHeader, [UInt8]) {
        let (header, data) = try seal(plain)
        return (try LocaphotoFile.encode(header, encryptedData: data), header, data)
    }

    static func resign(_ h: BundleHeader, by key: SigningKey = alice) -> BundleHeader {
        var h = h
        h.signature = key.signature(for: h.signingInput())
        return h
    }

    static func b64(_ b: [UInt8]) -> String { Data(b).base64EncodedString() }

    static func flip(_ b: [UInt8], at i: Int = 0, bit: UInt8 = 1) -> [UInt8] {
        var b = b
        b[i] ^= bit
        return b
    }

    /// Rewrites one field of a `.locaphoto` JSON document (nil removes it).
    static func editing(_ file: Data, _ path: [String], _ value: Any?) throws -> Data {
        func set(_ obj: [String: Any], _ path: ArraySlice<String>) -> [String: Any] {
            var obj = obj
            if path.count == 1 {
                obj[path.first!] = value
            } else {
                obj[path.first!] = set(obj[path.first!] as? [String: Any] ?? [:], path.dropFirst())
            }
            return obj
        }
        let obj = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        return try JSONSerialization.data(withJSONObject: set(obj, path[...]))
    }

    static func field(_ file: Data, _ path: [String]) throws -> Any? {
        var obj: Any? = try JSONSerialization.jsonObject(with: file)
        for p in path { obj = (obj as? [String: Any])?[p] }
        return obj
    }

    // MARK: round trips

    @Test(arguments: [0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 1000, 4096, 65_024, 70_001])
    func sealOpenInRandomPieces(size: Int) throws {
        for seed in UInt64(1)...4 {
            var rng = RNG(seed &* 1000 &+ UInt64(size))
            let plain = Self.photo(size, seed: seed)
            let (header, ciphertext) = try Self.seal(plain, pieces: Self.chunks(size, &rng))
            try header.validate()
            try header.verifySignature()
            #expect(header.sender == Self.alice.publicKey)
            #expect(header.recipient == Self.bob.publicKey)
            #expect(header.algorithm == .chacha20poly1305)
            #expect(header.iv.count == 12 && header.authTag.count == 16 && header.encryptedKey.count == 80)
            #expect(ciphertext.count == size)
            if size >= 16 { #expect(ciphertext != plain) }

            let opener = try BundleOpener(
                algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
                recipientPublicKey: header.recipient, recipient: Self.bob)
            #expect(opener.isStreaming)
            // The streamed ciphertext and tag are exactly the one-shot RFC 8439 AEAD.
            let oneShot = try AEAD.seal(.chacha20poly1305, key: opener.photoKey, nonce: header.iv, plaintext: plain)
            #expect(oneShot.ciphertext == ciphertext)
            #expect(oneShot.tag == header.authTag)

            var data = ciphertext
            Self.process(&data, in: Self.chunks(size, &rng)) { opener.decrypt($0) }
            let key = try opener.finish(header: header)
            #expect(data == plain)
            #expect(key.unsafeCopy() == opener.photoKey.unsafeCopy())
        }
    }

    @Test func everyBundleHasAFreshKeyAndIV() throws {
        let plain = Self.photo(64)
        let (a, ca) = try Self.seal(plain)
        let (b, cb) = try Self.seal(plain)
        #expect(a.iv != b.iv)
        #expect(a.encryptedKey != b.encryptedKey)
        #expect(ca != cb)
        #expect(a.signature != b.signature)
    }

    @Test func sealerRefusesASizeThatDiffersFromTheBytesProcessed() throws {
        for announced in [99, 101, 0] {
            let sealer = try BundleSealer(photoID: Self.photoID, sender: Self.alice, recipient: Self.bob.publicKey)
            var data = Self.photo(100)
            data.withUnsafeMutableBytes { sealer.encrypt($0) }
            #expect(S.outcome { _ = try sealer.finish(metadata: Self.metadata(announced)) } == "sizeMismatch")
        }
    }

    @Test func fileRoundTrip() throws {
        for size in [0, 1, 100, 3000] {
            let plain = Self.photo(size)
            let (header, data) = try Self.seal(
                plain, metadata: Self.metadata(size, name: "Plage d'été 🌊 \"1\" \\ x.jpg"))
            let file = try LocaphotoFile.encode(header, encryptedData: data)
            let (h2, d2) = try LocaphotoFile.decode(file)
            #expect(h2 == header)
            #expect(d2 == data)
            let (_, opened) = try S.open(file, as: Self.bob)
            #expect(opened == plain)
        }
    }

    @Test func optionalMetadataRoundTrips() throws {
        let meta = BundleMetadata(originalSize: 5, format: "PNG")
        let (header, data) = try Self.seal(Self.photo(5), metadata: meta)
        let file = try LocaphotoFile.encode(header, encryptedData: data)
        let (h2, _) = try LocaphotoFile.decode(file)
        #expect(h2.metadata == meta)
        #expect(h2.metadata.name == nil && h2.metadata.captureDate == nil && h2.metadata.width == nil)
    }

    @Test func headerOnlyDocument() throws {
        let (header, _) = try Self.seal(Self.photo(10))
        let file = try LocaphotoFile.encode(header, encryptedData: nil)
        #expect(try Self.field(file, ["photo", "encryptedData"]) == nil)
        let (h2, payload) = try LocaphotoFile.decode(file, requireData: false)
        #expect(h2 == header)
        #expect(payload == nil)
        #expect(S.outcome { _ = try LocaphotoFile.decode(file) } == "truncated")
    }

    /// The JSON has the documented shape, base64 with padding, and the sender's fingerprint.
    @Test func fileShape() throws {
        let (file, header, data) = try Self.file(Self.photo(100))
        let obj = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        #expect(Set(obj.keys) == ["version", "photo", "metadata", "sender", "recipient", "signature"])
        #expect(obj["version"] as? String == "2.0")
        let photo = try #require(obj["photo"] as? [String: Any])
        #expect(Set(photo.keys) == ["id", "algorithm", "encryptedData", "encryptedKey", "iv", "authTag"])
        #expect(photo["id"] as? String == Self.photoID)
        #expect(photo["algorithm"] as? String == "chacha20-poly1305")
        #expect(photo["encryptedData"] as? String == Self.b64(data))
        #expect(photo["encryptedKey"] as? String == Self.b64(header.encryptedKey))
        #expect(photo["iv"] as? String == Self.b64(header.iv))
        #expect(photo["authTag"] as? String == Self.b64(header.authTag))
        #expect((photo["authTag"] as? String)?.hasSuffix("==") == true)  // padded
        let sender = try #require(obj["sender"] as? [String: Any])
        #expect(sender["publicKey"] as? String == Self.b64(Self.alice.publicKey.bytes))
        #expect(sender["fingerprint"] as? String == Fingerprint(publicKey: Self.alice.publicKey).description)
        let recipient = try #require(obj["recipient"] as? [String: Any])
        #expect(Set(recipient.keys) == ["publicKey"])
        #expect(recipient["publicKey"] as? String == Self.b64(Self.bob.publicKey.bytes))
        let meta = try #require(obj["metadata"] as? [String: Any])
        #expect((meta["originalSize"] as? NSNumber)?.intValue == 100)
        #expect(meta["format"] as? String == "JPEG")
        #expect(meta["captureDate"] as? String == "2025-11-15T10:30:00Z")
        #expect(obj["signature"] as? String == Self.b64(header.signature))
    }

    /// The signing input follows the documented layout field by field.
    @Test func signingInputLayout() throws {
        let (header, _) = try Self.seal(Self.photo(300), metadata: Self.metadata(300))
        var expected = Array("LOCAFOTO-BUNDLE-SIG-V2".utf8) + [0]
        func field(_ b: [UInt8]) {
            expected +=
                [UInt8(b.count >> 24), UInt8(b.count >> 16 & 0xFF), UInt8(b.count >> 8 & 0xFF), UInt8(b.count & 0xFF)]
                + b
        }
        field(Array("2.0".utf8))
        field(Self.alice.publicKey.bytes)
        field(Self.bob.publicKey.bytes)
        field(Array(Self.photoID.utf8))
        field([0x02])
        field(header.iv)
        field(header.encryptedKey)
        field(header.authTag)
        field([0, 0, 0, 0, 0, 0, 0x01, 0x2C])
        field(Array("JPEG".utf8))
        field(Array("2025-11-15T10:30:00Z".utf8))
        field([0, 0, 0x0F, 0xC0])
        field([0, 0, 0x0B, 0xD0])
        field(Array("IMG_0001.jpg".utf8))
        #expect(header.signingInput() == expected)

        var bare = header
        bare.metadata = BundleMetadata(originalSize: 300, format: "JPEG")
        let input = bare.signingInput()
        // The four optional fields are empty: four zero lengths at the end.
        #expect(Array(input.suffix(16)) == [UInt8](repeating: 0, count: 16))
    }

    // MARK: tampering

    struct Tamper: CustomTestStringConvertible, Sendable {
        let name: String
        let path: [String]
        let value: @Sendable (BundleHeader, [UInt8]) -> Any?
        let expected: String
        var testDescription: String { name }
    }

    static let tampers: [Tamper] = [
        Tamper(name: "iv", path: ["photo", "iv"], value: { h, _ in b64(flip(h.iv)) }, expected: "badSignature"),
        Tamper(
            name: "encryptedKey", path: ["photo", "encryptedKey"], value: { h, _ in b64(flip(h.encryptedKey, at: 40)) },
            expected: "badSignature"),
        Tamper(
            name: "authTag", path: ["photo", "authTag"], value: { h, _ in b64(flip(h.authTag, at: 15, bit: 0x80)) },
            expected: "badSignature"),
        Tamper(
            name: "signature", path: ["signature"], value: { h, _ in b64(flip(h.signature, at: 10)) },
            expected: "badSignature"),
        Tamper(
            name: "signature zero", path: ["signature"], value: { _, _ in b64([UInt8](repeating: 0, count: 64)) },
            expected: "badSignature"),
        Tamper(
            name: "photo id", path: ["photo", "id"], value: { _, _ in "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5c" },
            expected: "badSignature"),
        Tamper(
            name: "algorithm aes-256-gcm", path: ["photo", "algorithm"], value: { _, _ in "aes-256-gcm" },
            expected: "badSignature"),
        Tamper(
            name: "metadata.name", path: ["metadata", "name"], value: { _, _ in "IMG_0002.jpg" },
            expected: "badSignature"),
        Tamper(
            name: "metadata.name removed", path: ["metadata", "name"], value: { _, _ in nil }, expected: "badSignature"),
        Tamper(
            name: "metadata.originalSize", path: ["metadata", "originalSize"], value: { _, d in d.count + 1 },
            expected: "badSignature"),
        Tamper(
            name: "metadata.format", path: ["metadata", "format"], value: { _, _ in "PNG" }, expected: "badSignature"),
        Tamper(
            name: "metadata.captureDate", path: ["metadata", "captureDate"], value: { _, _ in "2025-11-15T10:30:01Z" },
            expected: "badSignature"),
        Tamper(name: "metadata.width", path: ["metadata", "width"], value: { _, _ in 4031 }, expected: "badSignature"),
        Tamper(
            name: "metadata.height removed", path: ["metadata", "height"], value: { _, _ in nil },
            expected: "badSignature"),
        Tamper(
            name: "sender key swapped", path: ["sender", "publicKey"], value: { _, _ in b64(carol.publicKey.bytes) },
            expected: "badSignature"),
        Tamper(
            name: "recipient swapped", path: ["recipient", "publicKey"], value: { _, _ in b64(carol.publicKey.bytes) },
            expected: "badSignature"),
        Tamper(
            name: "sender = recipient", path: ["sender", "publicKey"], value: { _, _ in b64(bob.publicKey.bytes) },
            expected: "badSignature"),
        Tamper(
            name: "sender key not a curve point", path: ["sender", "publicKey"],
            value: { _, _ in b64([UInt8](repeating: 0xFF, count: 32)) }, expected: "badSignature"),
        Tamper(
            name: "encryptedData altered", path: ["photo", "encryptedData"], value: { _, d in b64(flip(d, at: 50)) },
            expected: "tagMismatch"),
        Tamper(
            name: "encryptedData last bit", path: ["photo", "encryptedData"],
            value: { _, d in b64(flip(d, at: d.count - 1, bit: 0x80)) }, expected: "tagMismatch"),
        Tamper(
            name: "encryptedData short", path: ["photo", "encryptedData"], value: { _, d in b64(Array(d.dropLast())) },
            expected: "sizeMismatch"),
        Tamper(
            name: "encryptedData long", path: ["photo", "encryptedData"], value: { _, d in b64(d + [0]) },
            expected: "sizeMismatch"),
        Tamper(
            name: "encryptedData empty", path: ["photo", "encryptedData"], value: { _, _ in "" },
            expected: "sizeMismatch"),
        Tamper(
            name: "encryptedData removed", path: ["photo", "encryptedData"], value: { _, _ in nil },
            expected: "truncated"),
        Tamper(
            name: "encryptedData null", path: ["photo", "encryptedData"], value: { _, _ in NSNull() },
            expected: "truncated"),
        Tamper(
            name: "iv 11 bytes", path: ["photo", "iv"], value: { h, _ in b64(Array(h.iv.prefix(11))) },
            expected: "malformed"),
        Tamper(
            name: "encryptedKey 81 bytes", path: ["photo", "encryptedKey"],
            value: { h, _ in b64(h.encryptedKey + [0]) }, expected: "malformed"),
        Tamper(
            name: "signature 65 bytes", path: ["signature"], value: { h, _ in b64(h.signature + [0]) },
            expected: "malformed"),
        Tamper(
            name: "recipient key 33 bytes", path: ["recipient", "publicKey"],
            value: { _, _ in b64(bob.publicKey.bytes + [0]) }, expected: "malformed"),
        Tamper(
            name: "photo id upper case", path: ["photo", "id"], value: { _, _ in photoID.uppercased() },
            expected: "malformed"),
        Tamper(
            name: "photo id without dashes", path: ["photo", "id"],
            value: { _, _ in photoID.replacingOccurrences(of: "-", with: "") }, expected: "malformed"),
        Tamper(
            name: "metadata.name with /", path: ["metadata", "name"], value: { _, _ in "../IMG.jpg" },
            expected: "malformed"),
        Tamper(
            name: "metadata.format lower case", path: ["metadata", "format"], value: { _, _ in "jpeg" },
            expected: "malformed"),
        Tamper(
            name: "metadata.originalSize negative", path: ["metadata", "originalSize"], value: { _, _ in -1 },
            expected: "tooLarge"),
        Tamper(
            name: "metadata.originalSize a string", path: ["metadata", "originalSize"], value: { _, d in "\(d.count)" },
            expected: "malformed"),
        Tamper(name: "metadata removed", path: ["metadata"], value: { _, _ in nil }, expected: "malformed"),
        Tamper(name: "version 1.0", path: ["version"], value: { _, _ in "1.0" }, expected: "unsupportedVersion"),
        Tamper(name: "version missing", path: ["version"], value: { _, _ in nil }, expected: "malformed"),
        Tamper(
            name: "algorithm unknown", path: ["photo", "algorithm"], value: { _, _ in "rot13" },
            expected: "unsupportedAlgorithm"),
        // Not covered by the signature, and documented as informational: ignored by readers.
        Tamper(
            name: "sender.fingerprint (informational)", path: ["sender", "fingerprint"],
            value: { _, _ in "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA" }, expected: "ok"),
        Tamper(
            name: "sender.fingerprint removed", path: ["sender", "fingerprint"], value: { _, _ in nil }, expected: "ok"),
        Tamper(name: "unknown top-level field", path: ["comment"], value: { _, _ in "hello" }, expected: "ok"),
    ]

    @Test(arguments: tampers)
    func tamperedField(_ t: Tamper) throws {
        let (file, header, data) = try Self.file()
        let edited = try Self.editing(file, t.path, t.value(header, data))
        #expect(S.outcome { _ = try S.open(edited, as: Self.bob) } == t.expected)
    }

    /// Changes a sender could sign (or an attacker who signs with the sender's key): the
    /// signature verifies and the later checks catch them.
    @Test func resignedChangesAreCaughtLater() throws {
        let plain = Self.photo(100)
        let (header, data) = try Self.seal(plain)
        func outcome(_ h: BundleHeader, _ d: [UInt8] = data, as key: SigningKey = Self.bob) -> String {
            S.outcome { _ = try S.open(try LocaphotoFile.encode(h, encryptedData: d), as: key) }
        }
        var h = header
        h.recipient = Self.carol.publicKey
        #expect(outcome(Self.resign(h)) == "wrongRecipient")  // Bob reads it: not his
        #expect(outcome(Self.resign(h), as: Self.carol) == "wrongRecipient")  // Carol: key sealed to Bob

        h = header
        h.encryptedKey = Self.flip(h.encryptedKey, at: 60)
        #expect(outcome(Self.resign(h)) == "wrongRecipient")

        h = header
        h.encryptedKey = SealedBox.seal(SecretBytes(randomCount: 32), to: try Self.bob.publicKey.agreementKey())
        #expect(outcome(Self.resign(h)) == "tagMismatch")  // another key, sealed to Bob: the tag fails

        h = header
        h.authTag = Self.flip(h.authTag)
        #expect(outcome(Self.resign(h)) == "tagMismatch")

        h = header
        h.iv = Self.flip(h.iv, at: 11)
        #expect(outcome(Self.resign(h)) == "tagMismatch")

        h = header
        h.metadata.originalSize += 1
        #expect(outcome(Self.resign(h)) == "sizeMismatch")
        #expect(outcome(Self.resign(h), data + [0]) == "tagMismatch")

        h = header
        h.sender = Self.carol.publicKey
        #expect(outcome(Self.resign(h, by: Self.carol)) == "ok")  // Carol may send her own copy...
        #expect(outcome(Self.resign(h, by: Self.alice)) == "badSignature")  // ...but not sign as Alice
    }

    @Test func wrongRecipientKey() throws {
        let (file, header, _) = try Self.file()
        #expect(S.outcome { _ = try S.open(file, as: Self.carol) } == "wrongRecipient")
        #expect(S.outcome { _ = try S.open(file, as: Self.alice) } == "wrongRecipient")
        // The opener refuses even when told the bundle is for the key it is given.
        #expect(
            S.outcome {
                _ = try BundleOpener(
                    algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
                    recipientPublicKey: Self.carol.publicKey, recipient: Self.carol)
            } == "wrongRecipient")
        #expect(
            S.outcome {
                _ = try BundleOpener(
                    algorithm: header.algorithm, iv: Array(header.iv.prefix(8)), encryptedKey: header.encryptedKey,
                    recipientPublicKey: Self.bob.publicKey, recipient: Self.bob)
            } == "malformed")
        #expect(
            S.outcome {
                _ = try BundleOpener(
                    algorithm: header.algorithm, iv: header.iv, encryptedKey: Array(header.encryptedKey.prefix(47)),
                    recipientPublicKey: Self.bob.publicKey, recipient: Self.bob)
            } == "wrongRecipient")
    }

    /// `finish` checks the header it is given: an altered header fails even after decryption.
    @Test func openerFinishChecksTheHeader() throws {
        let (header, data) = try Self.seal(Self.photo(100))
        func finish(_ h: BundleHeader) -> String {
            S.outcome {
                let opener = try BundleOpener(
                    algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
                    recipientPublicKey: header.recipient, recipient: Self.bob)
                var d = data
                d.withUnsafeMutableBytes { opener.decrypt($0) }
                _ = try opener.finish(header: h)
            }
        }
        #expect(finish(header) == "ok")
        var h = header
        h.metadata.name = "other.jpg"
        #expect(finish(h) == "badSignature")
        h = header
        h.photoID = "not-a-uuid"
        #expect(finish(h) == "malformed")
        h = header
        h.version = "2.1"
        #expect(finish(h) == "unsupportedVersion")
        h = header
        h.authTag = Self.flip(h.authTag)
        #expect(finish(Self.resign(h)) == "tagMismatch")
    }

    // MARK: hostile files

    /// Every prefix of a small file is refused (and nothing crashes).
    @Test func everyTruncation() throws {
        let (file, _, _) = try Self.file(Self.photo(20))
        let bytes = [UInt8](file)
        #expect(bytes.last == UInt8(ascii: "}"))
        for n in 0..<bytes.count {
            let expected = n == 0 ? "truncated" : "malformed"
            #expect(
                S.outcome { _ = try S.open(Data(bytes.prefix(n)), as: Self.bob) } == expected, "prefix of \(n) bytes")
        }
        #expect(S.outcome { _ = try S.open(file, as: Self.bob) } == "ok")
    }

    /// Flipping any single bit is either refused with a FormatError or harmless (same header,
    /// same plaintext: whitespace-like changes, ignored keys, the informational fingerprint).
    @Test func everyBitFlip() throws {
        let plain = Self.photo(24)
        let (file, header, _) = try Self.file(plain)
        let bytes = [UInt8](file)
        var harmless = 0
        var refused: [String: Int] = [:]
        for i in 0..<bytes.count {
            for bit in 0..<8 {
                var b = bytes
                b[i] ^= 1 << bit
                var result: (BundleHeader, [UInt8])?
                let outcome = S.outcome { result = try S.open(Data(b), as: Self.bob) }
                if outcome == "ok" {
                    harmless += 1
                    #expect(result?.0 == header, "flip of bit \(bit) at \(i) changed the header silently")
                    #expect(result?.1 == plain, "flip of bit \(bit) at \(i) changed the plaintext silently")
                } else {
                    #expect(!outcome.hasPrefix("unexpected"), "\(outcome) at byte \(i) bit \(bit)")
                    refused[outcome, default: 0] += 1
                }
            }
        }
        #expect(refused["badSignature", default: 0] > 0)
        #expect(refused["malformed", default: 0] > 0)
        #expect(refused["tagMismatch", default: 0] > 0)
        #expect(harmless < bytes.count * 8 / 10)
    }

    /// Random garbage and JSON of the wrong shape: refused, never a crash.
    @Test func garbage() throws {
        var rng = RNG(99)
        for n in [1, 2, 10, 100, 1000] {
            for _ in 0..<20 {
                let junk = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                #expect(S.outcome { _ = try S.open(Data(junk), as: Self.bob) } == "malformed")
            }
        }
        for text in [
            "{}", "[]", "null", "\"2.0\"", "{\"version\":\"2.0\"}", "{\"version\":2.0,\"photo\":{}}", "\u{FEFF}{}", "0",
        ] {
            #expect(S.outcome { _ = try S.open(Data(text.utf8), as: Self.bob) } == "malformed", "\(text)")
        }
    }

    /// Older shapes (seed 000's version 1.0, seed 001's unversioned document) and other versions
    /// are named, with the version this reader takes; not "invalid or truncated JSON".
    @Test func olderShapesAreNamed() throws {
        let cases: [(String, String)] = [
            (
                #"{"version":"1.0","photo":{"id":"x","encryptedData":"AA==","encryptedKey":"AA==","iv":"AA==","authTag":"AA=="},"metadata":{"originalSize":1,"format":"HEIC"},"signature":"ab"}"#,
                "version 1.0"
            ),
            (
                #"{"id":"x","encryptedData":"AA==","encryptedKey":"AA==","iv":"AA==","tag":"AA==","metadata":{}}"#,
                "no version"
            ),
            (#"{"version":"3.1","photo":{}}"#, "version 3.1"),
            (#"{"version":3,"photo":{}}"#, "version 3"),
        ]
        for (text, named) in cases {
            let e = try #require(throws: FormatError.self) { _ = try LocaphotoFile.decode(Data(text.utf8)) }
            #expect(e.code == .unsupportedVersion, "\(text)")
            #expect(e.message.contains(named) && e.message.contains("reads version 2.0"), "\(e.message)")
        }
        let e = try #require(throws: FormatError.self) {
            _ = try LocaphotoFile.decode(Data(#"{"version":"2.0","photo":{}}"#.utf8))
        }
        #expect(e.code == .malformed && e.message.contains("fields missing"))
    }

    /// A file above the limit is refused by its size alone: the bytes are never read (they are
    /// not even JSON here, and the mapping is never touched beyond its first page).
    @Test func oversizedFileIsRefusedWithoutParsing() throws {
        let limit = LocaphotoFile.maxFileSize
        #expect(limit == 512 << 20)
        let length = limit + 1
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED
        else {
            Issue.record("mmap of \(length) bytes failed")
            return
        }
        defer { munmap(p, length) }
        p.storeBytes(of: UInt8(ascii: "x"), as: UInt8.self)
        let big = Data(bytesNoCopy: p, count: length, deallocator: .none)
        let start = ContinuousClock.now
        #expect(S.outcome { _ = try LocaphotoFile.decode(big) } == "tooLarge")
        #expect(S.outcome { _ = try LocaphotoFile.decode(big, requireData: false) } == "tooLarge")
        #expect(ContinuousClock.now - start < .seconds(1))
        // Exactly at the limit the size check passes and the (non-JSON) content is refused.
        let atLimit = Data(bytesNoCopy: p, count: limit, deallocator: .none)
        #expect(S.outcome { _ = try LocaphotoFile.decode(atLimit) } == "malformed")
    }

    static let base64Fields: [[String]] = [
        ["photo", "iv"], ["photo", "encryptedKey"], ["photo", "authTag"], ["photo", "encryptedData"],
        ["sender", "publicKey"], ["recipient", "publicKey"], ["signature"],
    ]

    @Test(arguments: base64Fields)
    func nonBase64(_ path: [String]) throws {
        let (file, _, _) = try Self.file()
        let valid = try #require(try Self.field(file, path) as? String)
        var bad = [
            "!!!!", "AAAA*AAA", "AAA", "A===", " " + valid, valid + " ", valid + "\n", "data:;base64," + valid,
            valid.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") + "~",
        ]
        if valid.hasSuffix("=") { bad.append(valid.replacingOccurrences(of: "=", with: "")) }  // unpadded
        for value in bad {
            #expect(
                S.outcome { _ = try S.open(try Self.editing(file, path, value), as: Self.bob) } == "malformed",
                "\(path) = '\(value.prefix(20))'")
        }
        for value in [42, true, ["AAAA"], ["k": "AAAA"]] as [Any] {
            #expect(
                S.outcome { _ = try S.open(try Self.editing(file, path, value), as: Self.bob) } == "malformed",
                "\(path) = \(value)")
        }
    }

    // MARK: metadata limits

    @Test func metadataValidation() {
        func check(_ m: BundleMetadata) -> String { S.outcome { try m.validate() } }
        let ok = Self.metadata(10)
        #expect(check(ok) == "ok")
        var m = ok
        m.originalSize = 1 << 32
        #expect(check(m) == "ok")
        m.originalSize = (1 << 32) + 1
        #expect(check(m) == "tooLarge")
        m.originalSize = -1
        #expect(check(m) == "tooLarge")

        for (name, expected) in [
            (String(repeating: "a", count: 255), "ok"), (String(repeating: "a", count: 256), "malformed"),
            (String(repeating: "é", count: 127), "ok"), (String(repeating: "é", count: 128), "malformed"),
            ("a/b", "malformed"), ("a\u{0}b", "malformed"), ("a\nb", "malformed"), ("a\u{1F}b", "malformed"),
            ("a\u{7F}b", "malformed"), ("", "ok"), ("a\\b", "ok"), (".", "ok"), ("Été 🌊.jpg", "ok"),
        ] {
            m = ok
            m.name = name
            #expect(check(m) == expected, "name '\(name.debugDescription)'")
        }
        for (format, expected) in [
            ("JPEG", "ok"), ("A", "ok"), (String(repeating: "A", count: 16), "ok"),
            (String(repeating: "A", count: 17), "malformed"), ("", "malformed"), ("jpeg", "malformed"),
            ("JP-G", "malformed"), ("WebP", "malformed"), ("HEIC ", "malformed"),
        ] {
            m = ok
            m.format = format
            #expect(check(m) == expected, "format '\(format)'")
        }
        for (date, expected) in [
            ("2025-11-15T10:30:00Z", "ok"), ("2025-11-15T10:30:00", "malformed"),
            ("2025-11-15T10:30:00+00:00", "malformed"), ("2025-11-15T10:30:0Z", "malformed"), ("", "malformed"),
        ] {
            m = ok
            m.captureDate = date
            #expect(check(m) == expected, "captureDate '\(date)'")
        }
        for (v, expected) in [
            (1, "ok"), (1_000_000, "ok"), (0, "malformed"), (1_000_001, "malformed"), (-5, "malformed"),
        ] {
            m = ok
            m.width = v
            #expect(check(m) == expected, "width \(v)")
            m = ok
            m.height = v
            #expect(check(m) == expected, "height \(v)")
        }
    }

    @Test func headerValidation() throws {
        let (header, _) = try Self.seal(Self.photo(10))
        func check(_ edit: (inout BundleHeader) -> Void) -> String {
            var h = header
            edit(&h)
            return S.outcome { try h.validate() }
        }
        #expect(check { _ in } == "ok")
        #expect(check { $0.version = "2.0.0" } == "unsupportedVersion")
        #expect(check { $0.photoID = "0B7E2F4C-1D3A-4E5F-8A9B-0C1D2E3F4A5B" } == "malformed")
        #expect(check { $0.photoID = "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5" } == "malformed")
        #expect(check { $0.photoID = "0b7e2f4c_1d3a-4e5f-8a9b-0c1d2e3f4a5b" } == "malformed")
        #expect(check { $0.photoID = "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5g" } == "malformed")
        #expect(check { $0.iv = [] } == "malformed")
        #expect(check { $0.authTag = Array($0.authTag.prefix(15)) } == "malformed")
        #expect(check { $0.encryptedKey += [0] } == "malformed")
        #expect(check { $0.signature = [] } == "malformed")
        #expect(check { $0.metadata.format = "" } == "malformed")
        #expect(BundleHeader.isCanonicalUUID(Self.photoID))
        #expect(!BundleHeader.isCanonicalUUID(""))
    }
}
