import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoVault
import Synchronization

/// The vault of a node, opened lazily (so that `locafoto vault init` works while the agent
/// runs), shared by the agent and its importer.
package final class VaultHandle: Sendable {
    private let directory: String
    private let opened = Mutex<Vault?>(nil)

    package init(directory: String) {
        self.directory = directory
        if Vault.exists(at: directory) { opened.withLock { $0 = try? Vault.open(at: directory) } }
    }

    /// The vault, which must be unlocked.
    package func unlocked() throws -> Vault {
        let v = try vault()
        guard v.isUnlocked else { throw AgentError(.vaultLocked, "the vault is locked; run `locafoto unlock`") }
        return v
    }

    package func vault() throws -> Vault {
        try opened.withLock { v in
            if let v { return v }
            guard Vault.exists(at: directory) else {
                throw AgentError(.noVault, "this node has no vault yet; create one with `locafoto vault init`")
            }
            let vault = try Vault.open(at: directory)
            v = vault
            return vault
        }
    }
}

extension VaultHandle {
    /// The vault for a call of the control API: a use, which restarts the idle time of
    /// `--auto-lock`. Background work (the media indexer) uses `unlocked()`.
    package func unlocked(for activity: VaultActivity) throws -> Vault {
        let v = try unlocked()
        activity.touch()
        return v
    }
}

/// The vault as the control API uses it: each call that opens it is a use, which restarts the
/// idle time of `--auto-lock` (`activity`).
package struct VaultUse: Sendable {
    package let handle: VaultHandle
    package let activity: VaultActivity

    package init(_ handle: VaultHandle, activity: VaultActivity) {
        self.handle = handle
        self.activity = activity
    }

    /// The unlocked vault, for a call of the control API (a use).
    package func unlocked() throws -> Vault { try handle.unlocked(for: activity) }
}
