import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoVault

/// `locafoto identity protect` / `unprotect`: switches identity.json between clear and
/// vault-protected with the agent stopped.
///
/// Offline rather than a control route, because (1) the running agent holds the identity in
/// memory and would only use the new form at its next start anyway, (2) no route then ever
/// hands the private key's protection to whatever can reach the control socket or the web
/// port, and (3) the home lock guarantees nobody else rewrites identity.json meanwhile (a
/// restore, a second switch).
public enum IdentityProtection {
    public struct Outcome: Sendable, Codable {
        public var fingerprint: String
        public var protection: Identity.Protection
        /// false: identity.json already was in that form (nothing written).
        public var changed: Bool

        public init(fingerprint: String, protection: Identity.Protection, changed: Bool) {
            self.fingerprint = fingerprint
            self.protection = protection
            self.changed = changed
        }
    }

    /// Needs the node's vault (its master key is what the seed is wrapped under, or was) and
    /// its passphrase. The vault is unlocked here, under its unlock throttle, and the master key
    /// is dropped when this returns.
    public static func set(_ protection: Identity.Protection, home: NodeHome, passphrase: SecretBytes) throws -> Outcome
    {
        guard Vault.exists(at: home.vaultDirectory) else {
            throw AgentError(
                .noVault,
                "the node identity is protected by the vault's key, and this node has no vault; create one first with `locafoto vault init`"
            )
        }
        try home.prepare()
        let lock: HomeLock
        do {
            lock = try HomeLock.acquire(home)
        } catch let e as AgentError where e.code == .conflict {
            throw AgentError(
                .conflict,
                "\(e.message). The agent reads identity.json only when it starts, so stop it, switch, and start it again"
            )
        }
        defer { lock.release() }
        let vault: Vault
        do {
            vault = try Vault.open(at: home.vaultDirectory)
            try vault.unlock(passphrase: passphrase)
        } catch let e as VaultError {
            throw AgentError(e)
        }
        defer { vault.lock() }
        let (stored, changed) = try Identity.setProtection(protection, at: home.identityFile, vault: vault)
        return Outcome(fingerprint: stored.fingerprint.description, protection: stored.protection, changed: changed)
    }
}
