import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
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
        for action in ["create", "import", "export", "delete"] {
            t.post("/v1/keys/\(action)") { r in try keyAction(action, r.body) }
        }
    }

    /// Named shared keys (`.lfs`): create, import (hex), export (hex), delete.
    package func keyAction(_ action: String, _ body: [UInt8]) throws -> ControlResponse {
        var raw = body
        defer { secureZero(&raw) }
        let b = try ControlJSON.decode(KeyRequest.self, raw)
        let v = try vaults.unlocked()
        switch action {
        case "create", "import":
            let info: SharedKeyInfo
            if action == "create" {
                info = try v.createKey(name: b.name)
            } else {
                guard let hex = b.hex else { throw AgentError(.invalidRequest, "give the key as 64 hex digits") }
                info = try v.importKey(name: b.name, key: try SharedKeyHex.parse(hex))
            }
            _ = importer.importQueued()  // received .lfs files that were waiting for this key
            return .json(info, status: 201)
        case "export":
            let key = try v.exportKey(name: b.name)
            return .json(KeyExport(name: b.name, hex: SharedKeyHex.format(key), fingerprint: Vault.keyFingerprint(key)))
        case "delete": return .json(try v.deleteKey(name: b.name, force: b.force ?? false))
        default: throw AgentError(.notFound, "no such key action: \(action)")
        }
    }
}
