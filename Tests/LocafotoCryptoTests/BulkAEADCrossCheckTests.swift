import CSodium
import LocafotoErrors
import Testing

@testable import LocafotoCrypto

/// The bulk AEADs run on OpenSSL (see `BulkAEAD`); these tests hold them to libsodium's one-shot
/// functions byte for byte, both ways, on many lengths, additional data and piece sizes.
@Suite("Bulk AEADs against libsodium")
struct BulkAEADCrossCheckTests {
    /// What libsodium produces for the same inputs (ciphertext, tag).
    static func sodiumSeal(_ a: AEADAlgorithm, key: [UInt8], nonce: [UInt8], plaintext: [UInt8], aad: [UInt8]) -> (
        [UInt8], [UInt8]
    ) {
        var c = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        var taglen: UInt64 = 0
        switch a {
        case .aes256gcm:
            _ = crypto_aead_aes256gcm_encrypt_detached(
                &c, &tag, &taglen, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce, key)
        case .chacha20poly1305:
            _ = crypto_aead_chacha20poly1305_ietf_encrypt_detached(
                &c, &tag, &taglen, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce, key)
        }
        return (c, tag)
    }

    static var algorithms: [AEADAlgorithm] {
        _ = sodium_init()
        return AEADAlgorithm.allCases.filter { $0 != .aes256gcm || crypto_aead_aes256gcm_is_available() == 1 }
    }

    // Lengths around block and piece boundaries, and one above a transport frame.
    static let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 1000, 4096, 65_519, 65_536, 200_001]

    @Test("one-shot seal and open match libsodium", arguments: algorithms)
    func oneShot(_ a: AEADAlgorithm) throws {
        for (i, n) in Self.lengths.enumerated() {
            let key = SecureRandom.bytes(32)
            let nonce = SecureRandom.bytes(12)
            let plaintext = SecureRandom.bytes(n)
            let aad = SecureRandom.bytes([0, 1, 13, 64][i % 4])
            let (c, tag) = try AEAD.seal(
                a, key: SecretBytes(copying: key), nonce: nonce, plaintext: plaintext, aad: aad)
            let (sc, stag) = Self.sodiumSeal(a, key: key, nonce: nonce, plaintext: plaintext, aad: aad)
            #expect(c == sc, "\(a.name) ciphertext of \(n) bytes")
            #expect(tag == stag, "\(a.name) tag of \(n) bytes")
            #expect(
                try AEAD.open(a, key: SecretBytes(copying: key), nonce: nonce, ciphertext: sc, tag: stag, aad: aad)
                    == plaintext)

            var inPlace = plaintext
            let tag2 = try inPlace.withUnsafeMutableBytes {
                try AEAD.sealInPlace(a, key: SecretBytes(copying: key), nonce: nonce, buffer: $0, aad: aad)
            }
            #expect(inPlace == sc && tag2 == stag)
            try inPlace.withUnsafeMutableBytes {
                try AEAD.openInPlace(a, key: SecretBytes(copying: key), nonce: nonce, buffer: $0, tag: stag, aad: aad)
            }
            #expect(inPlace == plaintext)
        }
    }

    @Test("a changed byte, tag or additional data is refused, and nothing decrypted is left", arguments: algorithms)
    func tamperingRefused(_ a: AEADAlgorithm) throws {
        let key = SecretBytes(copying: SecureRandom.bytes(32))
        let nonce = SecureRandom.bytes(12)
        let plaintext = SecureRandom.bytes(5000)
        let (c, tag) = try AEAD.seal(a, key: key, nonce: nonce, plaintext: plaintext, aad: [1, 2, 3])
        var flipped = c
        flipped[4321] ^= 0x01
        var badTag = tag
        badTag[0] ^= 0x80
        for (cipher, t, aad) in [(flipped, tag, [UInt8]([1, 2, 3])), (c, badTag, [1, 2, 3]), (c, tag, [1, 2, 4])] {
            #expect(throws: CryptoError.self) {
                try AEAD.open(a, key: key, nonce: nonce, ciphertext: cipher, tag: t, aad: aad)
            }
            var buffer = cipher
            #expect(throws: CryptoError.self) {
                try buffer.withUnsafeMutableBytes {
                    try AEAD.openInPlace(a, key: key, nonce: nonce, buffer: $0, tag: t, aad: aad)
                }
            }
            #expect(buffer.allSatisfy { $0 == 0 }, "a refused in-place open leaves no bytes behind")
        }
    }

    @Test("ChaChaPolyStream in any pieces equals libsodium's one-shot AEAD")
    func streamMatchesOneShot() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {  // a fixed-seed generator: the same piece sizes every run
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(seed >> 33) % bound
        }
        for n in Self.lengths {
            let key = SecureRandom.bytes(32)
            let nonce = SecureRandom.bytes(12)
            let plaintext = SecureRandom.bytes(n)
            let aad = SecureRandom.bytes(n % 3 == 0 ? 0 : 21)
            let (sc, stag) = Self.sodiumSeal(.chacha20poly1305, key: key, nonce: nonce, plaintext: plaintext, aad: aad)

            let enc = try ChaChaPolyStream(.encrypt, key: SecretBytes(copying: key), nonce: nonce, aad: aad)
            var out = plaintext
            var i = 0
            while i < n {
                let m = min(n - i, 1 + next(70_000))
                out.withUnsafeMutableBytes { enc.process(UnsafeMutableRawBufferPointer(rebasing: $0[i..<(i + m)])) }
                i += m
            }
            #expect(out == sc, "streamed ciphertext of \(n) bytes")
            #expect(enc.finalize() == stag, "streamed tag of \(n) bytes")

            let dec = try ChaChaPolyStream(.decrypt, key: SecretBytes(copying: key), nonce: nonce, aad: aad)
            var back = sc
            i = 0
            while i < n {
                let m = min(n - i, 1 + next(333))
                back.withUnsafeMutableBytes { dec.process(UnsafeMutableRawBufferPointer(rebasing: $0[i..<(i + m)])) }
                i += m
            }
            try dec.verify(tag: stag)
            #expect(back == plaintext)
            #expect(dec.processedLength == UInt64(n))

            if n > 0 {
                let bad = try ChaChaPolyStream(.decrypt, key: SecretBytes(copying: key), nonce: nonce, aad: aad)
                var altered = sc
                altered[n / 2] ^= 0x20
                bad.process(&altered)
                #expect(throws: CryptoError.self) { try bad.verify(tag: stag) }
            }
        }
    }
}
