internal import COpenSSL

/// The two AEADs that touch every byte of every photo (the Noise transport, the `.locaphoto`
/// bundle stream), through OpenSSL's EVP interface instead of libsodium.
///
/// Why: Debian 12's libsodium 1.0.18 does ChaCha20-Poly1305 at ~1.6 GB/s on this project's
/// machine, OpenSSL 3.0 at ~3.7 GB/s (AVX-512) and AES-256-GCM at ~5 GB/s, with a fresh context
/// per 64 KiB frame as the transport uses it; two AEAD passes per byte on each side were a third
/// of a transfer's CPU. Same algorithms (RFC 8439, NIST SP 800-38D), same bytes: the tests check
/// every path against libsodium's one-shot functions, and the Noise and RFC vectors still pass.
/// Keys, signatures, key exchange, sealed boxes, KDFs and hashes stay on libsodium.
enum BulkAEAD {
    private static func cipher(_ algorithm: AEADAlgorithm) -> OpaquePointer {
        switch algorithm {
        case .aes256gcm: EVP_aes_256_gcm()
        case .chacha20poly1305: EVP_chacha20_poly1305()
        }
    }

    /// A cipher context keyed for one message (or one stream). 12-byte nonces are both
    /// algorithms' default IV length, so no IV-length control is needed.
    static func context(
        _ algorithm: AEADAlgorithm, encrypt: Bool, key: UnsafePointer<UInt8>, nonce: UnsafePointer<UInt8>
    ) -> OpaquePointer {
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("OpenSSL: out of memory for a cipher context") }
        let rc =
            encrypt
            ? EVP_EncryptInit_ex(ctx, cipher(algorithm), nil, key, nonce)
            : EVP_DecryptInit_ex(ctx, cipher(algorithm), nil, key, nonce)
        precondition(rc == 1, "OpenSSL refused to initialise \(algorithm.name)")
        return ctx
    }

    /// Feeds `count` bytes through the context: `output` nil for additional data. In place
    /// (`output == input`) is allowed for both (they are stream modes).
    static func update(
        _ ctx: OpaquePointer, encrypt: Bool, input: UnsafePointer<UInt8>, output: UnsafeMutablePointer<UInt8>?,
        count: Int
    ) {
        var done = 0
        while done < count {
            let n = Int32(min(count - done, 1 << 30))
            var written: Int32 = 0
            let rc =
                encrypt
                ? EVP_EncryptUpdate(ctx, output.map { $0 + done }, &written, input + done, n)
                : EVP_DecryptUpdate(ctx, output.map { $0 + done }, &written, input + done, n)
            precondition(rc == 1 && (output == nil || written == n), "OpenSSL AEAD update failed")
            done += Int(n)
        }
    }

    /// Ends an encryption and writes the 16-byte tag.
    static func finishSeal(_ ctx: OpaquePointer, tag: UnsafeMutablePointer<UInt8>) {
        var written: Int32 = 0
        var scratch: UInt8 = 0
        precondition(EVP_EncryptFinal_ex(ctx, &scratch, &written) == 1 && written == 0, "OpenSSL AEAD final failed")
        precondition(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1, "OpenSSL did not give the tag")
    }

    /// Ends a decryption: whether `tag` authenticates everything fed in.
    static func finishOpen(_ ctx: OpaquePointer, tag: [UInt8]) -> Bool {
        var expected = tag
        guard expected.count == 16, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, &expected) == 1 else {
            return false
        }
        var written: Int32 = 0
        var scratch: UInt8 = 0
        return EVP_DecryptFinal_ex(ctx, &scratch, &written) > 0
    }

    static func free(_ ctx: OpaquePointer) {
        EVP_CIPHER_CTX_free(ctx)  // cleanses the key schedule
    }

    /// Additional data, then `input` into `output` (same length; may be the same memory).
    private static func feed(
        _ ctx: OpaquePointer, encrypt: Bool, aad: [UInt8], input: UnsafeRawBufferPointer,
        output: UnsafeMutableRawBufferPointer
    ) {
        precondition(input.count == output.count)
        if !aad.isEmpty {
            aad.withUnsafeBufferPointer {
                update(ctx, encrypt: encrypt, input: $0.baseAddress!, output: nil, count: $0.count)
            }
        }
        if let i = input.baseAddress, let o = output.baseAddress, input.count > 0 {
            update(
                ctx, encrypt: encrypt, input: i.assumingMemoryBound(to: UInt8.self),
                output: o.assumingMemoryBound(to: UInt8.self), count: input.count)
        }
    }

    /// One message: `input` encrypted into `output`; returns the tag.
    static func seal(
        _ algorithm: AEADAlgorithm, key: UnsafePointer<UInt8>, nonce: [UInt8], input: UnsafeRawBufferPointer,
        output: UnsafeMutableRawBufferPointer, aad: [UInt8]
    ) -> [UInt8] {
        let ctx = nonce.withUnsafeBufferPointer { context(algorithm, encrypt: true, key: key, nonce: $0.baseAddress!) }
        defer { free(ctx) }
        feed(ctx, encrypt: true, aad: aad, input: input, output: output)
        var tag = [UInt8](repeating: 0, count: 16)
        finishSeal(ctx, tag: &tag)
        return tag
    }

    /// One message; false when the tag does not verify. `output` then held unauthenticated
    /// bytes, and is zeroed before this returns.
    static func open(
        _ algorithm: AEADAlgorithm, key: UnsafePointer<UInt8>, nonce: [UInt8], input: UnsafeRawBufferPointer,
        output: UnsafeMutableRawBufferPointer, aad: [UInt8], tag: [UInt8]
    ) -> Bool {
        let ctx = nonce.withUnsafeBufferPointer { context(algorithm, encrypt: false, key: key, nonce: $0.baseAddress!) }
        defer { free(ctx) }
        feed(ctx, encrypt: false, aad: aad, input: input, output: output)
        guard finishOpen(ctx, tag: tag) else {
            secureZero(output)
            return false
        }
        return true
    }
}
