import CSodium
import LocafotoCrypto
import LocafotoTestSupport
import Testing

func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }

@Suite("SealedBox")
struct SealedBoxTests {
    @Test func roundTripAndFailures() throws {
        let recipient = X25519SecretKey.generate()
        for message in [[], Array("photo key".utf8), SecureRandom.bytes(4096)] {
            let sealed = SealedBox.seal(message, to: recipient.publicKey)
            #expect(sealed.count == message.count + SealedBox.overhead)
            #expect(try SealedBox.open(sealed, with: recipient).unsafeCopy() == message)
            expectCryptoError(.authenticationFailed) { try SealedBox.open(sealed, with: .generate()) }
            var bad = sealed
            bad[bad.count - 1] ^= 1
            expectCryptoError(.authenticationFailed) { try SealedBox.open(bad, with: recipient) }
            if sealed.count > SealedBox.overhead {
                expectCryptoError(.authenticationFailed) {
                    try SealedBox.open(Array(sealed.dropLast()), with: recipient)
                }
            }
            expectCryptoError(.invalidLength) {
                try SealedBox.open(Array(sealed.prefix(SealedBox.overhead - 1)), with: recipient)
            }
        }
        expectCryptoError(.invalidLength) { try SealedBox.open([], with: recipient) }
        expectCryptoError(.invalidLength) {
            try SealedBox.open([UInt8](repeating: 0, count: SealedBox.overhead + 4097), with: recipient)
        }
    }
}

@Suite("Ed25519 and X25519")
struct KeyTests {
    @Test func signAndVerify() throws {
        let key = SigningKey.generate()
        let message = Array("I am who I say I am".utf8)
        let signature = key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        var flipped = message
        flipped[0] ^= 1
        #expect(!key.publicKey.isValidSignature(signature, for: flipped))
        var badSignature = signature
        badSignature[10] ^= 1
        #expect(!key.publicKey.isValidSignature(badSignature, for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
        #expect(!SigningKey.generate().publicKey.isValidSignature(signature, for: message))
        #expect(key.publicKey.isValidSignature(key.signature(for: [UInt8]()), for: [UInt8]()))
    }

    /// RFC 8032 §7.1 test 1: the empty message under a known seed.
    @Test func rfc8032Vector() throws {
        let key = try SigningKey(
            seed: SecretBytes(copying: hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")))
        #expect(key.publicKey.bytes == hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        #expect(
            key.signature(for: [UInt8]())
                == hex(
                    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
                ))
        expectCryptoError(.invalidLength) { try SigningKey(seed: SecretBytes(count: 31)) }
        expectCryptoError(.invalidLength) { try SigningPublicKey(bytes: [1, 2, 3]) }
    }

    @Test func agreementKeysMatch() throws {
        for _ in 0..<8 {
            let identity = SigningKey.generate()
            let secret = try identity.agreementKey()
            #expect(secret.publicKey == (try identity.publicKey.agreementKey()))
            // Deterministic: the same identity always gives the same X25519 key.
            #expect(try identity.agreementKey().secret.constantTimeEquals(secret.secret))
        }
    }

    @Test func x25519SharedSecretIsSymmetric() throws {
        let a = X25519SecretKey.generate()
        let b = X25519SecretKey.generate()
        let ab = try a.sharedSecret(with: b.publicKey)
        let ba = try b.sharedSecret(with: a.publicKey)
        #expect(ab.count == 32 && ab.constantTimeEquals(ba))
        #expect(!(try a.sharedSecret(with: X25519SecretKey.generate().publicKey)).constantTimeEquals(ab))
        expectCryptoError(.invalidKey) {
            try a.sharedSecret(with: X25519PublicKey(bytes: [UInt8](repeating: 0, count: 32)))
        }
        expectCryptoError(.invalidLength) { try X25519PublicKey(bytes: [UInt8](repeating: 9, count: 31)) }
        expectCryptoError(.invalidLength) { try X25519SecretKey(secret: SecretBytes(count: 33)) }
    }

    /// RFC 7748 §6.1 Diffie-Hellman test vector.
    @Test func rfc7748Vector() throws {
        let alice = try X25519SecretKey(
            secret: SecretBytes(copying: hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")))
        let bob = try X25519SecretKey(
            secret: SecretBytes(copying: hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")))
        #expect(alice.publicKey.bytes == hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bob.publicKey.bytes == hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        #expect(
            try alice.sharedSecret(with: bob.publicKey).unsafeCopy()
                == hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"))
    }
}

@Suite("PasswordKDF")
struct PasswordKDFTests {
    @Test func deterministicPerSalt() throws {
        let passphrase = SecretBytes(copying: Array("correct horse battery staple".utf8))
        let salt = SecureRandom.bytes(PasswordKDF.saltLength)
        let a = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: .interactive)
        let b = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: .interactive)
        #expect(a.count == 32 && a.constantTimeEquals(b))
        var otherSalt = salt
        otherSalt[0] ^= 1
        let c = try PasswordKDF.deriveKey(passphrase: passphrase, salt: otherSalt, parameters: .interactive)
        #expect(!a.constantTimeEquals(c))
    }

    @Test func boundsAndSaltChecked() {
        let passphrase = SecretBytes(copying: Array("x".utf8))
        let salt = [UInt8](repeating: 1, count: 16)
        for p in [
            PasswordKDF.Parameters(opsLimit: 0, memLimit: 64 << 20),
            PasswordKDF.Parameters(opsLimit: 17, memLimit: 64 << 20),
            PasswordKDF.Parameters(opsLimit: 2, memLimit: 1 << 20),
            PasswordKDF.Parameters(opsLimit: 2, memLimit: 1 << 40),
            PasswordKDF.Parameters(opsLimit: .max, memLimit: .max),
        ] {
            #expect(!p.isWithinBounds)
            expectCryptoError(.kdfFailed) {
                try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: p)
            }
        }
        #expect(PasswordKDF.Parameters.interactive.isWithinBounds)
        #expect(PasswordKDF.Parameters.moderate.isWithinBounds && PasswordKDF.Parameters.sensitive.isWithinBounds)
        expectCryptoError(.invalidLength) {
            try PasswordKDF.deriveKey(passphrase: passphrase, salt: [1, 2, 3], parameters: .interactive)
        }
    }
}

@Suite("Hashes, HMAC, Hex")
struct HashTests {
    @Test func sha256() {
        #expect(
            SHA256.hash(Array("abc".utf8)) == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(SHA256.hash([UInt8]()) == hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
    }

    @Test func blake2b512() {
        #expect(
            BLAKE2b.hash([UInt8]())
                == hex(
                    "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"
                ))
        #expect(
            BLAKE2b.hash(Array("abc".utf8))
                == hex(
                    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
                ))
        #expect(
            ContentHash.of(Array("abc".utf8)) == hex("bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        )
    }

    /// Streaming in pieces equals one shot, and copies of a hasher are independent values.
    @Test func streamingAndValueSemantics() {
        let data = SecureRandom.bytes(10_000)
        var sha = SHA256()
        var blake = BLAKE2b()
        for chunk in stride(from: 0, to: data.count, by: 777).map({ Array(data[$0..<min($0 + 777, data.count)]) }) {
            sha.update(chunk)
            blake.update(chunk)
        }
        var shaCopy = sha
        var blakeCopy = blake
        shaCopy.update([1])
        blakeCopy.update([1])
        #expect(sha.finalize() == SHA256.hash(data))
        #expect(blake.finalize() == BLAKE2b.hash(data))
        #expect(shaCopy.finalize() == SHA256.hash(data + [1]))
        #expect(blakeCopy.finalize() == BLAKE2b.hash(data + [1]))
    }

    /// RFC 4231 test cases 1, 2 and 6 (a key longer than the block).
    @Test func hmacSHA256() {
        #expect(
            HMAC<SHA256>.authenticate(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
                == hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
        #expect(
            HMAC<SHA256>.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        #expect(
            HMAC<SHA256>.authenticate(
                key: [UInt8](repeating: 0xaa, count: 131),
                message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
                == hex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"))
        // `parts` is the concatenation of its parts.
        #expect(
            HMAC<SHA256>.authenticate(
                key: Array("Jefe".utf8), parts: [Array("what do ya ".utf8), [], Array("want for nothing?".utf8)])
                == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    /// HMAC-BLAKE2b-512 (BLOCKLEN 128), as Noise's BLAKE2b suites use it (value from Python's hmac).
    @Test func hmacBLAKE2b() {
        #expect(
            HMAC<BLAKE2b>.authenticate(
                key: Array("key".utf8), message: Array("The quick brown fox jumps over the lazy dog".utf8))
                == hex(
                    "92294f92c0dfb9b00ec9ae8bd94d7e7d8a036b885a499f149dfe2fd2199394aaaf6b8894a1730cccb2cd050f9bcf5062a38b51b0dab33207f8ef35ae2c9df51b"
                ))
    }

    @Test func hexRoundTrip() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.encode([0x00, 0xAB, 0xff]) == "00abff")
        #expect(Hex.decode("00ABff") == [0x00, 0xAB, 0xFF])
        #expect(Hex.decode("") == [])
        for bad in ["0", "abc", "zz", "0g", " 00", "00 ", "-1", "０0"] {
            #expect(Hex.decode(bad) == nil, "\(bad)")
        }
    }

    @Test func secretBytesBasics() {
        let s = SecretBytes(copying: [1, 2, 3])
        #expect(s.count == 3 && s.unsafeCopy() == [1, 2, 3])
        #expect(!s.description.contains("1") || s.description.contains("redacted"))
        #expect("\(s)" == "SecretBytes(3 bytes, redacted)")
        var source: [UInt8] = [9, 9]
        let consumed = SecretBytes(consuming: &source)
        #expect(source == [0, 0] && consumed.unsafeCopy() == [9, 9])
        #expect(
            constantTimeEquals([1, 2], [1, 2]) && !constantTimeEquals([1, 2], [1, 3])
                && !constantTimeEquals([1], [1, 2]))
        #expect(SecretBytes(count: 0).count == 0)
        #expect(SecretBytes(randomCount: 32).unsafeCopy() != SecretBytes(randomCount: 32).unsafeCopy())
    }
}

/// SHA-256 runs on OpenSSL for speed; libsodium's `crypto_hash_sha256` is the reference.
@Suite("SHA-256 against libsodium")
struct SHA256CrossCheckTests {
    @Test("the same digest as libsodium for every length around the block size and in pieces")
    func againstSodium() {
        var rng = SplitMix64(7)
        for length in Array(0...130) + [1000, 65_536, 1 << 20, (1 << 20) + 17] {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var reference = [UInt8](repeating: 0, count: 32)
            _ = sodium_init()
            crypto_hash_sha256(&reference, data, UInt64(data.count))
            #expect(SHA256.hash(data) == reference, "length \(length)")
            // In random pieces, as a stream arrives.
            var sha = SHA256()
            var at = 0
            while at < data.count {
                let n = min(Int.random(in: 1...9_000, using: &rng), data.count - at)
                data[at..<at + n].withUnsafeBytes { sha.update($0) }
                at += n
            }
            #expect(sha.finalize() == reference, "length \(length) in pieces")
        }
    }
}
