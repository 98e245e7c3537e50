internal import CGcrypt
internal import COpenSSL
internal import CSodium
import Synchronization

/// A streaming hash function, as Noise (§4.3) and HMAC need it.
public protocol HashFunction: Sendable {
    /// Output length in bytes (HASHLEN).
    static var outputLength: Int { get }
    /// Internal block length in bytes (BLOCKLEN), used by HMAC.
    static var blockLength: Int { get }
    init()
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// Returns the digest. The value must not be updated afterwards.
    mutating func finalize() -> [UInt8]
}

extension HashFunction {
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    public static func hash(_ bytes: some ContiguousBytes) -> [UInt8] {
        var h = Self()
        h.update(bytes)
        return h.finalize()
    }
}

/// SHA-256, through OpenSSL's libcrypto (`EVP_sha256`): it uses the CPU's SHA extensions, at
/// ~2.1 GB/s on this project's machine where libsodium 1.0.18's portable code took a fifth of a
/// LocalSend receiver's CPU (a LocalSend upload is hashed whole). Same digest: the tests hold it
/// to libsodium's `crypto_hash_sha256`, and the Noise SHA256 vectors to both.
public struct SHA256: HashFunction, @unchecked Sendable {
    public static let outputLength = 32
    public static let blockLength = 64
    private var state: DigestState

    public init() { state = DigestState() }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        uniquify()
        guard EVP_DigestUpdate(state.context, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("EVP_DigestUpdate(SHA-256) failed")
        }
    }

    public mutating func finalize() -> [UInt8] {
        uniquify()
        var out = [UInt8](repeating: 0, count: 32)
        var n: UInt32 = 0
        guard EVP_DigestFinal_ex(state.context, &out, &n) == 1, n == 32 else {
            fatalError("EVP_DigestFinal_ex(SHA-256) failed")
        }
        return out
    }

    private mutating func uniquify() {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
    }
}

/// An OpenSSL digest context, copied on write (a hash value may be copied mid-stream, e.g. to
/// read a digest so far and go on).
final class DigestState: @unchecked Sendable {
    let context: OpaquePointer

    init() {
        guard let c = EVP_MD_CTX_new(), EVP_DigestInit_ex(c, EVP_sha256(), nil) == 1 else {
            fatalError("OpenSSL could not start a SHA-256 digest")
        }
        context = c
    }

    private init(context: OpaquePointer) { self.context = context }

    func copy() -> DigestState {
        guard let c = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(c, context) == 1 else {
            fatalError("OpenSSL could not copy a SHA-256 digest")
        }
        return DigestState(context: c)
    }

    deinit { EVP_MD_CTX_free(context) }  // frees (and cleanses) the state
}

/// BLAKE2b with a 64-byte output (Noise's "BLAKE2b") or any length from 16 to 64 via `BLAKE2b(outputLength:)`.
public struct BLAKE2b: HashFunction, @unchecked Sendable {
    public static let outputLength = 64
    public static let blockLength = 128
    private var state: HeapState
    private let length: Int

    public init() { self.init(outputLength: 64) }

    /// - Parameter outputLength: 16...64 bytes (libsodium `crypto_generichash` limits).
    public init(outputLength: Int) {
        Sodium.ready()
        precondition((16...64).contains(outputLength), "BLAKE2b output length must be 16...64")
        length = outputLength
        state = HeapState(bytes: crypto_generichash_statebytes())
        crypto_generichash_init(
            OpaquePointer(state.pointer), nil, 0, outputLength)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        crypto_generichash_update(
            OpaquePointer(state.pointer),
            bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func finalize() -> [UInt8] {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        var out = [UInt8](repeating: 0, count: length)
        crypto_generichash_final(
            OpaquePointer(state.pointer), &out, length)
        return out
    }
}

/// BLAKE2b-256: the content hash of photos (32 bytes).
public struct ContentHash {
    public static func hasher() -> ContentHasher { ContentHasher() }
    public static func of(_ bytes: some ContiguousBytes) -> [UInt8] {
        var h = hasher()
        h.update(bytes)
        return h.finalize()
    }
}

/// Where the content hash is computed: two maintained implementations of the same function.
/// Every byte of every photo is hashed once on each side, so the faster one matters: on this
/// project's machine (AMD EPYC) libsodium's AVX2 BLAKE2b runs at ~0.78 GB/s and libgcrypt's
/// portable code at ~1.6 GB/s; on other CPUs the AVX2 code may win.
public enum ContentHashBackend: String, Sendable, CaseIterable {
    case sodium, gcrypt

    /// The faster of the two on this CPU, measured once (a few milliseconds, at first use):
    /// the least of three timings of each on 1 MiB. Both give the same digest.
    public static var fastest: ContentHashBackend {
        measured.withLock { m in
            if let m { return m }
            let choice = measure()
            m = choice
            return choice
        }
    }

    private static let measured = Mutex<ContentHashBackend?>(nil)

    private static func measure() -> ContentHashBackend {
        guard lf_gcrypt_start() == 0 else { return .sodium }
        let sample = [UInt8](repeating: 0x5a, count: 1 << 20)
        func best(_ backend: ContentHashBackend) -> Duration {
            (0..<3).map { _ in
                ContinuousClock().measure {
                    var h = ContentHasher(backend: backend)
                    h.update(sample)
                    _ = h.finalize()
                }
            }.min()!
        }
        return best(.gcrypt) < best(.sodium) ? .gcrypt : .sodium
    }
}

/// An incremental BLAKE2b-256 on `ContentHashBackend.fastest` (or the one named). A value:
/// a copy hashes on independently of the original.
public struct ContentHasher: HashFunction, @unchecked Sendable {
    public static let outputLength = 32
    public static let blockLength = 128
    private var sodium: BLAKE2b?
    private var gcrypt: GcryptState?

    public init() { self.init(backend: .fastest) }

    public init(backend: ContentHashBackend) {
        if backend == .gcrypt, let state = GcryptState() {
            gcrypt = state
        } else {
            sodium = BLAKE2b(outputLength: 32)
        }
    }

    public var backend: ContentHashBackend { gcrypt == nil ? .sodium : .gcrypt }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if gcrypt != nil {
            if !isKnownUniquelyReferenced(&gcrypt!) { gcrypt = gcrypt!.copy() }
            lf_gcrypt_blake2b256_update(gcrypt!.handle, bytes.baseAddress!, bytes.count)
        } else {
            sodium!.update(bytes)
        }
    }

    public mutating func finalize() -> [UInt8] {
        guard gcrypt != nil else { return sodium!.finalize() }
        // libgcrypt finalizes the state it reads: a copy that shares it must not see that.
        if !isKnownUniquelyReferenced(&gcrypt!) { gcrypt = gcrypt!.copy() }
        var out = [UInt8](repeating: 0, count: 32)
        lf_gcrypt_blake2b256_digest(gcrypt!.handle, &out)
        return out
    }
}

/// A libgcrypt hash handle, freed (and wiped by libgcrypt) with its last owner.
final class GcryptState: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    init?() {
        guard let h = lf_gcrypt_blake2b256_open() else { return nil }
        handle = h
    }

    private init(handle: UnsafeMutableRawPointer) { self.handle = handle }

    func copy() -> GcryptState {
        guard let c = lf_gcrypt_blake2b256_copy(handle) else {
            fatalError("libgcrypt could not copy a hash state (out of memory)")
        }
        return GcryptState(handle: c)
    }

    deinit { lf_gcrypt_blake2b256_free(handle) }
}

/// HMAC (RFC 2104) over any `HashFunction`, as Noise §4.3 defines HMAC-HASH.
public enum HMAC<H: HashFunction> {
    public static func authenticate(key: some ContiguousBytes, message: some ContiguousBytes) -> [UInt8] {
        authenticate(key: key, parts: [message.withUnsafeBytes { Array($0) }])
    }

    public static func authenticate(key: some ContiguousBytes, parts: [[UInt8]]) -> [UInt8] {
        var k = key.withUnsafeBytes { Array($0) }
        if k.count > H.blockLength { k = H.hash(k) }
        k += [UInt8](repeating: 0, count: H.blockLength - k.count)
        var ipad = k.map { $0 ^ 0x36 }
        var opad = k.map { $0 ^ 0x5c }
        defer {
            secureZero(&k)
            secureZero(&ipad)
            secureZero(&opad)
        }
        var inner = H()
        inner.update(ipad)
        for p in parts { inner.update(p) }
        var innerDigest = inner.finalize()
        defer { secureZero(&innerDigest) }
        var outer = H()
        outer.update(opad)
        outer.update(innerDigest)
        return outer.finalize()
    }
}

/// Heap storage for libsodium state structs, which require more alignment than Swift guarantees
/// for imported structs (BLAKE2b's state is declared 64-byte aligned).
final class HeapState: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let bytes: Int

    init(bytes: Int) {
        self.bytes = bytes
        pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
    }

    func copy() -> HeapState {
        let c = HeapState(bytes: bytes)
        c.pointer.copyMemory(from: pointer, byteCount: bytes)
        return c
    }

    deinit {
        sodium_memzero(pointer, bytes)
        pointer.deallocate()
    }
}

extension BLAKE2b {
    /// Keyed BLAKE2b (libsodium `crypto_generichash` with a key): a MAC, and the vault's blind
    /// index of album names.
    public static func keyed(_ message: some ContiguousBytes, key: SecretBytes, outputLength: Int = 32) -> [UInt8] {
        Sodium.ready()
        precondition(
            (16...64).contains(outputLength) && (16...64).contains(key.count),
            "BLAKE2b key and output are 16...64 bytes")
        var out = [UInt8](repeating: 0, count: outputLength)
        message.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                _ = crypto_generichash(
                    &out, outputLength, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
            }
        }
        return out
    }
}
