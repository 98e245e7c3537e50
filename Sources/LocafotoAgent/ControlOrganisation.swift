import Foundation
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoVault
import LocafotoWire

/// Control API for organising the vault (protocol/control-api.md "Organising"): queries,
/// batch operations on a selection, albums, photo details, thumbnails and batch export.
extension Agent {
    func photoDetail(_ id: String) throws -> ControlResponse {
        let vault = try unlockedVault()
        let photo = try vault.photo(matching: id)
        return .json(
            PhotoDetail(
                photo: photo, media: try vault.mediaInfo(photo.id),
                albums: try vault.albums(containing: photo.id).map(\.name)))
    }

    func thumbnailRoute(_ id: String, _ body: [UInt8]) throws -> ControlResponse {
        let path = NodeHome.absolute(try decodeBody(PathRequest.self, body).path)
        let (photo, jpeg) = try photoThumbnail(id)
        try writeNewFile(path, jpeg)
        return .json(PhotoFile(photo: photo, path: path))
    }

    /// A photo's 320-px thumbnail: the vault's, or made now in a media worker and kept (from an
    /// iPhone HEIC's 320-px thumbnail item when it has one). Made when first asked for (the web
    /// app's gallery, `locafoto thumb`), not by the indexer, so that photos nobody looks at cost
    /// no decode. Blocking (up to a second for a large HEIC without a thumbnail item).
    func photoThumbnail(_ id: String) throws -> (photo: String, jpeg: [UInt8]) {
        let vault = try unlockedVault()
        let photo = try vault.photo(matching: id)
        if try vault.mediaInfo(photo.id).hasThumbnail, let kept = try? vault.thumbnail(photo.id) {
            return (photo.id, kept)
        }
        let plain = try vault.exportData(photo.id, maxSize: Int64(Media.maxInputBytes))
        let made = try configuration.media.perform(
            .thumbnail(maxSide: Self.thumbnailSide, quality: Self.thumbnailQuality), body: plain)
        guard let jpeg = made.jpeg else {
            throw AgentError(
                .unsupported,
                "photo \(photo.id.prefix(8)) has no thumbnail: \(made.failure ?? "it cannot be decoded as an image")")
        }
        try vault.recordThumbnail(photo.id, jpeg)
        return (photo.id, jpeg)
    }

    /// The vault's thumbnails: longest side and JPEG quality.
    static let thumbnailSide = 320
    static let thumbnailQuality = 80

    func batchRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try decodeBody(BatchRequest.self, body)
        let s = try b.selection.selection()
        let vault = try unlockedVault()
        // Resolved before the change: a deleted photo can no longer be looked up.
        let one = singlePhoto(s, vault)
        let count: Int
        var deleted: [String]?
        switch b.action {
        case "tag": count = try vault.addTags(b.tags ?? [], to: s)
        case "untag": count = try vault.removeTags(b.tags ?? [], from: s)
        case "favorite", "unfavorite": count = try vault.setFavorite(b.action == "favorite", for: s)
        case "hide", "unhide": count = try vault.setHidden(b.action == "hide", for: s)
        case "delete":
            let gone = try vault.deletePhotos(s)
            count = gone.count
            deleted = gone
        default: throw AgentError(.invalidRequest, "unknown batch action '\(b.action)'")
        }
        if let deleted {
            publishPhotosDeleted(deleted)
        } else if count > 0 {
            events.publish(.photoChanged) {
                $0.state = b.action
                $0.items = count
                $0.photo = count == 1 ? one : nil
            }
        }
        return .json(BatchOutcome(action: b.action, count: count, deleted: deleted))
    }

    /// The photo a selection names when it names exactly one (by id or unique prefix), for the
    /// `photo` field of an event; nil for a query or several ids.
    private func singlePhoto(_ s: PhotoSelection, _ vault: Vault) -> String? {
        guard case .ids(let ids) = s, ids.count == 1 else { return nil }
        return try? vault.photo(matching: ids[0]).id
    }

    /// One event for a deletion, however many photos: a reader reloads what it shows.
    private func publishPhotosDeleted(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        events.publish(.photoDeleted) {
            $0.items = ids.count
            $0.photo = ids.count == 1 ? ids[0] : nil
        }
    }

    func exportRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try decodeBody(ExportRequest.self, body)
        let filter = try b.filter.map { try PhotoFilter.named($0) }
        let directory = NodeHome.absolute(b.directory)
        try ExportFiles.makeDirectory(directory)
        return .json(
            try exportPhotos(
                try b.selection.selection(), to: directory, overwrite: b.overwrite ?? false,
                stripLocation: b.stripLocation ?? false, filter: filter))
    }

    func albumAction(_ action: String, _ body: [UInt8]) throws -> ControlResponse {
        var raw = body
        defer { secureZero(&raw) }
        let b = try decodeBody(AlbumRequest.self, raw)
        let vault = try unlockedVault()
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
        if let gone = answer.deletedPhotos { publishPhotosDeleted(gone) }
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

    /// Exports each selected photo into `directory` under its own (sanitised) name, optionally
    /// without its GPS location (pixels are not re-encoded where the format allows), or with a
    /// filter (then a JPEG named `NAME-FILTER.jpg`). Each file gets the capture time as its
    /// modification time.
    func exportPhotos(
        _ selection: PhotoSelection, to directory: String, overwrite: Bool, stripLocation: Bool,
        filter: PhotoFilter? = nil
    ) throws -> [PhotoFile] {
        let vault = try unlockedVault()
        let ids: [String]
        switch selection {
        case .ids(let list): ids = try list.map { try vault.photo(matching: $0).id }
        case .query(let q): ids = try vault.photos(matching: q).map(\.id)
        }
        return ids.map { id in
            do {
                let record = try vault.photo(matching: id)
                let path: String
                if let filter {
                    let bytes = try FiltersController.filtered(
                        vault, record, filter, RenderOptions(stripLocation: stripLocation))
                    path =
                        directory + "/"
                        + (FiltersController.derivedName(
                            Vault.exportFileName(for: record), tag: filter.rawValue, extension: "jpg")
                            ?? "\(id)-\(filter.rawValue).jpg")
                    if overwrite { unlink(path) }
                    try writeNewFile(path, bytes)
                } else if stripLocation {
                    guard let type = record.contentType else { throw AgentError(.unsupported, "unknown format") }
                    let plain = try vault.exportData(id, maxSize: Int64(Media.maxInputBytes))
                    let stripped = try Media.strippingLocation(from: plain, type: type)
                    path = directory + "/" + Vault.exportFileName(for: record)
                    if overwrite { unlink(path) }
                    try writeNewFile(path, stripped)
                } else {
                    path = try vault.export(id, toDirectory: directory, overwrite: overwrite)
                }
                ExportFiles.setCaptureTime(path, record.captureDate)
                return PhotoFile(photo: id, path: path)
            } catch {
                let e = ControlErrorMiddleware.agentError(error)
                return PhotoFile(photo: id, error: e.message, code: e.code.description)
            }
        }
    }

    func decodeBody<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        try ControlJSON.decode(type, body)
    }
}

/// Creates `path` (must not exist) with `bytes`, mode 0600, written fully and fsynced.
func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
        throw AgentError(
            errno == EEXIST ? .conflict : .io, "cannot create \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    let ok = bytes.withUnsafeBytes { b in write(fd, b.baseAddress, b.count) == b.count } && fsync(fd) == 0
    guard ok else {
        unlink(path)
        throw AgentError(.io, "cannot write \(path)")
    }
}
