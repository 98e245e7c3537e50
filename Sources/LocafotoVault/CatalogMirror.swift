import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoQuery

extension Catalog {
    /// Migration "v4-sealed": the columns that will hold the sealed records (CatalogSeal.swift).
    /// Sealing itself needs the master key, so it happens at the first unlock
    /// (`Vault.sealLegacyRows`); until then an upgraded catalog stays as readable as it was.
    /// The indexes over columns that become placeholders go, and so do the v2 triggers that
    /// mirrored `photoTag` into `photo.tags` (tags now live in the sealed record; `photoTag`
    /// stays empty). Frozen once released.
    static func registerSealed(_ m: inout DatabaseMigrator) {
        m.registerMigration("v4-sealed") { db in
            try db.execute(
                sql: """
                    ALTER TABLE photo ADD COLUMN sealed BLOB;
                    ALTER TABLE album ADD COLUMN sealedName BLOB;
                    DROP TRIGGER photoTag_afterInsert;
                    DROP TRIGGER photoTag_afterDelete;
                    DROP TRIGGER photo_insertTags;
                    DROP INDEX photo_on_isHidden_effectiveDate;
                    DROP INDEX photo_on_isHidden_importDate;
                    DROP INDEX photo_on_isHidden_originalSize;
                    DROP INDEX photo_on_isHidden_name;
                    DROP INDEX photo_on_effectiveDate;
                    DROP INDEX photo_on_importDate_id;
                    DROP INDEX photo_on_originalSize;
                    DROP INDEX photo_on_name;
                    DROP INDEX photo_on_favorite_effectiveDate;
                    DROP INDEX photo_on_format;
                    DROP INDEX photo_on_senderFingerprint;
                    DROP INDEX photo_on_contentHash;
                    """)
        }
    }

    /// The decrypted mirror: TEMP objects of the one catalog connection (see CatalogSeal.swift).
    /// Columns and sort indexes are those the clear catalog had, so `PhotoQuery` compiles to
    /// the same statements over `clearPhoto`.
    static let mirrorSchema = """
        CREATE TEMP TABLE clearPhoto (
            id TEXT PRIMARY KEY NOT NULL,
            available BOOLEAN NOT NULL,
            name TEXT, format TEXT NOT NULL, contentHash BLOB NOT NULL, captureDate DATETIME,
            width INTEGER, height INTEGER, tags TEXT NOT NULL, senderFingerprint TEXT, senderName TEXT,
            cameraMake TEXT, cameraModel TEXT, hasLocation BOOLEAN, orientation INTEGER,
            importDate DATETIME NOT NULL, originalSize INTEGER NOT NULL, isFavorite BOOLEAN NOT NULL,
            isHidden BOOLEAN NOT NULL, privateAlbumId TEXT, seq INTEGER NOT NULL
        );
        CREATE INDEX temp.clear_isHidden_effectiveDate ON clearPhoto (isHidden, COALESCE(captureDate, importDate), id, privateAlbumId);
        CREATE INDEX temp.clear_isHidden_importDate ON clearPhoto (isHidden, importDate, id, privateAlbumId);
        CREATE INDEX temp.clear_isHidden_originalSize ON clearPhoto (isHidden, originalSize, id, privateAlbumId);
        CREATE INDEX temp.clear_isHidden_name ON clearPhoto (isHidden, name COLLATE NOCASE, id, privateAlbumId);
        CREATE INDEX temp.clear_effectiveDate ON clearPhoto (COALESCE(captureDate, importDate), id, privateAlbumId);
        CREATE INDEX temp.clear_importDate ON clearPhoto (importDate, id, privateAlbumId);
        CREATE INDEX temp.clear_originalSize ON clearPhoto (originalSize, id, privateAlbumId);
        CREATE INDEX temp.clear_name ON clearPhoto (name COLLATE NOCASE, id, privateAlbumId);
        CREATE INDEX temp.clear_favorite_effectiveDate
            ON clearPhoto (isHidden, COALESCE(captureDate, importDate), id, privateAlbumId) WHERE isFavorite = 1;
        CREATE INDEX temp.clear_format ON clearPhoto (format);
        CREATE INDEX temp.clear_senderFingerprint ON clearPhoto (senderFingerprint);
        CREATE INDEX temp.clear_contentHash ON clearPhoto (contentHash);
        CREATE INDEX temp.clear_privateAlbumId ON clearPhoto (privateAlbumId) WHERE privateAlbumId IS NOT NULL;

        CREATE TEMP TABLE clearTag (
            photoId TEXT NOT NULL,
            tag TEXT NOT NULL,
            PRIMARY KEY (photoId, tag)
        ) WITHOUT ROWID;
        CREATE INDEX temp.clearTag_on_tag ON clearTag (tag, photoId);

        CREATE TEMP TABLE clearAlbum (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, nameKey TEXT NOT NULL);
        CREATE INDEX temp.clearAlbum_on_nameKey ON clearAlbum (nameKey);

        CREATE TEMP VIEW photoView AS SELECT
            c.id AS id, c.name AS name, c.format AS format, c.originalSize AS originalSize,
            p.encryptedSize AS encryptedSize, c.contentHash AS contentHash, c.captureDate AS captureDate,
            c.importDate AS importDate, p.modifiedDate AS modifiedDate, c.width AS width, c.height AS height,
            c.tags AS tags, c.isFavorite AS isFavorite, c.isHidden AS isHidden, p.albumId AS albumId,
            c.senderFingerprint AS senderFingerprint, c.senderName AS senderName, p.wrappedKey AS wrappedKey,
            p.algorithm AS algorithm, p.filePath AS filePath, c.privateAlbumId AS privateAlbumId,
            c.orientation AS orientation, c.cameraMake AS cameraMake, c.cameraModel AS cameraModel,
            c.hasLocation AS hasLocation, p.hasThumbnail AS hasThumbnail, p.mediaState AS mediaState,
            p.derivedFrom AS derivedFrom, c.seq AS seq, c.available AS available
            FROM clearPhoto c JOIN main.photo p ON p.id = c.id;

        CREATE TEMP VIEW albumView AS SELECT
            a.id AS id, c.name AS name, c.nameKey AS nameKey, a.createdDate AS createdDate,
            a.coverPhotoId AS coverPhotoId, a.isPrivate AS isPrivate, a.wrappedAlbumKey AS wrappedAlbumKey,
            a.kdfAlgorithm AS kdfAlgorithm, a.kdfSalt AS kdfSalt, a.kdfOpsLimit AS kdfOpsLimit,
            a.kdfMemLimit AS kdfMemLimit, a.failedUnlocks AS failedUnlocks, a.lastFailedUnlock AS lastFailedUnlock
            FROM main.album a JOIN clearAlbum c ON c.id = a.id;

        CREATE TEMP TRIGGER clearPhoto_afterInsert AFTER INSERT ON main.photo BEGIN
            \(mirrorPhoto("NEW."))
        END;
        CREATE TEMP TRIGGER clearPhoto_afterReseal AFTER UPDATE OF sealed, privateAlbumId ON main.photo BEGIN
            DELETE FROM clearTag WHERE photoId = OLD.id;
            DELETE FROM clearPhoto WHERE id = OLD.id;
            \(mirrorPhoto("NEW."))
        END;
        -- Changes of clear columns the mirror copies: no decryption.
        CREATE TEMP TRIGGER clearPhoto_afterFlags AFTER UPDATE OF importDate, originalSize, isFavorite, isHidden ON main.photo BEGIN
            UPDATE clearPhoto SET importDate = NEW.importDate, originalSize = NEW.originalSize,
                isFavorite = NEW.isFavorite, isHidden = NEW.isHidden WHERE id = NEW.id;
        END;
        CREATE TEMP TRIGGER clearPhoto_afterDelete AFTER DELETE ON main.photo BEGIN
            DELETE FROM clearTag WHERE photoId = OLD.id;
            DELETE FROM clearPhoto WHERE id = OLD.id;
        END;
        CREATE TEMP TRIGGER clearAlbum_afterInsert AFTER INSERT ON main.album BEGIN
            \(mirrorAlbum("NEW."))
        END;
        CREATE TEMP TRIGGER clearAlbum_afterUpdate AFTER UPDATE ON main.album BEGIN
            DELETE FROM clearAlbum WHERE id = OLD.id;
            \(mirrorAlbum("NEW."))
        END;
        CREATE TEMP TRIGGER clearAlbum_afterDelete AFTER DELETE ON main.album BEGIN
            DELETE FROM clearAlbum WHERE id = OLD.id;
        END;
        """

    static let dropMirror = """
        DROP TRIGGER IF EXISTS temp.clearPhoto_afterInsert;
        DROP TRIGGER IF EXISTS temp.clearPhoto_afterReseal;
        DROP TRIGGER IF EXISTS temp.clearPhoto_afterFlags;
        DROP TRIGGER IF EXISTS temp.clearPhoto_afterDelete;
        DROP TRIGGER IF EXISTS temp.clearAlbum_afterInsert;
        DROP TRIGGER IF EXISTS temp.clearAlbum_afterUpdate;
        DROP TRIGGER IF EXISTS temp.clearAlbum_afterDelete;
        DROP VIEW IF EXISTS temp.photoView;
        DROP VIEW IF EXISTS temp.albumView;
        DROP TABLE IF EXISTS temp.clearPhoto;
        DROP TABLE IF EXISTS temp.clearTag;
        DROP TABLE IF EXISTS temp.clearAlbum;
        """

    /// Mirrors the photo rows `p` (a trigger's `NEW.`, or the bulk form below). In a trigger
    /// `lf_open_photo` is named once per column; it keeps the last record it opened, so the row
    /// is decrypted once.
    static func mirrorPhoto(_ p: String, from: String = "", json: String? = nil) -> String {
        let j = json ?? "lf_open_photo(\(p)id, \(p)privateAlbumId, \(p)sealed)"
        func field(_ name: String) -> String { "json_extract(\(j), '$.\(name)')" }
        let select = """
            SELECT \(p)id, \(j) IS NOT NULL, \(field("name")), COALESCE(\(field("format")), ''),
                COALESCE(lf_unhex(\(field("contentHash"))), x''), \(field("captureDate")), \(field("width")), \(field("height")),
                COALESCE(\(field("tags")), '[]'), \(field("senderFingerprint")), \(field("senderName")), \(field("cameraMake")),
                \(field("cameraModel")), \(field("hasLocation")), \(field("orientation")), \(p)importDate, \(p)originalSize,
                \(p)isFavorite, \(p)isHidden, \(p)privateAlbumId, \(p)rowid \(from)
            """
        let tags = from.isEmpty ? mirrorTags(where: "c.id = \(p)id") + ";" : ""
        return """
            INSERT INTO clearPhoto (id, available, name, format, contentHash, captureDate, width, height, tags,
                senderFingerprint, senderName, cameraMake, cameraModel, hasLocation, orientation, importDate,
                originalSize, isFavorite, isHidden, privateAlbumId, seq)
            \(select);
            \(tags)
            """
    }

    /// Mirrors every photo of `main.photo` matching `condition` (over `p`): one call of
    /// `lf_open_photo` per row (a materialised CTE), the JSON parsed once per row by SQLite.
    static func mirrorPhotos(where condition: String = "1") -> String {
        let columns =
            "p.id AS id, p.privateAlbumId AS privateAlbumId, p.importDate AS importDate, p.originalSize AS originalSize, p.isFavorite AS isFavorite, p.isHidden AS isHidden, p.rowid AS rowid"
        return
            "WITH s AS MATERIALIZED (SELECT \(columns), lf_open_photo(p.id, p.privateAlbumId, p.sealed) AS j FROM main.photo p WHERE \(condition) ORDER BY p.rowid) "
            + mirrorPhoto("s.", from: "FROM s", json: "s.j")
    }

    /// `clearTag` rows of the mirrored photos `c` matching `condition`.
    static func mirrorTags(where condition: String = "1") -> String {
        "INSERT OR IGNORE INTO clearTag (photoId, tag) SELECT c.id, t.value FROM clearPhoto c, json_each(c.tags) t WHERE \(condition) AND t.type = 'text'"
    }

    static func mirrorAlbum(_ a: String, from: String = "") -> String {
        let name = "COALESCE(lf_open_album(\(a)id, \(a)sealedName), \(a)id)"
        return "INSERT INTO clearAlbum (id, name, nameKey) SELECT \(a)id, \(name), lf_name_key(\(name)) \(from);"
    }
}

extension Vault {
    /// Makes the catalog readable for this unlock: seals what an older version left in clear,
    /// then builds the mirror. The master key becomes visible to other callers only after this.
    func openCatalog(master: SecretBytes) throws {
        keyRing.unlock(master: master)
        do {
            try sealLegacyRows()
            try db.writeWithoutTransaction { db in
                try db.execute(sql: Catalog.dropMirror)
                try db.execute(sql: Catalog.mirrorSchema)
                try db.inTransaction {
                    try db.execute(sql: Catalog.mirrorPhotos())
                    try db.execute(sql: Catalog.mirrorTags())
                    try db.execute(sql: Catalog.mirrorAlbum("a.", from: "FROM main.album a"))
                    return .commit
                }
            }
        } catch {
            closeCatalog()
            throw VaultError.wrap(error, "could not open the vault catalog")
        }
    }

    /// Forgets the catalog keys and drops the mirror (`lock`).
    func closeCatalog() {
        keyRing.lock()
        try? db.writeWithoutTransaction { try $0.execute(sql: Catalog.dropMirror) }
    }

    /// A private album was unlocked or locked here: its photos' mirror rows are read again
    /// (with their metadata, or as unavailable). Records an older version left under the vault
    /// key are sealed under the album's key now that it is here.
    func remirror(album id: String, unlocked: Bool) throws {
        do {
            try db.write { db in
                if unlocked {
                    let legacy = try Row.fetchAll(
                        db, sql: "SELECT id FROM main.photo WHERE privateAlbumId = ? AND substr(sealed, 1, 1) = x'01'",
                        arguments: [id])
                    for row in legacy {
                        let photo: String = row["id"]
                        try reseal(db, photo) { _ in }
                    }
                }
                try db.execute(
                    sql: "DELETE FROM clearTag WHERE photoId IN (SELECT id FROM main.photo WHERE privateAlbumId = ?)",
                    arguments: [id])
                try db.execute(sql: "DELETE FROM clearPhoto WHERE privateAlbumId = ?", arguments: [id])
                try db.execute(sql: Catalog.mirrorPhotos(where: "p.privateAlbumId = ?"), arguments: [id])
                try db.execute(sql: Catalog.mirrorTags(where: "c.privateAlbumId = ?"), arguments: [id])
            }
        } catch {
            throw VaultError.wrap(error, "could not read the private album's photos")
        }
    }

    /// The sealed fields of a photo as they are now (from the mirror), changed by `change` and
    /// sealed again under the key its album placement asks for (`toAlbum`: .some(nil) for none,
    /// nil to keep it where it is). Inside a write transaction.
    func reseal(
        _ db: Database, _ id: String, toAlbum: String?? = nil, _ change: (inout CatalogSeal.Fields) throws -> Void
    ) throws {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT p.sealed, p.privateAlbumId, lf_open_photo(p.id, p.privateAlbumId, p.sealed) AS json
                        FROM main.photo p WHERE p.id = ?
                        """),
                arguments: [id])
        else { throw VaultError(.photoNotFound, "no photo with ID \(id)") }
        guard let json: String = row["json"],
            var fields = try? JSONDecoder().decode(CatalogSeal.Fields.self, from: Data(json.utf8))
        else {
            throw VaultError(
                .corrupt, "the catalog record of photo \(id) cannot be read: it is damaged or its album is locked")
        }
        try change(&fields)
        let album: String? = toAlbum ?? row["privateAlbumId"]
        let (keyClass, key) = try keyRing.sealingKey(privateAlbum: album)
        // Cached, as every per-photo statement: preparing an UPDATE of main.photo compiles the
        // mirror's TEMP triggers too (PhotoRow.fetchOne(cached:) says what that costs).
        try db.cachedStatement(sql: "UPDATE main.photo SET sealed = ? WHERE id = ?")
            .execute(arguments: [try CatalogSeal.seal(fields, photoID: id, keyClass, rowKey: key), id])
    }

    /// Seals, in one transaction, every photo record and album name an older version stored in
    /// clear, blanks the clear columns, and then rewrites the file (VACUUM) so that the clear
    /// text leaves its free pages and the WAL. A failure before the commit leaves the catalog as
    /// it was; the next unlock tries again.
    func sealLegacyRows() throws {
        let pending = try db.read { db in
            try Bool.fetchOne(
                db,
                sql:
                    "SELECT EXISTS (SELECT 1 FROM photo WHERE sealed IS NULL) OR EXISTS (SELECT 1 FROM album WHERE sealedName IS NULL)"
            )
                ?? false
        }
        guard pending else { return }
        try db.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, name, format, contentHash, captureDate, width, height, senderFingerprint, senderName,
                        cameraMake, cameraModel, hasLocation, orientation,
                        (SELECT json_group_array(tag) FROM (SELECT tag FROM photoTag WHERE photoId = photo.id ORDER BY tag)) AS tagList
                    FROM photo WHERE sealed IS NULL
                    """)
            let (_, key) = try keyRing.sealingKey(privateAlbum: nil)
            for row in rows {
                let id: String = row["id"]
                let hash: Data = row["contentHash"] ?? Data()
                let tagList: String = row["tagList"] ?? "[]"
                let captured: Date? = row["captureDate"]
                let fields = CatalogSeal.Fields(
                    name: row["name"], format: row["format"] ?? "", contentHash: Hex.encode([UInt8](hash)),
                    captureDate: captured.map(CatalogSeal.Fields.databaseText), width: row["width"],
                    height: row["height"],
                    tags: (try? JSONDecoder().decode([String].self, from: Data(tagList.utf8))) ?? [],
                    senderFingerprint: row["senderFingerprint"], senderName: row["senderName"],
                    cameraMake: row["cameraMake"],
                    cameraModel: row["cameraModel"], hasLocation: row["hasLocation"], orientation: row["orientation"])
                // Under the vault's key even in a private album: that album's key is not here.
                // `remirror(album:unlocked:)` moves it under the album's key at its next unlock.
                try db.execute(
                    sql: """
                        UPDATE photo SET sealed = ?, name = NULL, format = '', contentHash = x'', captureDate = NULL,
                            width = NULL, height = NULL, tags = '[]', senderFingerprint = NULL, senderName = NULL,
                            cameraMake = NULL, cameraModel = NULL, hasLocation = NULL, orientation = NULL
                        WHERE id = ?
                        """,
                    arguments: [try CatalogSeal.seal(fields, photoID: id, .vault, rowKey: key), id])
            }
            try db.execute(sql: "DELETE FROM photoTag")
            for album in try Row.fetchAll(db, sql: "SELECT id, name FROM album WHERE sealedName IS NULL") {
                let id: String = album["id"]
                let name: String = album["name"]
                try db.execute(
                    sql: "UPDATE album SET sealedName = ?, name = '', nameKey = ? WHERE id = ?",
                    arguments: [
                        try keyRing.sealAlbumName(name, albumID: id), try keyRing.blindNameKey(Self.nameKey(name)), id,
                    ])
            }
            try hooks.beforeSealCommit?()
        }
        try db.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }
}
