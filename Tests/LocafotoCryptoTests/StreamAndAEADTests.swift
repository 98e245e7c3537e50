import LocafotoCrypto
import LocafotoErrors
import LocafotoTestSupport
import Testing

func expectCryptoError<R>(
    _ code: CryptoError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    expectThrows(code, sourceLocation: sourceLocation, body)
}

enum Chunking: CaseIterable, Sendable {
    case whole, oneByte, random, blockAligned, oddPrime
}

/// Splits `count` bytes into chunk lengths.
func chunkLengths(_ count: Int, _ chunking: Chunking, seed: UInt64) -> [Int] {
    var rng = SplitMix64(seed)
    var lengths: [Int] = []
    var left = count
    while left > 0 {
        let n: Int
        switch chunking {
        case .whole: n = left
        case .oneByte: n = 1
        case .random: n = Int.random(in: 0...min(left, 300), using: &rng)  // zero-length pieces too
        case .blockAligned: n = 64 * 3
        case .oddPrime: n = 67
        }
        let take = min(n, left)
        lengths.append(take)
        left -= take
    }
    return lengths
}

@Suite("ChaChaPolyStream")
struct ChaChaPolyStreamTests {
    static let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4096, 65536 + 17]

    static func streamEncrypt(
        _ plaintext: [UInt8], key: SecretBytes, nonce: [UInt8], aad: [UInt8], _ chunking: Chunking,
        seed: UInt64
    ) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        let stream = try ChaChaPolyStream(.encrypt, key: key, nonce: nonce, aad: aad)
        let out = feed(stream, plaintext, chunking, seed: seed)
        #expect(stream.processedLength == UInt64(plaintext.count))
        return (out, stream.finalize())
    }

    /// `input` through `stream` in pieces of the chunking's lengths.
    static func feed(_ stream: ChaChaPolyStream, _ input: [UInt8], _ chunking: Chunking, seed: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        for n in chunkLengths(input.count, chunking, seed: seed) {
            var chunk = Array(input[offset..<offset + n])
            stream.process(&chunk)
            out += chunk
            offset += n
        }
        return out
    }

    static func streamDecrypt(
        _ ciphertext: [UInt8], tag: [UInt8], key: SecretBytes, nonce: [UInt8], aad: [UInt8],
        _ chunking: Chunking, seed: UInt64
    ) throws -> [UInt8] {
        let stream = try ChaChaPolyStream(.decrypt, key: key, nonce: nonce, aad: aad)
        let out = feed(stream, ciphertext, chunking, seed: seed)
        try stream.verify(tag: tag)
        return out
    }

    @Test(arguments: Chunking.allCases)
    func matchesOneShot(_ chunking: Chunking) throws {
        var rng = SplitMix64(42)
        let randomLengths = (0..<6).map { _ in Int.random(in: 0...20000, using: &rng) }
        for (i, length) in (Self.lengths + randomLengths).enumerated() {
            for aad in [[], SecureRandom.bytes(1), SecureRandom.bytes(13), SecureRandom.bytes(300)] {
                let key = SecretBytes(randomCount: 32)
                let nonce = SecureRandom.bytes(12)
                let plaintext = SecureRandom.bytes(length)
                let oneShot = try AEAD.seal(.chacha20poly1305, key: key, nonce: nonce, plaintext: plaintext, aad: aad)
                let streamed = try Self.streamEncrypt(
                    plaintext, key: key, nonce: nonce, aad: aad, chunking, seed: UInt64(i))
                #expect(streamed.ciphertext == oneShot.ciphertext, "length \(length), aad \(aad.count)")
                #expect(streamed.tag == oneShot.tag, "length \(length), aad \(aad.count)")
                // Streamed decryption of the one-shot output, with a different chunking than encryption.
                let decrypted = try Self.streamDecrypt(
                    oneShot.ciphertext, tag: oneShot.tag, key: key, nonce: nonce, aad: aad, chunking,
                    seed: UInt64(i) + 1000)
                #expect(decrypted == plaintext)
                // And the one-shot API opens the streamed output.
                #expect(
                    try AEAD.open(
                        .chacha20poly1305, key: key, nonce: nonce, ciphertext: streamed.ciphertext,
                        tag: streamed.tag, aad: aad) == plaintext)
            }
        }
    }

    @Test func decryptionDetectsTampering() throws {
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        let aad = Array("header".utf8)
        let plaintext = SecureRandom.bytes(1000)
        let sealed = try AEAD.seal(.chacha20poly1305, key: key, nonce: nonce, plaintext: plaintext, aad: aad)
        for index in [0, 1, 63, 64, 500, 999] {
            var ciphertext = sealed.ciphertext
            ciphertext[index] ^= 0x04
            expectCryptoError(.authenticationFailed) {
                try Self.streamDecrypt(ciphertext, tag: sealed.tag, key: key, nonce: nonce, aad: aad, .random, seed: 7)
            }
        }
        for index in 0..<16 {
            var tag = sealed.tag
            tag[index] ^= 0x80
            expectCryptoError(.authenticationFailed) {
                try Self.streamDecrypt(sealed.ciphertext, tag: tag, key: key, nonce: nonce, aad: aad, .whole, seed: 0)
            }
        }
        expectCryptoError(.authenticationFailed) {
            try Self.streamDecrypt(
                sealed.ciphertext, tag: Array(sealed.tag.prefix(15)), key: key, nonce: nonce, aad: aad, .whole, seed: 0)
        }
        expectCryptoError(.authenticationFailed) {
            try Self.streamDecrypt(sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, aad: [], .whole, seed: 0)
        }
        expectCryptoError(.authenticationFailed) {
            try Self.streamDecrypt(
                Array(sealed.ciphertext.dropLast()), tag: sealed.tag, key: key, nonce: nonce, aad: aad, .whole, seed: 0)
        }
        #expect(
            try Self.streamDecrypt(
                sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, aad: aad, .oneByte, seed: 0) == plaintext)
    }

    @Test func rejectsBadKeyAndNonceLengths() {
        expectCryptoError(.invalidLength) {
            try ChaChaPolyStream(.encrypt, key: SecretBytes(count: 31), nonce: [UInt8](repeating: 0, count: 12))
        }
        expectCryptoError(.invalidLength) {
            try ChaChaPolyStream(.encrypt, key: SecretBytes(count: 32), nonce: [UInt8](repeating: 0, count: 24))
        }
    }
}

@Suite("AEAD")
struct AEADTests {
    @Test(arguments: [AEADAlgorithm.aes256gcm, .chacha20poly1305])
    func roundTripAndFailures(_ algorithm: AEADAlgorithm) throws {
        #expect(algorithm.isAvailable, "AES-256-GCM unavailable on this CPU")
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        for length in [0, 1, 16, 1000] {
            let plaintext = SecureRandom.bytes(length)
            let aad = SecureRandom.bytes(length % 7)
            let sealed = try AEAD.seal(algorithm, key: key, nonce: nonce, plaintext: plaintext, aad: aad)
            #expect(sealed.ciphertext.count == length && sealed.tag.count == 16)
            #expect(
                try AEAD.open(
                    algorithm, key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: aad)
                    == plaintext)
            expectCryptoError(.authenticationFailed) {
                try AEAD.open(
                    algorithm, key: SecretBytes(randomCount: 32), nonce: nonce, ciphertext: sealed.ciphertext,
                    tag: sealed.tag, aad: aad)
            }
            expectCryptoError(.authenticationFailed) {
                try AEAD.open(
                    algorithm, key: key, nonce: SecureRandom.bytes(12), ciphertext: sealed.ciphertext, tag: sealed.tag,
                    aad: aad)
            }
            expectCryptoError(.authenticationFailed) {
                try AEAD.open(
                    algorithm, key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: aad + [0])
            }
            var tag = sealed.tag
            tag[3] ^= 1
            expectCryptoError(.authenticationFailed) {
                try AEAD.open(algorithm, key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: tag, aad: aad)
            }
            if length > 0 {
                var ciphertext = sealed.ciphertext
                ciphertext[length - 1] ^= 1
                expectCryptoError(.authenticationFailed) {
                    try AEAD.open(algorithm, key: key, nonce: nonce, ciphertext: ciphertext, tag: sealed.tag, aad: aad)
                }
            }
        }
        expectCryptoError(.invalidLength) {
            try AEAD.seal(algorithm, key: SecretBytes(count: 16), nonce: nonce, plaintext: [1])
        }
        expectCryptoError(.invalidLength) { try AEAD.seal(algorithm, key: key, nonce: [0], plaintext: [1]) }
        expectCryptoError(.invalidLength) {
            try AEAD.open(algorithm, key: key, nonce: nonce, ciphertext: [1], tag: [0])
        }
    }

    /// The two algorithms are different functions (guards against a mixed-up dispatch).
    @Test func algorithmsDiffer() throws {
        let key = SecretBytes(randomCount: 32)
        let nonce = SecureRandom.bytes(12)
        let a = try AEAD.seal(.aes256gcm, key: key, nonce: nonce, plaintext: [1, 2, 3])
        let c = try AEAD.seal(.chacha20poly1305, key: key, nonce: nonce, plaintext: [1, 2, 3])
        #expect(a.ciphertext != c.ciphertext || a.tag != c.tag)
        #expect(
            AEADAlgorithm(name: "aes-256-gcm") == .aes256gcm
                && AEADAlgorithm(name: "chacha20-poly1305") == .chacha20poly1305)
        #expect(AEADAlgorithm(name: "rot13") == nil)
    }
}

@Suite("KeyWrap")
struct KeyWrapTests {
    @Test func roundTripAndFailures() throws {
        let kek = SecretBytes(randomCount: 32)
        let secret = SecretBytes(randomCount: 32)
        let aad = Array("vault v1".utf8)
        let wrapped = KeyWrap.wrap(secret, with: kek, aad: aad)
        #expect(wrapped.count == 32 + KeyWrap.overhead)
        #expect(KeyWrap.wrap(secret, with: kek, aad: aad) != wrapped, "random nonce")
        #expect(try KeyWrap.unwrap(wrapped, with: kek, aad: aad).constantTimeEquals(secret))
        expectCryptoError(.authenticationFailed) {
            try KeyWrap.unwrap(wrapped, with: SecretBytes(randomCount: 32), aad: aad)
        }
        expectCryptoError(.authenticationFailed) { try KeyWrap.unwrap(wrapped, with: kek, aad: []) }
        for index in [0, 23, 24, 55, wrapped.count - 1] {
            var bad = wrapped
            bad[index] ^= 1
            expectCryptoError(.authenticationFailed) { try KeyWrap.unwrap(bad, with: kek, aad: aad) }
        }
        for length in [0, 1, 24, KeyWrap.overhead] {
            expectCryptoError(.invalidLength) { try KeyWrap.unwrap(Array(wrapped.prefix(length)), with: kek, aad: aad) }
        }
        expectCryptoError(.authenticationFailed) { try KeyWrap.unwrap(Array(wrapped.dropLast()), with: kek, aad: aad) }
        expectCryptoError(.invalidLength) {
            try KeyWrap.unwrap([UInt8](repeating: 0, count: KeyWrap.overhead + 1025), with: kek, aad: aad)
        }
        expectCryptoError(.invalidLength) { try KeyWrap.unwrap(wrapped, with: SecretBytes(count: 16), aad: aad) }
        // The largest accepted secret.
        let big = SecretBytes(randomCount: 1024)
        #expect(try KeyWrap.unwrap(KeyWrap.wrap(big, with: kek), with: kek).constantTimeEquals(big))
    }
}
