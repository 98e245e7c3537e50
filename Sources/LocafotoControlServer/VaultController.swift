import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoInbox
import LocafotoNode
import LocafotoReceiving
import LocafotoVault
import Logging

/// `/v1/unlock`, `/v1/lock`, `/v1/passwd` and `/v1/backup`: the vault's key. Unlocking imports
/// what arrived while it was locked; locking forgets every plaintext the agent keeps for it.
package struct VaultController: Sendable {
    let vaults: VaultUse
    let events: EventHub
    let importer: Importer
    let mediaHeads: MediaHeads
    let store: AgentStore
    /// The node identity, which a backup may carry (`withIdentity`).
    let identityFile: String
    let logger: Logger

    /// `filePaths`: a backup is written where the request says, for the control socket only.
    package func addRoutes(to t: inout RouteTable, filePaths: Bool) {
        t.post("/v1/unlock") { r in try unlockRoute(r.body) }
        t.post("/v1/passwd") { r in try passwdRoute(r.body) }
        t.post("/v1/lock") { _ in
            try lock()
            return .json(VaultState(vault: .locked))
        }
        if filePaths { t.post("/v1/backup") { r in try backupRoute(r.body) } }
    }

    /// Unlocks the vault and imports what was received while it was locked.
    package func unlock(passphrase: SecretBytes) throws -> Int {
        let v = try vaults.handle.vault()
        do {
            try v.unlock(passphrase: passphrase)
        } catch let e as VaultError {
            throw AgentError(e)
        }
        vaults.activity.touch()
        logger.info("vault unlocked")
        events.publish(.vaultUnlocked)
        return importer.importQueued()
    }

    /// Locks the vault; `reason` (auto-lock: idle, sleep, session locked) goes into the log and
    /// the `vault.locked` event's message. nil: the user asked.
    package func lock(reason: String? = nil) throws {
        try vaults.handle.vault().lock()
        mediaHeads.removeAll()  // plaintext of photos: gone with the key
        // Whoever holds the disk from now on finds no imported photo's name in the inbox's WAL.
        store.checkpoint()
        logger.info("vault locked\(reason.map { ": \($0)" } ?? "")")
        events.publish(.vaultLocked(reason: reason))
    }

    package func unlockRoute(_ body: [UInt8]) throws -> ControlResponse {
        struct Body: Decodable { var passphrase: String }
        let imported = try unlock(passphrase: .utf8(try ControlJSON.decode(Body.self, body).passphrase))
        return .json(VaultState(vault: .unlocked, importedQueued: imported))
    }

    /// Re-wraps the master key under the new passphrase; the vault stays locked or unlocked.
    package func passwdRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(PassphraseChangeRequest.self, body)
        let v = try vaults.handle.vault()
        do {
            try v.changePassphrase(old: .utf8(b.passphrase), new: .utf8(b.newPassphrase))
        } catch let e as VaultError {
            throw AgentError(e)
        }
        logger.info("vault passphrase changed")
        return .json(VaultState(vault: v.isUnlocked ? .unlocked : .locked))
    }

    /// With `withIdentity`, the node's identity.json goes into the backup (encrypted by the
    /// backup's stream like the catalog), so that a restored node keeps its fingerprint.
    package func backupRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(BackupRequest.self, body)
        let v = try vaults.unlocked()
        var identity: [UInt8]?
        if b.withIdentity == true {
            // Checked as the agent reads it: a damaged or loosely-permitted file is not backed up.
            // A protected identity (version 2) is carried as it is, so it is restored protected
            // (its wrapping is under the master key, which the backup keeps).
            _ = try Identity.read(at: identityFile)
            guard let data = FileManager.default.contents(atPath: identityFile) else {
                throw AgentError(.io, "cannot read the node identity \(identityFile)")
            }
            identity = [UInt8](data)
        }
        defer { if identity != nil { secureZero(&identity!) } }
        do {
            return .json(try v.writeBackup(to: NodeHome.absolute(b.path), identity: identity), status: 201)
        } catch let e as VaultError {
            throw AgentError(e)
        }
    }
}
