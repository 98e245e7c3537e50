import Foundation
import LocafotoCrypto
import LocafotoFormats

/// This node's long-term identity: an Ed25519 key (signatures; its X25519 form is the Noise
/// static key), stored as a 32-byte seed in `identity.json`, mode 0600.
public struct Identity: Sendable {
    public let signingKey: SigningKey
    public let agreementKey: X25519SecretKey
    public var publicKey: SigningPublicKey { signingKey.publicKey }
    public var fingerprint: Fingerprint { Fingerprint(publicKey: signingKey.publicKey) }

    public init(signingKey: SigningKey) throws {
        self.signingKey = signingKey
        agreementKey = try signingKey.agreementKey()
    }

    private struct File: Codable {
        var version: Int
        var ed25519Seed: String  // base64
    }

    /// Loads the identity, creating it (0600, atomically) on first use.
    public static func loadOrCreate(at path: String) throws -> Identity {
        if FileManager.default.fileExists(atPath: path) { return try load(at: path) }
        let key = SigningKey.generate()
        var seed = key.seed.unsafeCopy()
        defer { secureZero(&seed) }
        var json = try JSONEncoder().encode(File(version: 1, ed25519Seed: Data(seed).base64EncodedString()))
        defer { json.resetBytes(in: 0..<json.count) }
        try writeSecretFile(path, json)
        return try Identity(signingKey: key)
    }

    public static func load(at path: String) throws -> Identity {
        var st = stat()
        guard stat(path, &st) == 0 else { throw AgentError(.io, "cannot read identity file \(path)") }
        if st.st_mode & 0o077 != 0 {
            throw AgentError(.insecure, "identity file \(path) is readable by others (mode \(String(st.st_mode & 0o777, radix: 8))); run: chmod 600 \(path)")
        }
        guard st.st_size < 4096, var data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.corrupt, "identity file \(path) is too large or unreadable")
        }
        defer { data.resetBytes(in: 0..<data.count) }
        guard let file = try? JSONDecoder().decode(File.self, from: data), file.version == 1,
            var seed = Data(base64Encoded: file.ed25519Seed).map({ [UInt8]($0) }), seed.count == 32
        else { throw AgentError(.corrupt, "identity file \(path) is not a valid Locafoto identity") }
        let key = try SigningKey(seed: SecretBytes(consuming: &seed))
        return try Identity(signingKey: key)
    }
}

/// Writes a file readable only by its owner: created 0600 under a temporary name, fsynced,
/// then renamed into place, so a crash never leaves a half-written or world-readable secret.
func writeSecretFile(_ path: String, _ data: Data) throws {
    let tmp = path + ".tmp-\(getpid())"
    let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw AgentError(.io, "cannot create \(tmp): \(String(cString: strerror(errno)))") }
    let ok = data.withUnsafeBytes { b in write(fd, b.baseAddress, b.count) == b.count } && fsync(fd) == 0
    close(fd)
    guard ok, rename(tmp, path) == 0 else {
        unlink(tmp)
        throw AgentError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
    }
}
