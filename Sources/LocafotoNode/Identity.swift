import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoVault

/// This node's long-term identity: an Ed25519 key (signatures; its X25519 form is the Noise
/// static key), stored as a 32-byte seed in `identity.json`, mode 0600.
public struct Identity: Sendable {
    public let signingKey: SigningKey
    public let agreementKey: X25519SecretKey
    /// The X25519 form of the public key, what is sealed to this node: kept, because the
    /// conversion (~45 µs) would otherwise run for every photo of every send.
    public let agreementPublicKey: X25519PublicKey
    public var publicKey: SigningPublicKey { signingKey.publicKey }
    public var fingerprint: Fingerprint { Fingerprint(publicKey: signingKey.publicKey) }

    public init(signingKey: SigningKey) throws {
        self.signingKey = signingKey
        agreementKey = try signingKey.agreementKey()
        agreementPublicKey = try signingKey.publicKey.agreementKey()
    }

    /// How identity.json keeps the seed: in clear (version 1, the default: an unattended node or
    /// a relay can start without anyone typing a passphrase) or wrapped under the vault master
    /// key (version 2, `locafoto identity protect`: the agent needs the vault passphrase to start).
    public enum Protection: String, Sendable, Codable {
        case clear
        case vault
    }

    /// What identity.json holds, read without any key. The public key is in clear in both
    /// versions, so the fingerprint can be shown while the vault is locked.
    public enum Stored: Sendable {
        case clear(Identity)
        case protected(publicKey: SigningPublicKey, wrappedSeed: [UInt8])

        public var publicKey: SigningPublicKey {
            switch self {
            case .clear(let i): i.publicKey
            case .protected(let pk, _): pk
            }
        }
        public var fingerprint: Fingerprint { Fingerprint(publicKey: publicKey) }
        public var protection: Protection {
            if case .protected = self { return .vault }
            return .clear
        }
    }

    private struct ClearFile: Decodable {
        var version: Int
        var ed25519Seed: String  // base64
    }

    private struct ProtectedFile: Codable {
        var version: Int
        var protection: String
        var publicKey: String  // base64, 32 bytes
        var wrappedSeed: String  // base64, KeyWrap output: nonce 24 ‖ ciphertext 32 ‖ tag 16
    }

    private struct VersionOnly: Decodable { var version: Int }

    /// Loads the identity, creating it (0600, atomically, in clear) on first use. A protected
    /// identity is refused here (see `load(at:vault:)`).
    public static func loadOrCreate(at path: String) throws -> Identity {
        if FileManager.default.fileExists(atPath: path) { return try load(at: path) }
        let key = SigningKey.generate()
        try writeClear(key, to: path)
        return try Identity(signingKey: key)
    }

    /// A clear (version 1) identity; a protected one throws `vaultLocked` with what to do.
    public static func load(at path: String) throws -> Identity {
        switch try read(at: path) {
        case .clear(let identity): return identity
        case .protected:
            throw AgentError(
                .vaultLocked,
                "the node identity \(path) is protected by the vault passphrase; it opens only with the vault unlocked")
        }
    }

    /// Either kind: a protected identity is unwrapped with `vault`, which must be unlocked.
    public static func load(at path: String, vault: Vault) throws -> Identity {
        switch try read(at: path) {
        case .clear(let identity): return identity
        case .protected(let publicKey, let wrapped):
            return try unwrap(wrapped, publicKey: publicKey, vault: vault, path: path)
        }
    }

    /// Whether identity.json is protected; nil when there is none or it cannot be read (the
    /// agent's own load then says why).
    public static func storedProtection(at path: String) -> Protection? {
        (try? read(at: path))?.protection
    }

    /// Reads and checks identity.json (owner-only mode, size, format) without any key.
    public static func read(at path: String) throws -> Stored {
        var st = stat()
        guard stat(path, &st) == 0 else { throw AgentError(.io, "cannot read identity file \(path)") }
        if st.st_mode & 0o077 != 0 {
            throw AgentError(
                .insecure,
                "identity file \(path) is readable by others (mode \(String(st.st_mode & 0o777, radix: 8))); run: chmod 600 \(path)"
            )
        }
        guard st.st_size < 4096, var data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.corrupt, "identity file \(path) is too large or unreadable")
        }
        defer { data.resetBytes(in: 0..<data.count) }
        let invalid = AgentError(.corrupt, "identity file \(path) is not a valid Locafoto identity")
        let decoder = JSONDecoder()
        switch (try? decoder.decode(VersionOnly.self, from: data))?.version {
        case 1:
            // JSONDecoder's String for the base64 seed cannot be zeroed; the Data it came from and
            // the decoded bytes are.
            guard let file = try? decoder.decode(ClearFile.self, from: data),
                var seed = Data(base64Encoded: file.ed25519Seed).map({ [UInt8]($0) }), seed.count == 32
            else { throw invalid }
            let key = try SigningKey(seed: SecretBytes(consuming: &seed))
            return .clear(try Identity(signingKey: key))
        case 2:
            guard let file = try? decoder.decode(ProtectedFile.self, from: data),
                file.protection == Protection.vault.rawValue,
                let pk = Data(base64Encoded: file.publicKey), pk.count == 32,
                let wrapped = Data(base64Encoded: file.wrappedSeed), wrapped.count == KeyWrap.overhead + 32,
                let publicKey = try? SigningPublicKey(bytes: [UInt8](pk))
            else { throw invalid }
            return .protected(publicKey: publicKey, wrappedSeed: [UInt8](wrapped))
        case .some(let v):
            throw AgentError(
                .unsupported,
                "identity file \(path) has version \(v), which this Locafoto does not know; use a newer one")
        case nil:
            throw invalid
        }
    }

    /// Rewrites identity.json as `protection` (atomic replace, 0600: a crash leaves the old file
    /// or the new one, both complete). `vault` must be unlocked. With no identity yet, a new one
    /// is made and written straight in the wanted form (a protected identity never touches the
    /// disk in clear). Returns the identity as stored now and whether the file changed.
    public static func setProtection(
        _ protection: Protection, at path: String, vault: Vault
    ) throws -> (stored: Stored, changed: Bool) {
        let key: SigningKey
        if FileManager.default.fileExists(atPath: path) {
            let current = try read(at: path)
            if current.protection == protection { return (current, false) }
            switch current {
            case .clear(let identity): key = identity.signingKey
            case .protected(let publicKey, let wrapped):
                key = try unwrap(wrapped, publicKey: publicKey, vault: vault, path: path).signingKey
            }
        } else {
            key = SigningKey.generate()
        }
        switch protection {
        case .clear:
            try writeClear(key, to: path)
        case .vault:
            let wrapped: [UInt8]
            do {
                wrapped = try vault.wrapIdentitySeed(key.seed, publicKey: key.publicKey.bytes)
                // Checked before the old file is replaced: what is written must open again.
                let back = try vault.unwrapIdentitySeed(wrapped, publicKey: key.publicKey.bytes)
                guard back.constantTimeEquals(key.seed) else {
                    throw AgentError(
                        .internalError, "the wrapped identity did not open again; identity.json left unchanged")
                }
            } catch let e as VaultError {
                throw AgentError(e)
            }
            let file = ProtectedFile(
                version: 2, protection: Protection.vault.rawValue,
                publicKey: Data(key.publicKey.bytes).base64EncodedString(),
                wrappedSeed: Data(wrapped).base64EncodedString())
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try writeSecretFile(path, try encoder.encode(file))
        }
        return (try read(at: path), true)
    }

    private static func unwrap(_ wrapped: [UInt8], publicKey: SigningPublicKey, vault: Vault, path: String) throws
        -> Identity
    {
        let seed: SecretBytes
        do {
            seed = try vault.unwrapIdentitySeed(wrapped, publicKey: publicKey.bytes)
        } catch let e as VaultError {
            throw AgentError(e)
        }
        let key = try SigningKey(seed: seed)
        // The aad already binds the seed to this public key; this also catches a file made by a
        // buggy writer that paired a seed with the wrong key.
        guard key.publicKey == publicKey else {
            throw AgentError(.corrupt, "identity file \(path): the protected seed does not match its public key")
        }
        return try Identity(signingKey: key)
    }

    /// Version 1: `{"version":1,"ed25519Seed":"<base64>"}`, assembled from bytes so that every
    /// buffer that held the seed's base64 can be zeroed (a Swift String could not be).
    private static func writeClear(_ key: SigningKey, to path: String) throws {
        var seed = key.seed.withUnsafeBytes { Data($0) }
        defer { seed.resetBytes(in: 0..<seed.count) }
        var b64 = seed.base64EncodedData()
        defer { b64.resetBytes(in: 0..<b64.count) }
        var json = Data("{\"ed25519Seed\":\"".utf8) + b64 + Data("\",\"version\":1}".utf8)
        defer { json.resetBytes(in: 0..<json.count) }
        try writeSecretFile(path, json)
    }
}

/// Writes a file readable only by its owner: created 0600 under a temporary name, fsynced,
/// then renamed into place, so a crash never leaves a half-written or world-readable secret.
/// The temporary name is unique and created exclusively (never through a link, never over a
/// file that is there), as everywhere a file is written beside others.
package func writeSecretFile(_ path: String, _ data: Data) throws {
    let dir = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    var tmp = ""
    var fd: Int32 = -1
    for _ in 0..<8 {
        tmp = (dir.isEmpty ? "." : dir) + "/." + name + "." + Hex.encode(SecureRandom.bytes(6)) + ".partial"
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 || errno != EEXIST { break }
    }
    guard fd >= 0 else {
        throw AgentError(.io, "cannot write in \(dir.isEmpty ? "." : dir): \(String(cString: strerror(errno)))")
    }
    let ok = data.withUnsafeBytes { b in write(fd, b.baseAddress, b.count) == b.count } && fsync(fd) == 0
    close(fd)
    guard ok, rename(tmp, path) == 0 else {
        unlink(tmp)
        throw AgentError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
    }
}
