import Foundation
import HTTPTypes
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import LocafotoQuery
import LocafotoVault
import NIOCore
import Synchronization

/// `/v1/photos` and `/v1/tags`: queries, details, thumbnails, the original streamed, batch
/// changes, and exports (to a path: on the control socket only).
package struct PhotosController: Sendable {
    let vaults: VaultUse
    let events: EventHub
    let media: MediaJobs

    /// `filePaths`: the calls that write files where the request says, for the control socket
    /// only (a web session, a cookie a browser also sends to other servers on 127.0.0.1, must
    /// not reach the user's files through them).
    package func addRoutes(to t: inout RouteTable, filePaths: Bool) {
        t.get("/v1/photos") { r in
            .json(try vaults.unlocked().photos(matching: try PhotoQuery(urlParameters: r.query)))
        }
        t.post("/v1/photos/batch") { r in try batchRoute(r.body) }
        t.get("/v1/photos/:id") { r in try photoDetail(try r.parameter("id")) }
        // Decrypted in memory and answered as is: never written to a file. Made on the thread
        // pool when first asked for (a decode in a media worker).
        t.get("/v1/photos/:id/thumbnail") { r in
            let id = try r.parameter("id")
            return .bytes(try await BlockingWork.run { try photoThumbnail(id).jpeg }, contentType: "image/jpeg")
        }
        t.get("/v1/photos/:id/original") { r in try await originalStreamRoute(try r.parameter("id")) }
        // The web app's full-size view: a JPEG of any photo.
        t.get("/v1/photos/:id/display") { r in try displayRoute(try r.parameter("id")) }
        t.get("/v1/tags") { _ in .json(try vaults.unlocked().allTags()) }
        guard filePaths else { return }
        t.post("/v1/photos/:id/export") { r in try exportOneRoute(try r.parameter("id"), r.body) }
        t.post("/v1/photos/:id/thumbnail") { r in
            let (id, body) = (try r.parameter("id"), r.body)
            return try await BlockingWork.run { try thumbnailRoute(id, body) }
        }
        t.post("/v1/export") { r in
            let body = r.body
            return try await BlockingWork.run { try exportRoute(body) }
        }
    }

    package func photoDetail(_ id: String) throws -> ControlResponse {
        let vault = try vaults.unlocked()
        let photo = try vault.photo(matching: id)
        return .json(
            PhotoDetail(
                photo: photo, media: try vault.mediaInfo(photo.id),
                albums: try vault.albums(containing: photo.id).map(\.name)))
    }

    package func thumbnailRoute(_ id: String, _ body: [UInt8]) throws -> ControlResponse {
        let path = NodeHome.absolute(try ControlJSON.decode(PathRequest.self, body).path)
        let (photo, jpeg) = try photoThumbnail(id)
        try writeNewFile(path, jpeg)
        return .json(PhotoFile(photo: photo, path: path))
    }

    /// A photo's 320-px thumbnail: the vault's, or made now in a media worker and kept (from an
    /// iPhone HEIC's 320-px thumbnail item when it has one). Made when first asked for (the web
    /// app's gallery, `locafoto thumb`), not by the indexer, so that photos nobody looks at cost
    /// no decode. Blocking (up to a second for a large HEIC without a thumbnail item).
    package func photoThumbnail(_ id: String) throws -> (photo: String, jpeg: [UInt8]) {
        let vault = try vaults.unlocked()
        let photo = try vault.photo(matching: id)
        if try vault.mediaInfo(photo.id).hasThumbnail, let kept = try? vault.thumbnail(photo.id) {
            return (photo.id, kept)
        }
        let plain = try vault.exportData(photo.id, maxSize: Int64(Media.maxInputBytes))
        let made = try media.perform(
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
    package static let thumbnailSide = 320
    package static let thumbnailQuality = 80

    package func batchRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(BatchRequest.self, body)
        let s = b.selection
        let vault = try vaults.unlocked()
        // Resolved before the change: a deleted photo can no longer be looked up.
        let one = singlePhoto(s, vault)
        let count: Int
        var deleted: [String]?
        switch b.action {
        case .tag: count = try vault.addTags(b.tags ?? [], to: s)
        case .untag: count = try vault.removeTags(b.tags ?? [], from: s)
        case .favorite, .unfavorite: count = try vault.setFavorite(b.action == .favorite, for: s)
        case .hide, .unhide: count = try vault.setHidden(b.action == .hide, for: s)
        case .delete:
            let gone = try vault.deletePhotos(s)
            count = gone.count
            deleted = gone
        }
        if let deleted {
            events.photosDeleted(deleted)
        } else if count > 0 {
            events.publish(.photosChanged(change: b.action.rawValue, count: count, photo: count == 1 ? one : nil))
        }
        return .json(BatchOutcome(action: b.action, count: count, deleted: deleted))
    }

    /// The photo a selection names when it names exactly one (by id or unique prefix), for the
    /// `photo` field of an event; nil for a query or several ids.
    private func singlePhoto(_ s: PhotoSelection, _ vault: Vault) -> String? {
        guard case .ids(let ids) = s, ids.count == 1 else { return nil }
        return try? vault.photo(matching: ids[0]).id
    }

    package func exportRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(ExportRequest.self, body)
        let filter = try b.filter.map { try PhotoFilter.named($0) }
        let directory = NodeHome.absolute(b.directory)
        try ExportFiles.makeDirectory(directory)
        return .json(
            try exportPhotos(
                b.selection, to: directory, overwrite: b.overwrite ?? false,
                stripLocation: b.stripLocation ?? false, filter: filter))
    }

    /// Exports each selected photo into `directory` under its own (sanitised) name, optionally
    /// without its GPS location (pixels are not re-encoded where the format allows), or with a
    /// filter (then a JPEG named `NAME-FILTER.jpg`). Each file gets the capture time as its
    /// modification time.
    package func exportPhotos(
        _ selection: PhotoSelection, to directory: String, overwrite: Bool, stripLocation: Bool,
        filter: PhotoFilter? = nil
    ) throws -> [PhotoFile] {
        let vault = try vaults.unlocked()
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
                return PhotoFile(photo: id, error: e.message, code: e.code)
            }
        }
    }

    /// `GET /v1/photos/{id}/original`: the photo, decrypted in memory, with its own type.
    package func originalRoute(_ id: String) throws -> ControlResponse {
        let vault = try vaults.unlocked()
        let record = try vault.photo(matching: id)
        let bytes = try vault.exportData(record.id, maxSize: Int64(LocafotoMediaLimits.maxInMemory))
        return .bytes(bytes, contentType: ContentType(rawValue: record.format)?.mimeType ?? "application/octet-stream")
    }

    /// The longest side of a display rendition: a 4K screen's width, so a 12-MP phone photo
    /// (4032 px) keeps its full size; never enlarged.
    package static let displayMaxSide = 4096

    /// `GET /v1/photos/{id}/display`: the photo as a browser can show it. JPEG, PNG, GIF, WebP
    /// and AVIF are answered as imported (like `/original`); HEIC/HEIF and TIFF, which browsers
    /// do not show, as a JPEG made in memory by libvips (auto-rotated, sRGB, no metadata). Neither
    /// the original nor the rendition touches the disk.
    package func displayRoute(_ id: String) throws -> ControlResponse {
        let vault = try vaults.unlocked()
        let record = try vault.photo(matching: id)
        guard let type = ContentType(rawValue: record.format), Self.needsRendition(type) else {
            return try originalRoute(record.id)
        }
        let plain = try vault.exportData(record.id, maxSize: Int64(LocafotoMediaLimits.maxInMemory))
        // Decoded in a media worker: a 12-megapixel HEIC takes over 100 MiB while it decodes.
        let made = try media.perform(.thumbnail(maxSide: Self.displayMaxSide, quality: 90), body: plain)
        guard let jpeg = made.jpeg else {
            throw AgentError(
                .unsupported,
                "this \(type.displayName) cannot be shown in a browser (\(made.failure ?? "it cannot be decoded")); download the original instead"
            )
        }
        return .bytes(jpeg, contentType: "image/jpeg")
    }

    package static func needsRendition(_ type: ContentType) -> Bool {
        switch type {
        case .heic, .heif, .tiff: true
        case .jpeg, .png, .gif, .webp, .avif: false
        }
    }

    /// `GET /v1/photos/{id}/original`: the photo as imported, with its own type, decrypted
    /// chunk by chunk into the answer (`locafoto export ID -`); no size limit, no file.
    package func originalStreamRoute(_ id: String) async throws -> ControlResponse {
        let vault = try vaults.unlocked()
        let record = try vault.photo(matching: id)
        let (stream, first) = try await PhotoStream.open(vault, record.id)
        let body = ResponseBody { writer in
            defer { stream.stop() }
            var next = first
            while let b = next {
                try await writer.write(b)
                next = try await stream.next()
            }
            try await writer.finish(nil)
        }
        var r = ControlResponse.streaming(
            ContentType(rawValue: record.format)?.mimeType ?? "application/octet-stream", body)
        r.headers.append((.contentLength, String(record.originalSize)))
        return r
    }

    package func exportOneRoute(_ id: String, _ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(ExportPhotoRequest.self, body)
        let v = try vaults.unlocked()
        let photo = try v.photo(matching: id)
        let dir = NodeHome.absolute(b.directory)
        try ExportFiles.makeDirectory(dir)
        let path: String
        if let key = b.lfsKey {
            path = try v.exportLFS(photo.id, keyName: key, to: dir + "/" + Vault.lfsFileName(for: photo))
        } else {
            path = try v.export(photo.id, toDirectory: dir, overwrite: b.overwrite ?? false)
            ExportFiles.setCaptureTime(path, photo.captureDate)
        }
        return .json(PhotoFile(photo: photo.id, path: path))
    }
}

/// Export helpers: the folder is made when missing, the file gets the capture time.
package enum ExportFiles {
    /// `mkdir -p`: each missing folder is created 0700 (an export holds plaintext photos).
    package static func makeDirectory(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw AgentError(.io, "cannot create the folder \(current): \(String(cString: strerror(errno)))")
            }
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw AgentError(.io, "\(path) is not a folder")
        }
    }

    /// Sets the file's modification time to the photo's capture time, so file
    /// managers and `ls -t` order exports as the photos were taken. Unknown capture time: unchanged.
    package static func setCaptureTime(_ path: String, _ date: Date?) {
        guard let date else { return }
        // Foundation's call rather than utimensat: glibc's timespec is, to a debug build's
        // MemberImportVisibility, a member of CDispatch (its module map includes the header).
        try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }
}

/// A photo decrypted chunk by chunk into an HTTP answer (`GET /v1/photos/{id}/original`): the
/// plaintext exists only in the chunks in flight (two of at most 1 MiB), whatever the photo's
/// size, and never in a file. `Vault.streamPhoto` verifies the whole file (tag, content hash)
/// before it delivers the first chunk, so a damaged photo is still an error answer, not a 200
/// cut short.
package final class PhotoStream: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
    private let credit = DispatchSemaphore(value: 2)
    private let stopped = Mutex(false)

    private init(_ stream: AsyncThrowingStream<ByteBuffer, any Error>) {
        iterator = stream.makeAsyncIterator()
    }

    /// Starts decrypting on a thread of its own (blocking file reads) and waits until the photo
    /// verified: its errors are thrown here. Then the first chunk is ready.
    package static func open(_ vault: Vault, _ id: String) async throws -> (PhotoStream, ByteBuffer?) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let s = PhotoStream(stream)
        Thread.detachNewThread {
            do {
                try vault.streamPhoto(id) { chunk in
                    s.credit.wait()  // at most two chunks ahead of the socket
                    if s.stopped.withLock({ $0 }) { throw CancellationError() }
                    continuation.yield(ByteBuffer(bytes: chunk))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let first = try await s.next()
        return (s, first)
    }

    package func next() async throws -> ByteBuffer? {
        let b = try await iterator.next()
        credit.signal()
        return b
    }

    /// The reader went away: the decrypting thread ends at its next chunk.
    package func stop() {
        stopped.withLock { $0 = true }
        credit.signal()
        credit.signal()
    }
}

/// Creates `path` (must not exist) with `bytes`, mode 0600, written fully and fsynced.
package func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
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

extension EventHub {
    /// One event for a deletion, however many photos: a reader reloads what it shows.
    package func photosDeleted(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        publish(.photosDeleted(count: ids.count, photo: ids.count == 1 ? ids[0] : nil))
    }
}
