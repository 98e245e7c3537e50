import LocafotoCrypto

/// §5.2: the chaining key `ck`, the handshake hash `h` and the handshake's CipherState.
/// `ck` and every HKDF output are kept in `SecretBytes`; `h` is public (it goes into AD).
struct SymmetricState {
    let hash: NoiseHash
    private(set) var cipherState: CipherState
    private var ck: SecretBytes
    private(set) var h: [UInt8]

    /// InitializeSymmetric(protocol_name).
    init(protocolName: String, cipher: NoiseCipher, hash: NoiseHash) {
        self.hash = hash
        let name = Array(protocolName.utf8)
        // A name that fits is used as is, zero-padded to HASHLEN; a longer one is hashed.
        if name.count <= hash.hashLength {
            h = name + [UInt8](repeating: 0, count: hash.hashLength - name.count)
        } else {
            h = hash.hash([name])
        }
        ck = SecretBytes(copying: h)
        cipherState = CipherState(cipher: cipher)
    }

    /// HKDF(chaining_key, input_key_material, num_outputs) of §4.3, with HMAC-HASH.
    private func hkdf(_ ikm: some ContiguousBytes, outputs: Int) -> [SecretBytes] {
        var input = ikm.withUnsafeBytes { Array($0) }
        var tempKey = hash.hmac(key: ck, [input])
        secureZero(&input)
        let tempKeySecret = SecretBytes(consuming: &tempKey)
        // output_i = HMAC-HASH(temp_key, output_{i-1} ‖ byte(i)), output_0 empty.
        var result: [SecretBytes] = []
        var previous: [UInt8] = []
        for i in 1...outputs {
            let output = hash.hmac(key: tempKeySecret, [previous, [UInt8(i)]])
            secureZero(&previous)
            previous = output
            result.append(SecretBytes(copying: output))
        }
        secureZero(&previous)
        return result
    }

    /// A cipher key from an HKDF output: the first 32 bytes when HASHLEN is 64 (§5.2).
    private static func truncatedKey(_ output: SecretBytes) -> SecretBytes {
        output.count == 32
            ? output : output.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
    }

    /// MixKey(input_key_material).
    mutating func mixKey(_ ikm: some ContiguousBytes) {
        let out = hkdf(ikm, outputs: 2)
        ck = out[0]
        // Cannot fail: the key is exactly 32 bytes.
        try! cipherState.initializeKey(Self.truncatedKey(out[1]))
    }

    /// MixHash(data): h = HASH(h ‖ data).
    mutating func mixHash(_ data: [UInt8]) {
        h = hash.hash([h, data])
    }

    /// MixKeyAndHash(input_key_material), for "psk" tokens.
    mutating func mixKeyAndHash(_ ikm: some ContiguousBytes) {
        let out = hkdf(ikm, outputs: 3)
        ck = out[0]
        mixHash(out[1].unsafeCopy())  // temp_h is not secret once hashed into h (which is public)
        try! cipherState.initializeKey(Self.truncatedKey(out[2]))
    }

    /// EncryptAndHash(plaintext): the handshake hash is the AD, the ciphertext is then hashed in.
    mutating func encryptAndHash(_ plaintext: [UInt8]) throws -> [UInt8] {
        let ciphertext = try cipherState.encrypt(ad: h, plaintext: plaintext)
        mixHash(ciphertext)
        return ciphertext
    }

    /// DecryptAndHash(ciphertext).
    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws -> [UInt8] {
        let plaintext = try cipherState.decrypt(ad: h, ciphertext: ciphertext)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): the two transport CipherStates, c1 for initiator → responder, c2 the other way.
    func split() -> (CipherState, CipherState) {
        let out = hkdf([UInt8](), outputs: 2)
        // Cannot fail: both keys are exactly 32 bytes.
        let c1 = try! CipherState(cipher: cipherState.cipher, key: Self.truncatedKey(out[0]))
        let c2 = try! CipherState(cipher: cipherState.cipher, key: Self.truncatedKey(out[1]))
        return (c1, c2)
    }

    /// Zeroes `ck` and the handshake cipher key: they are not needed after Split() or an error.
    mutating func clear() {
        ck.withUnsafeMutableBytes { secureZero($0) }
        cipherState.clear()
    }
}
