import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoNode
import LocafotoVault

/// `/v1/albums`: the albums, and what is done to them (create, rename, delete, add, remove,
/// move, copy, cover; private albums: unlock, lock, passwd), each action a route with its own
/// request type.
package struct AlbumsController: Sendable {
    let vaults: VaultUse
    let events: EventHub

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/albums") { _ in .json(try vaults.unlocked().albums()) }
        route(&t, AlbumCreateRequest.self) { _, b, vault in
            info(try vault.createAlbum(named: b.name, passphrase: b.passphrase.map(SecretBytes.utf8)), status: 201)
        }
        route(&t, AlbumRenameRequest.self) { _, b, vault in info(try vault.renameAlbum(b.album, to: b.name)) }
        route(&t, AlbumDeleteRequest.self) { _, b, vault in
            let gone = try vault.deleteAlbum(b.album, deletePhotos: b.deletePhotos ?? false)
            return AlbumOutcome(
                response: .json(AlbumChange(album: b.album, deletedPhotos: gone)), name: b.album, deletedPhotos: gone)
        }
        route(&t, AlbumPhotosRequest.self) { action, b, vault in
            let n =
                action == .add
                ? try vault.addPhotos(b.selection, toAlbum: b.album)
                : try vault.removePhotos(b.selection, fromAlbum: b.album)
            return AlbumOutcome(response: .json(AlbumChange(album: b.album, count: n)), name: b.album, count: n)
        }
        route(&t, AlbumMoveRequest.self) { action, b, vault in
            let n =
                action == .move
                ? try vault.movePhotos(b.selection, fromAlbum: b.album, toAlbum: b.to)
                : try vault.copyPhotos(b.selection, fromAlbum: b.album, toAlbum: b.to)
            return AlbumOutcome(response: .json(AlbumChange(album: b.to, count: n)), name: b.to, count: n)
        }
        route(&t, AlbumCoverRequest.self) { _, b, vault in info(try vault.setCover(b.photo, ofAlbum: b.album)) }
        route(&t, AlbumLockRequest.self) { action, b, vault in
            if action == .lock {
                try vault.lockAlbum(b.album)
            } else {
                guard let pass = b.passphrase else { throw AgentError(.invalidRequest, "give the album passphrase") }
                try vault.unlockAlbum(b.album, passphrase: .utf8(pass))
            }
            return info(try vault.album(b.album))
        }
        route(&t, AlbumPasswdRequest.self) { _, b, vault in
            try vault.changeAlbumPassphrase(b.album, old: .utf8(b.passphrase), new: .utf8(b.newPassphrase))
            return info(try vault.album(b.album))
        }
    }

    /// What an album action did, for its answer and its `album.changed` event.
    private struct AlbumOutcome {
        var response: ControlResponse
        var name: String
        var count: Int?
        var deletedPhotos: [String]?
    }

    private func info(_ a: AlbumInfo, status: Int = 200) -> AlbumOutcome {
        AlbumOutcome(response: .json(a, status: status), name: a.name)
    }

    /// `POST /v1/albums/{action}` for each action `R` serves: the body decoded (and zeroed
    /// after: it may hold a passphrase), the change made in the unlocked vault, and the
    /// `album.changed` event (with `photo.deleted` for photos an album's deletion took along).
    private func route<R: AlbumActionRequest>(
        _ t: inout RouteTable, _ type: R.Type,
        _ change: @escaping @Sendable (AlbumAction, R, Vault) throws -> AlbumOutcome
    ) {
        for action in R.actions {
            t.post("/v1/albums/\(action.rawValue)") { r in
                var raw = r.body
                defer { secureZero(&raw) }
                let outcome = try change(action, try ControlJSON.decode(R.self, raw), try vaults.unlocked())
                events.publish(.albumChanged(action: action.rawValue, album: outcome.name, count: outcome.count))
                if let gone = outcome.deletedPhotos { events.photosDeleted(gone) }
                return outcome.response
            }
        }
    }
}
