import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import LocafotoVault
import NIOCore

/// `/v1/albums`: the albums, and what is done to them (create, rename, delete, add, remove,
/// move, copy, cover; private albums: unlock, lock, passwd).
package struct AlbumsController: Sendable {
    let vaults: VaultUse
    let events: EventHub

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/albums") { _ in .json(try vaults.unlocked().albums()) }
        for action in [
            "create", "rename", "delete", "add", "remove", "move", "copy", "cover", "unlock", "lock", "passwd",
        ] {
            t.post("/v1/albums/\(action)") { r in try albumAction(action, r.body) }
        }
    }

    package func albumAction(_ action: String, _ body: [UInt8]) throws -> ControlResponse {
        var raw = body
        defer { secureZero(&raw) }
        let b = try ControlJSON.decode(AlbumRequest.self, raw)
        let vault = try vaults.unlocked()
        func album() throws -> String {
            guard let a = b.album else { throw AgentError(.invalidRequest, "name the album") }
            return a
        }
        func passphrase() throws -> SecretBytes? {
            guard var bytes = b.passphrase.map({ Array($0.utf8) }) else { return nil }
            return SecretBytes(consuming: &bytes)
        }
        let answer = try albumChange(action, b, vault, album: album, passphrase: passphrase)
        events.publish(.albumChanged) {
            $0.state = action
            $0.name = answer.name
            $0.items = answer.count
        }
        if let gone = answer.deletedPhotos { events.photosDeleted(gone) }
        return answer.response
    }

    /// What an album action did, for its answer and its `album.changed` event.
    private struct AlbumOutcome {
        var response: ControlResponse
        var name: String
        var count: Int?
        var deletedPhotos: [String]?
    }

    private func albumChange(
        _ action: String, _ b: AlbumRequest, _ vault: Vault, album: () throws -> String,
        passphrase: () throws -> SecretBytes?
    ) throws -> AlbumOutcome {
        func info(_ a: AlbumInfo, status: Int = 200) -> AlbumOutcome {
            AlbumOutcome(response: .json(a, status: status), name: a.name)
        }
        switch action {
        case "create":
            guard let name = b.name else { throw AgentError(.invalidRequest, "name the new album") }
            return info(try vault.createAlbum(named: name, passphrase: try passphrase()), status: 201)
        case "rename":
            guard let name = b.name else { throw AgentError(.invalidRequest, "give the new name") }
            return info(try vault.renameAlbum(try album(), to: name))
        case "delete":
            let a = try album()
            let gone = try vault.deleteAlbum(a, deletePhotos: b.deletePhotos ?? false)
            return AlbumOutcome(
                response: .json(AlbumChange(album: a, deletedPhotos: gone)), name: a, deletedPhotos: gone)
        case "add", "remove":
            guard let s = try b.selection?.selection() else { throw AgentError(.invalidRequest, "name the photos") }
            let a = try album()
            let n = action == "add" ? try vault.addPhotos(s, toAlbum: a) : try vault.removePhotos(s, fromAlbum: a)
            return AlbumOutcome(response: .json(AlbumChange(album: a, count: n)), name: a, count: n)
        case "move", "copy":
            guard let s = try b.selection?.selection(), let to = b.to else {
                throw AgentError(.invalidRequest, "name the photos and the target album")
            }
            let a = try album()
            let n =
                action == "move"
                ? try vault.movePhotos(s, fromAlbum: a, toAlbum: to)
                : try vault.copyPhotos(s, fromAlbum: a, toAlbum: to)
            return AlbumOutcome(response: .json(AlbumChange(album: to, count: n)), name: to, count: n)
        case "cover":
            return info(try vault.setCover(b.photo, ofAlbum: try album()))
        case "unlock":
            guard let pass = try passphrase() else { throw AgentError(.invalidRequest, "give the album passphrase") }
            try vault.unlockAlbum(try album(), passphrase: pass)
            return info(try vault.album(try album()))
        case "lock":
            try vault.lockAlbum(try album())
            return info(try vault.album(try album()))
        case "passwd":
            guard let old = try passphrase(), var new = b.newPassphrase.map({ Array($0.utf8) }) else {
                throw AgentError(.invalidRequest, "give the album's passphrase and newPassphrase")
            }
            try vault.changeAlbumPassphrase(try album(), old: old, new: SecretBytes(consuming: &new))
            return info(try vault.album(try album()))
        default:
            throw AgentError(.notFound, "no such album action: \(action)")
        }
    }
}
