import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoFormats

/// What the catalog knows of a photo as a photo: the facts its import read from the photo's head,
/// then what the media indexer read (`facts`' fields are nil until known), and whether a
/// thumbnail is kept. Coded flat, as `facts` with `hasThumbnail` beside them (control-api.md
/// "GET /v1/photos/{id}"); its facts read as its own properties (`info.width`).
@dynamicMemberLookup
public struct PhotoMediaInfo: Sendable, Equatable {
    public var facts: PhotoMetadata
    public var hasThumbnail: Bool

    public init(facts: PhotoMetadata, hasThumbnail: Bool = false) {
        self.facts = facts
        self.hasThumbnail = hasThumbnail
    }

    public subscript<T>(dynamicMember fact: KeyPath<PhotoMetadata, T>) -> T { facts[keyPath: fact] }
}

extension PhotoMediaInfo: Codable {
    /// The control API's names (control-api.md "Names"); `PhotoMetadata`'s own coding is the
    /// media worker's and stays as it is.
    private enum CodingKeys: String, CodingKey {
        case width, height, orientation, cameraMake, cameraModel, hasLocation, hasThumbnail
        case captureDate = "capturedAt"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        facts = PhotoMetadata(
            width: try c.decodeIfPresent(Int.self, forKey: .width),
            height: try c.decodeIfPresent(Int.self, forKey: .height),
            orientation: try c.decodeIfPresent(Int.self, forKey: .orientation),
            captureDate: try c.decodeIfPresent(Date.self, forKey: .captureDate),
            cameraMake: try c.decodeIfPresent(String.self, forKey: .cameraMake),
            cameraModel: try c.decodeIfPresent(String.self, forKey: .cameraModel),
            hasLocation: try c.decodeIfPresent(Bool.self, forKey: .hasLocation))
        hasThumbnail = try c.decode(Bool.self, forKey: .hasThumbnail)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(facts.width, forKey: .width)
        try c.encodeIfPresent(facts.height, forKey: .height)
        try c.encodeIfPresent(facts.orientation, forKey: .orientation)
        try c.encodeIfPresent(facts.captureDate, forKey: .captureDate)
        try c.encodeIfPresent(facts.cameraMake, forKey: .cameraMake)
        try c.encodeIfPresent(facts.cameraModel, forKey: .cameraModel)
        try c.encodeIfPresent(facts.hasLocation, forKey: .hasLocation)
        try c.encode(hasThumbnail, forKey: .hasThumbnail)
    }
}

/// Storage side of "photos as photos": the agent's indexer reads each new photo once (after its
/// import committed, off the import path) and records its EXIF facts and an encrypted thumbnail.
/// Thumbnails are LOCA files under the photo's own key (fresh nonce), at
/// `thumbs/<2 hex>/<id>.loca`, so a private album's key protects them like the photo.
extension Vault {
    public static let maxThumbnailBytes = 4 << 20

    /// Photos the indexer has not looked at yet and can read now (oldest first): photos of a
    /// locked private album wait until it is unlocked.
    public func photosAwaitingMedia(limit: Int = 16) throws -> [String] {
        _ = try requireMasterKey()
        let visible = Self.visibilitySQL(unlockedAlbumIDs())
        return try readCatalog { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT photo.id FROM photoView AS photo WHERE photo.mediaState = 0 AND \(visible.sql) ORDER BY photo.importDate LIMIT ?",
                arguments: StatementArguments(visible.arguments) + [limit])
        }
    }

    /// Records what was found and stores the thumbnail (if any). EXIF values fill in what the
    /// catalog does not know yet; a capture date from EXIF replaces none only.
    public func recordMedia(_ id: String, _ info: PhotoMetadata, thumbnail: [UInt8]?) throws {
        let master = try requireMasterKey()
        let row = try self.row(matching: id)
        var wroteThumb = false
        if let thumbnail, !thumbnail.isEmpty, thumbnail.count <= Self.maxThumbnailBytes {
            try writeThumbnail(thumbnail, of: row, master: master)
            wroteThumb = true
        }
        do {
            try db.write { db in
                try record(info, of: row.record.id, in: db)
                try db.execute(
                    sql: "UPDATE photo SET hasThumbnail = ? WHERE id = ?", arguments: [wroteThumb, row.record.id])
            }
        } catch {
            throw VaultError.wrap(error, "could not record the photo's metadata")
        }
    }

    /// `recordMedia` without thumbnails for several photos, in one catalog transaction: one
    /// commit (and fsync) for what the indexer read of a batch, not one per photo. A thumbnail
    /// already made for one of them (asked for before it was indexed) is kept.
    public func recordMedia(_ batch: [(id: String, info: PhotoMetadata)]) throws {
        _ = try requireMasterKey()
        guard !batch.isEmpty else { return }
        let ids = try batch.map { try row(matching: $0.id).record.id }
        do {
            try db.write { db in
                for (id, entry) in zip(ids, batch) { try record(entry.info, of: id, in: db) }
            }
        } catch {
            throw VaultError.wrap(error, "could not record the photos' metadata")
        }
    }

    /// The facts into the photo's sealed fields, and the photo marked indexed.
    private func record(_ info: PhotoMetadata, of id: String, in db: Database) throws {
        try reseal(db, id) { f in
            f.width = info.width ?? f.width
            f.height = info.height ?? f.height
            f.captureDate = f.captureDate ?? info.captureDate.map(Self.truncated).map(CatalogSeal.Fields.databaseText)
            f.orientation = info.orientation
            f.cameraMake = info.cameraMake
            f.cameraModel = info.cameraModel
            f.hasLocation = info.hasLocation
        }
        try db.cachedStatement(sql: "UPDATE photo SET mediaState = 1 WHERE id = ?").execute(arguments: [id])
    }

    /// Stores a thumbnail made after the photo was indexed (when first asked for).
    public func recordThumbnail(_ id: String, _ thumbnail: [UInt8]) throws {
        let master = try requireMasterKey()
        let row = try self.row(matching: id)
        guard !thumbnail.isEmpty, thumbnail.count <= Self.maxThumbnailBytes else {
            throw VaultError(.tooLarge, "a thumbnail is 1...\(Self.maxThumbnailBytes) bytes")
        }
        try writeThumbnail(thumbnail, of: row, master: master)
        do {
            try db.write {
                try $0.cachedStatement(sql: "UPDATE photo SET hasThumbnail = 1 WHERE id = ?").execute(arguments: [
                    row.record.id
                ])
            }
        } catch {
            throw VaultError.wrap(error, "could not update the catalog")
        }
    }

    /// The thumbnail sealed with the photo's key, written whole (temporary file, fsync, rename).
    private func writeThumbnail(_ thumbnail: [UInt8], of row: PhotoRow, master: SecretBytes) throws {
        let key = try unwrapPhotoKey(row, master: master)
        let sealed = try LOCA.seal(
            plaintext: thumbnail, key: key, algorithm: .chacha20poly1305, timestamp: Self.nowSeconds())
        let rel = Self.thumbnailPath(row.record.id)
        let dir = directory + "/" + (rel as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tmp = tmpPath + "/thumb-\(UUID().uuidString.lowercased()).part"
        let fd = try disk.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600, what: "create")
        do {
            try fd.write(sealed)
            try fd.sync()
            fd.close()
            try disk.rename(tmp, directory + "/" + rel)
            try? disk.syncDirectory(dir)
        } catch {
            fd.close()
            disk.unlinkIfPresent(tmp)
            throw error
        }
    }

    /// The indexer could not read this photo (not decodable, too large): do not try again.
    public func markMediaUnreadable(_ id: String) throws {
        _ = try requireMasterKey()
        do {
            try db.write {
                try $0.cachedStatement(sql: "UPDATE photo SET mediaState = 2 WHERE id = ?").execute(arguments: [id])
            }
        } catch {
            throw VaultError.wrap(error, "could not update the catalog")
        }
    }

    public func mediaInfo(_ idOrPrefix: String) throws -> PhotoMediaInfo {
        let row = try self.row(matching: idOrPrefix)
        return try readCatalog { db in
            guard
                let r = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT width, height, orientation, captureDate, cameraMake, cameraModel, hasLocation, hasThumbnail FROM photoView WHERE id = ?",
                    arguments: [row.record.id])
            else { throw VaultError(.photoNotFound, "no photo \(idOrPrefix)") }
            return PhotoMediaInfo(
                facts: PhotoMetadata(
                    width: r["width"], height: r["height"], orientation: r["orientation"],
                    captureDate: r["captureDate"], cameraMake: r["cameraMake"], cameraModel: r["cameraModel"],
                    hasLocation: r["hasLocation"]),
                hasThumbnail: r["hasThumbnail"])
        }
    }

    /// The decrypted JPEG thumbnail of a photo.
    public func thumbnail(_ idOrPrefix: String) throws -> [UInt8] {
        let master = try requireMasterKey()
        let row = try self.row(matching: idOrPrefix)
        let path = directory + "/" + Self.thumbnailPath(row.record.id)
        guard let st = disk.status(path), Int(st.st_size) <= Self.maxThumbnailBytes + 80,
            let data = FileManager.default.contents(atPath: path)
        else {
            throw VaultError(
                .photoNotFound,
                "photo \(row.record.id.prefix(8)) has no thumbnail yet (the agent makes one when it is first asked for)"
            )
        }
        let key = try unwrapPhotoKey(row, master: master)
        do {
            return try LOCA.open([UInt8](data), key: key)
        } catch {
            throw VaultError(.corrupt, "the thumbnail of \(row.record.id.prefix(8)) is damaged")
        }
    }
}
