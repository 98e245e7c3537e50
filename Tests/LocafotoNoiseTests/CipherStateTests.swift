import LocafotoCrypto
import LocafotoNoise
import Testing

@Suite("CipherState")
struct CipherStateTests {
    static let key = SecretBytes(copying: [UInt8](0..<32))

    @Test func emptyStatePassesDataThrough() throws {
        var cs = CipherState(cipher: .chaChaPoly)
        #expect(!cs.hasKey)
        #expect(try cs.encrypt(ad: [1, 2], plaintext: [9, 8, 7]) == [9, 8, 7])
        #expect(try cs.decrypt(ad: [1, 2], ciphertext: [9, 8, 7]) == [9, 8, 7])
        #expect(cs.nonce == 0)
        expectNoiseError(.invalidArgument) {
            var out = [UInt8](repeating: 0, count: 16)
            try out.withUnsafeMutableBytes { try cs.encrypt(UnsafeRawBufferPointer(rebasing: $0[0..<0]), into: $0) }
        }
    }

    /// §12.3/§12.4: 32 zero bits then the counter, little-endian for ChaChaPoly, big-endian for AESGCM.
    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func nonceEncoding(_ cipher: NoiseCipher) throws {
        var cs = try CipherState(cipher: cipher, key: Self.key)
        let n: UInt64 = 0x0102_0304_0506_0708
        cs.setNonce(n)
        let ad: [UInt8] = [0xAA, 0xBB]
        let plaintext = Array("nonce check".utf8)
        let ciphertext = try cs.encrypt(ad: ad, plaintext: plaintext)
        #expect(cs.nonce == n + 1)
        let counter: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let nonce = [0, 0, 0, 0] + (cipher == .chaChaPoly ? counter.reversed() : counter)
        let algorithm: AEADAlgorithm = cipher == .chaChaPoly ? .chacha20poly1305 : .aes256gcm
        let expected = try AEAD.seal(algorithm, key: Self.key, nonce: nonce, plaintext: plaintext, aad: ad)
        #expect(ciphertext == expected.ciphertext + expected.tag)
    }

    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func nonceExhaustion(_ cipher: NoiseCipher) throws {
        var sender = try CipherState(cipher: cipher, key: Self.key)
        var receiver = try CipherState(cipher: cipher, key: Self.key)
        sender.setNonce(UInt64.max - 1)
        receiver.setNonce(UInt64.max - 1)
        // 2^64-2 is the last usable nonce; 2^64-1 is reserved.
        let last = try sender.encrypt(plaintext: [1])
        #expect(try receiver.decrypt(ciphertext: last) == [1])
        #expect(sender.nonce == UInt64.max)
        expectNoiseError(.nonceExhausted) { try sender.encrypt(plaintext: [2]) }
        expectNoiseError(.nonceExhausted) { try receiver.decrypt(ciphertext: last) }
        expectNoiseError(.nonceExhausted) {
            var buffer = [UInt8](repeating: 0, count: 17)
            try buffer.withUnsafeMutableBytes {
                try sender.encrypt(UnsafeRawBufferPointer(rebasing: $0[0..<1]), into: $0)
            }
        }
        #expect(sender.nonce == UInt64.max)
    }

    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func decryptFailureLeavesNonce(_ cipher: NoiseCipher) throws {
        var sender = try CipherState(cipher: cipher, key: Self.key)
        var receiver = try CipherState(cipher: cipher, key: Self.key)
        let good = try sender.encrypt(ad: [7], plaintext: Array("hello".utf8))
        for i in good.indices {
            var bad = good
            bad[i] ^= 0x10
            expectNoiseError(.decryptFailed) { try receiver.decrypt(ad: [7], ciphertext: bad) }
        }
        expectNoiseError(.decryptFailed) { try receiver.decrypt(ad: [8], ciphertext: good) }
        for length in 0..<16 {
            expectNoiseError(.invalidMessage) { try receiver.decrypt(ad: [7], ciphertext: Array(good[0..<length])) }
        }
        for length in 16..<good.count {
            expectNoiseError(.decryptFailed) { try receiver.decrypt(ad: [7], ciphertext: Array(good[0..<length])) }
        }
        #expect(receiver.nonce == 0)
        #expect(try receiver.decrypt(ad: [7], ciphertext: good) == Array("hello".utf8))
        #expect(receiver.nonce == 1)
    }

    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func transportLengthLimit(_ cipher: NoiseCipher) throws {
        var cs = try CipherState(cipher: cipher, key: Self.key)
        expectNoiseError(.invalidMessage) { try cs.encrypt(plaintext: [UInt8](repeating: 0, count: 65520)) }
        expectNoiseError(.invalidMessage) { try cs.decrypt(ciphertext: [UInt8](repeating: 0, count: 65536)) }
        #expect(cs.nonce == 0)
        #expect(try cs.encrypt(plaintext: [UInt8](repeating: 0, count: 65519)).count == 65535)
    }

    /// REKEY(k) = the first 32 bytes of ENCRYPT(k, 2^64-1, "", 32 zero bytes); n is unchanged.
    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func rekey(_ cipher: NoiseCipher) throws {
        var a = try CipherState(cipher: cipher, key: Self.key)
        var b = try CipherState(cipher: cipher, key: Self.key)
        _ = try a.encrypt(plaintext: [1])
        var c = try CipherState(cipher: cipher, key: Self.key)
        _ = try b.decrypt(ciphertext: c.encrypt(plaintext: [1]))
        try a.rekey()
        try b.rekey()
        #expect(a.nonce == 1 && b.nonce == 1)
        let maxNonce = [0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8)
        let algorithm: AEADAlgorithm = cipher == .chaChaPoly ? .chacha20poly1305 : .aes256gcm
        let newKey = try AEAD.seal(
            algorithm, key: Self.key, nonce: maxNonce, plaintext: [UInt8](repeating: 0, count: 32)
        ).ciphertext
        var reference = try CipherState(cipher: cipher, key: SecretBytes(copying: newKey))
        reference.setNonce(1)
        let message = try a.encrypt(plaintext: Array("after rekey".utf8))
        #expect(message == (try reference.encrypt(plaintext: Array("after rekey".utf8))))
        #expect(try b.decrypt(ciphertext: message) == Array("after rekey".utf8))
        expectNoiseError(.missingKey) {
            var empty = CipherState(cipher: cipher)
            try empty.rekey()
        }
    }

    /// The in-place API equals the array API, with separate and with aliased buffers.
    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func fastPathMatchesArrayAPI(_ cipher: NoiseCipher) throws {
        var arraySender = try CipherState(cipher: cipher, key: Self.key)
        var fastSender = arraySender
        var receiver = arraySender
        for size in [0, 1, 15, 16, 17, 63, 64, 65, 1000, 4096, 65535 - 16] {
            let plaintext = SecureRandom.bytes(size)
            let expected = try arraySender.encrypt(plaintext: plaintext)

            // Separate buffers.
            var out = [UInt8](repeating: 0, count: size + 16)
            try plaintext.withUnsafeBytes { p in try out.withUnsafeMutableBytes { try fastSender.encrypt(p, into: $0) }
            }
            #expect(out == expected, "size \(size)")
            var decrypted = [UInt8](repeating: 0, count: size)
            try out.withUnsafeBytes { c in try decrypted.withUnsafeMutableBytes { try receiver.decrypt(c, into: $0) } }
            #expect(decrypted == plaintext)

            // In place: one buffer, plaintext at its start.
            let expected2 = try arraySender.encrypt(plaintext: plaintext)
            var buffer = plaintext + [UInt8](repeating: 0, count: 16)
            try buffer.withUnsafeMutableBytes { b in
                try fastSender.encrypt(UnsafeRawBufferPointer(rebasing: b[0..<size]), into: b)
            }
            #expect(buffer == expected2, "in place, size \(size)")
            try buffer.withUnsafeMutableBytes { b in
                try receiver.decrypt(
                    UnsafeRawBufferPointer(b), into: UnsafeMutableRawBufferPointer(rebasing: b[0..<size]))
            }
            #expect(Array(buffer[0..<size]) == plaintext)
        }
        #expect(arraySender.nonce == fastSender.nonce && fastSender.nonce == receiver.nonce)
    }

    @Test(arguments: [NoiseCipher.chaChaPoly, .aesGCM])
    func fastPathRejectsTamperingAndBadSizes(_ cipher: NoiseCipher) throws {
        var sender = try CipherState(cipher: cipher, key: Self.key)
        var receiver = sender
        let plaintext = SecureRandom.bytes(100)
        let message = try sender.encrypt(plaintext: plaintext)
        for index in [0, 50, 99, 100, 115] {
            var bad = message
            bad[index] ^= 1
            var out = [UInt8](repeating: 0xEE, count: 100)
            expectNoiseError(.decryptFailed) {
                try bad.withUnsafeBytes { c in try out.withUnsafeMutableBytes { try receiver.decrypt(c, into: $0) } }
            }
            // No unauthenticated plaintext is left behind.
            #expect(out.allSatisfy { $0 == 0 } || out.allSatisfy { $0 == 0xEE })
            #expect(receiver.nonce == 0)
        }
        var small = [UInt8](repeating: 0, count: 99)
        expectNoiseError(.invalidArgument) {
            try message.withUnsafeBytes { c in try small.withUnsafeMutableBytes { try receiver.decrypt(c, into: $0) } }
        }
        var none: [UInt8] = []
        expectNoiseError(.invalidMessage) {
            try message.withUnsafeBytes { c in
                try none.withUnsafeMutableBytes {
                    try receiver.decrypt(UnsafeRawBufferPointer(rebasing: c[0..<15]), into: $0)
                }
            }
        }
        expectNoiseError(.invalidArgument) {
            try plaintext.withUnsafeBytes { p in try small.withUnsafeMutableBytes { try sender.encrypt(p, into: $0) } }
        }
        let huge = [UInt8](repeating: 0, count: 65520)
        var hugeOut = [UInt8](repeating: 0, count: 65536)
        expectNoiseError(.invalidMessage) {
            try huge.withUnsafeBytes { p in try hugeOut.withUnsafeMutableBytes { try sender.encrypt(p, into: $0) } }
        }
        var out = [UInt8](repeating: 0, count: 100)
        try message.withUnsafeBytes { c in try out.withUnsafeMutableBytes { try receiver.decrypt(c, into: $0) } }
        #expect(out == plaintext)
    }
}
