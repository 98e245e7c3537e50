import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoNode

/// The certificate this node shows LocalSend devices, kept in its home
/// (`localsend/certificate.der` and `localsend/key.der`, 0600 in a 0700 folder): the apps pin
/// its fingerprint, so it must survive restarts. Made at the first `localsend on`.
package enum LocalSendIdentity {
    static let disk = FileSystem(failures: HomeFileFailures())

    package static func directory(in home: NodeHome) -> String { home.directory + "/localsend" }

    /// The fingerprint of the certificate in `home`; nil when there is none (or it is unreadable).
    package static func existingFingerprint(in home: NodeHome) -> String? {
        let path = directory(in: home) + "/certificate.der"
        guard disk.exists(path), let der = try? disk.readBounded(path, limit: 16 << 10) else { return nil }
        return TLSCertificate.fingerprint(of: der)
    }

    /// The certificate in `home`, made now if there is none. A damaged one is an error, never
    /// silently replaced: the devices that pinned it would see another.
    package static func loadOrCreate(in home: NodeHome, alias: String) throws -> TLSCertificate {
        let dir = directory(in: home)
        try disk.makeDirectory(dir, tightening: true, followingLinks: false)
        let certPath = dir + "/certificate.der"
        let keyPath = dir + "/key.der"
        switch (disk.exists(certPath), disk.exists(keyPath)) {
        case (true, true):
            var key = try disk.readBounded(keyPath, limit: 16 << 10)
            let der = try disk.readBounded(certPath, limit: 16 << 10)
            do {
                return try TLSCertificate(der: der, privateKeyDER: SecretBytes(consuming: &key))
            } catch let e as CryptoError {
                throw AgentError(
                    .corrupt,
                    "the LocalSend certificate in \(dir) is damaged (\(e.message)); remove that folder to make a new one (LocalSend devices will then see a new certificate)",
                    cause: e)
            }
        case (false, false):
            let cert = try TLSCertificate.make(commonName: alias)
            // The key first: a certificate without its key is never left behind.
            try cert.privateKeyDER.withUnsafeBytes { raw in
                var copy = Array(raw)
                defer { secureZero(&copy) }
                try disk.writeNew(keyPath, copy)
            }
            try disk.writeNew(certPath, cert.der)
            try disk.syncDirectory(dir)
            return cert
        default:
            throw AgentError(
                .corrupt,
                "\(dir) holds a LocalSend certificate without its key, or a key without its certificate; remove that folder to make a new pair"
            )
        }
    }
}

/// Files in the node's home: a failed call is `AgentError.io` naming the path and errno's text.
struct HomeFileFailures: FileFailures {
    func failed(_ what: String, _ path: String, errno: Int32) -> any Error {
        AgentError(.io, "could not \(what) \(path): \(FileSystem.errorText(errno))")
    }

    func damaged(_ path: String, _ message: String) -> any Error { AgentError(.corrupt, message) }
}
