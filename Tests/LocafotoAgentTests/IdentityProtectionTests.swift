import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoRelay
import LocafotoTestSupport
import LocafotoVault
import Logging
import Testing

@testable import LocafotoAgent
@testable import LocafotoNode
@testable import LocafotoRelayServer

/// `locafoto identity protect` / `unprotect` on real homes (identity.json, vault, home lock),
/// and an agent starting with a protected identity.
@Suite("Protected node identity")
struct IdentityProtectionTests {
    static let passphrase = "correct horse battery staple"
    static func secret(_ s: String = passphrase) -> SecretBytes { SecretBytes(copying: Array(s.utf8)) }

    /// A home with a vault and a clear identity, as a node has after its first start.
    final class Home {
        let home: NodeHome
        init() throws {
            home = NodeHome(
                directory: FileManager.default.temporaryDirectory.appendingPathComponent(
                    "lf-idp-\(UUID().uuidString.prefix(8))"
                ).path)
            try home.prepare()
            _ = try Vault.create(
                at: home.vaultDirectory, passphrase: IdentityProtectionTests.secret(), kdf: .interactive)
            _ = try Identity.loadOrCreate(at: home.identityFile)
        }
        deinit { try? FileManager.default.removeItem(atPath: home.directory) }
        var file: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: home.identityFile)))) ?? [] }
        func unlockedVault(_ pass: String = IdentityProtectionTests.passphrase) throws -> Vault {
            let v = try Vault.open(at: home.vaultDirectory)
            try v.unlock(passphrase: IdentityProtectionTests.secret(pass))
            return v
        }
    }

    @Test func protectLeavesNoSeedInClearAndKeepsTheFingerprint() throws {
        let h = try Home()
        let before = try Identity.load(at: h.home.identityFile)
        let seed = before.signingKey.seed.unsafeCopy()
        let seedBase64 = Array(Data(seed).base64EncodedString().utf8)
        #expect(h.file.containsSubsequence(seedBase64))  // the test can see a clear seed

        let out = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        #expect(out.changed && out.protection == .vault && out.fingerprint == before.fingerprint.description)
        let file = h.file
        #expect(!file.containsSubsequence(seedBase64))
        #expect(!file.containsSubsequence(seed))
        #expect(!file.containsSubsequence(Array("ed25519Seed".utf8)))
        #expect(file.containsSubsequence(Array(#""version":2"#.utf8)))
        let mode =
            (try FileManager.default.attributesOfItem(atPath: h.home.identityFile)[.posixPermissions] as? NSNumber)?
            .intValue
        #expect(mode == 0o600)
        // No temporary file left beside it.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: h.home.directory).filter { $0.contains(".tmp-") }
                .isEmpty)

        // The fingerprint without any key; the key only with the vault.
        #expect(try Identity.read(at: h.home.identityFile).fingerprint == before.fingerprint)
        #expect(Identity.storedProtection(at: h.home.identityFile) == .vault)
        #expect(agentCode { _ = try Identity.load(at: h.home.identityFile) } == .vaultLocked)
        let opened = try Identity.load(at: h.home.identityFile, vault: try h.unlockedVault())
        #expect(opened.signingKey.seed.constantTimeEquals(before.signingKey.seed))

        // Again: nothing to do, nothing written.
        #expect(try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret()).changed == false)
        #expect(h.file == file)
    }

    @Test func unprotectRoundTrip() throws {
        let h = try Home()
        let before = try Identity.load(at: h.home.identityFile)
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        let out = try IdentityProtection.set(.clear, home: h.home, passphrase: Self.secret())
        #expect(out.changed && out.protection == .clear)
        let after = try Identity.load(at: h.home.identityFile)
        #expect(after.signingKey.seed.constantTimeEquals(before.signingKey.seed))
        #expect(Identity.storedProtection(at: h.home.identityFile) == .clear)
    }

    @Test func aWrongPassphraseChangesNothing() throws {
        let h = try Home()
        let file = h.file
        #expect(
            agentCode {
                _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret("not the passphrase"))
            } == .refused)
        #expect(h.file == file)
    }

    @Test func anotherVaultsKeyIsRefused() throws {
        let a = try Home()
        let b = try Home()
        _ = try IdentityProtection.set(.vault, home: a.home, passphrase: Self.secret())
        // b's vault has the same passphrase but its own master key.
        #expect(agentCode { _ = try Identity.load(at: a.home.identityFile, vault: try b.unlockedVault()) } == .corrupt)
        try Data(a.file).write(to: URL(fileURLWithPath: b.home.identityFile))
        #expect(
            agentCode { _ = try IdentityProtection.set(.clear, home: b.home, passphrase: Self.secret()) } == .corrupt)
    }

    @Test func aSwappedPublicKeyIsRefused() throws {
        let h = try Home()
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        var json = try JSONSerialization.jsonObject(with: Data(h.file)) as! [String: Any]
        json["publicKey"] = Data(SigningKey.generate().publicKey.bytes).base64EncodedString()
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: h.home.identityFile))
        #expect(agentCode { _ = try Identity.load(at: h.home.identityFile, vault: try h.unlockedVault()) } == .corrupt)
    }

    @Test func notWhileAnAgentHoldsTheHome() throws {
        let h = try Home()
        let lock = try HomeLock.acquire(h.home)
        defer { lock.release() }
        #expect(
            agentCode { _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret()) } == .conflict)
        #expect(Identity.storedProtection(at: h.home.identityFile) == .clear)
    }

    @Test func needsAVault() throws {
        let home = NodeHome(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent(
                "lf-idp-\(UUID().uuidString.prefix(8))"
            ).path)
        defer { try? FileManager.default.removeItem(atPath: home.directory) }
        #expect(agentCode { _ = try IdentityProtection.set(.vault, home: home, passphrase: Self.secret()) } == .noVault)
    }

    /// `vault passwd` keeps the master key: the identity opens with the new passphrase.
    @Test func aPassphraseChangeKeepsTheProtectedIdentity() throws {
        let h = try Home()
        let before = try Identity.load(at: h.home.identityFile)
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        try h.unlockedVault().changePassphrase(old: Self.secret(), new: Self.secret("a brand new passphrase"))
        #expect(
            agentCode { _ = try IdentityProtection.set(.clear, home: h.home, passphrase: Self.secret()) } == .refused)
        _ = try IdentityProtection.set(.clear, home: h.home, passphrase: Self.secret("a brand new passphrase"))
        #expect(try Identity.load(at: h.home.identityFile).fingerprint == before.fingerprint)
    }

    @Test func theAgentNeedsThePassphraseToStart() throws {
        let h = try Home()
        let fingerprint = try Identity.read(at: h.home.identityFile).fingerprint
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        var config = AgentConfiguration(home: h.home, socketPath: h.home.directory + "/agent.sock")
        config.discovery = false
        var logger = Logger(label: "test-identity")
        logger.logLevel = .critical
        #expect(agentCode { _ = try Agent(configuration: config, logger: logger) } == .vaultLocked)
        #expect(
            agentCode {
                _ = try Agent(configuration: config, logger: logger, passphrase: Self.secret("wrong passphrase"))
            } == .refused)
        var relay = config
        relay.relay = RelayConfiguration(limits: .init(), admission: try RelayAdmission.parse(open: true, allowed: []))
        #expect(agentCode { _ = try Agent(configuration: relay, logger: logger) } == .refused)
        let agent = try Agent(configuration: config, logger: logger, passphrase: Self.secret())
        defer { agent.releaseHome() }
        #expect(agent.identity.fingerprint == fingerprint)
        #expect(agent.isVaultUnlocked)
    }

    /// Only this node's vault opens the identity: without it, the agent says so.
    @Test func theAgentNeedsTheVaultThatProtectsIt() throws {
        let h = try Home()
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        try FileManager.default.moveItem(atPath: h.home.vaultDirectory, toPath: h.home.directory + "/vault-elsewhere")
        var config = AgentConfiguration(home: h.home, socketPath: h.home.directory + "/agent.sock")
        config.discovery = false
        #expect(
            agentCode {
                _ = try Agent(configuration: config, logger: Logger(label: "test-identity"), passphrase: Self.secret())
            } == .noVault)
    }

    /// backup --with-identity carries identity.json as it is: a protected one comes back
    /// protected and opens with the restored vault (same master key).
    @Test func aBackupRestoresTheIdentityProtected() throws {
        let h = try Home()
        _ = try IdentityProtection.set(.vault, home: h.home, passphrase: Self.secret())
        let protectedFile = h.file
        let backup = h.home.directory + "/b.locabak"
        _ = try h.unlockedVault().writeBackup(to: backup, identity: protectedFile)
        let target = NodeHome(directory: h.home.directory + "/restored")
        try target.prepare()
        let s = try Vault.restoreBackup(
            from: backup, to: target.vaultDirectory, passphrase: Self.secret(), identityPath: target.identityFile)
        #expect(s.identity == true)
        #expect(Identity.storedProtection(at: target.identityFile) == .vault)
        let v = try Vault.open(at: target.vaultDirectory)
        try v.unlock(passphrase: Self.secret())
        #expect(
            try Identity.load(at: target.identityFile, vault: v).fingerprint
                == (try Identity.read(at: h.home.identityFile)).fingerprint)
    }
}

private func agentCode(_ body: () throws -> Void) -> AgentError.Code? { thrown(AgentError.Code.self, body)?.code }

extension Array where Element == UInt8 {
    fileprivate func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}
