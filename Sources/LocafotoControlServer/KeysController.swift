import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoReceiving
import LocafotoVault

/// `/v1/keys`: the vault's named shared keys for `.lfs` files (create, import and export as
/// hex, delete). For the control socket only: an exported key is a secret.
package struct KeysController: Sendable {
    let vaults: VaultUse
    /// Received `.lfs` files wait for their key: a new key imports them.
    let importer: Importer

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/keys") { _ in .json(try vaults.unlocked().keys()) }
        t.post("/v1/keys/create") { r in
            added(try vaults.unlocked().createKey(name: try ControlJSON.decode(KeyNameRequest.self, r.body).name))
        }
        t.post("/v1/keys/import") { r in
            var raw = r.body
            defer { secureZero(&raw) }
            let b = try ControlJSON.decode(KeyImportRequest.self, raw)
            return added(try vaults.unlocked().importKey(name: b.name, key: try SharedKeyHex.parse(b.hex)))
        }
        t.post("/v1/keys/export") { r in
            let name = try ControlJSON.decode(KeyNameRequest.self, r.body).name
            let key = try vaults.unlocked().exportKey(name: name)
            return .json(KeyExport(name: name, hex: SharedKeyHex.format(key), fingerprint: Vault.keyFingerprint(key)))
        }
        t.post("/v1/keys/delete") { r in
            let b = try ControlJSON.decode(KeyDeleteRequest.self, r.body)
            return .json(try vaults.unlocked().deleteKey(name: b.name, force: b.force ?? false))
        }
    }

    /// A key created or imported: received `.lfs` files that were waiting for it are imported.
    private func added(_ info: SharedKeyInfo) -> ControlResponse {
        _ = importer.importQueued()
        return .json(info, status: 201)
    }
}
