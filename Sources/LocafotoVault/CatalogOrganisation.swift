import GRDB
import LocafotoQuery

extension Catalog {
    /// Migration "v2-organisation": albums, tags, private albums, failed-unlock limiting, and the
    /// indexes behind `PhotoQuery`. Frozen once released: add new migrations, never edit this one.
    ///
    ///     album        id TEXT PK, name, nameKey UNIQUE (NFC + lowercased name: case-insensitive
    ///                  uniqueness, also for non-ASCII), createdDate, coverPhotoId (a member: FK to
    ///                  albumPhoto), isPrivate; for a private album the album key wrapped twice —
    ///                  under Argon2id(album passphrase), then under the master key (PrivateAlbums.swift)
    ///                  — with its salt and Argon2id limits; failedUnlocks/lastFailedUnlock (throttle)
    ///     albumPhoto   (albumId, photoId) PK: membership, so a photo can be in several albums.
    ///                  Both sides cascade on delete; deleting a row clears a cover that pointed at it.
    ///     photoTag     (photoId, tag) PK + (tag, photoId) index. The source of truth for tags;
    ///                  `photo.tags` (v1 JSON) is kept in sync by triggers (sorted JSON array), so
    ///                  `PhotoRecord.tags` stays correct on every read path.
    ///     photo.privateAlbumId  the private album the photo is in (its key is then wrapped under
    ///                  that album's key instead of the master key); NULL otherwise.
    ///     unlockAttempt  single row: consecutive failed vault unlocks and the time of the last one.
    ///
    /// The v1 column `photo.albumId` stays and is unused: membership lives in `albumPhoto`.
    ///
    /// Indexes: every sort key has an index `(isHidden, key, id, privateAlbumId)` — the default
    /// listing excludes hidden photos, so `isHidden = ?` is an equality prefix and ORDER BY is read
    /// straight off the index in either direction; the visibility test reads `privateAlbumId`
    /// from the index — and one `(key, id, privateAlbumId)` for queries including hidden photos.
    /// The effective date is the expression `COALESCE(captureDate, importDate)`; names sort with
    /// NOCASE. Filters: format, sender fingerprint, favourites (partial index), tags and album
    /// members through their tables.
    static func registerOrganisation(_ m: inout DatabaseMigrator) {
        m.registerMigration("v2-organisation") { db in
            try db.execute(sql: organisationSchema)
        }
    }

    static let organisationSchema = #"""
        CREATE TABLE album (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            nameKey TEXT NOT NULL UNIQUE,
            createdDate DATETIME NOT NULL,
            coverPhotoId TEXT,
            isPrivate BOOLEAN NOT NULL DEFAULT 0 CHECK (isPrivate IN (0, 1)),
            wrappedAlbumKey BLOB,
            kdfAlgorithm TEXT,
            kdfSalt BLOB,
            kdfOpsLimit INTEGER,
            kdfMemLimit INTEGER,
            failedUnlocks INTEGER NOT NULL DEFAULT 0,
            lastFailedUnlock DATETIME,
            CHECK ((isPrivate = 1) = (wrappedAlbumKey IS NOT NULL AND kdfSalt IS NOT NULL
                AND kdfOpsLimit IS NOT NULL AND kdfMemLimit IS NOT NULL AND kdfAlgorithm IS NOT NULL)),
            FOREIGN KEY (id, coverPhotoId) REFERENCES albumPhoto (albumId, photoId)
        );

        CREATE TABLE albumPhoto (
            albumId TEXT NOT NULL REFERENCES album (id) ON DELETE CASCADE,
            photoId TEXT NOT NULL REFERENCES photo (id) ON DELETE CASCADE,
            addedDate DATETIME NOT NULL,
            PRIMARY KEY (albumId, photoId)
        ) WITHOUT ROWID;
        CREATE INDEX albumPhoto_on_photoId ON albumPhoto (photoId, albumId);

        -- A cover must be a member: removing the member (directly, or through a photo deletion
        -- cascading here) clears the cover in the same statement.
        CREATE TRIGGER albumPhoto_clearCover AFTER DELETE ON albumPhoto BEGIN
            UPDATE album SET coverPhotoId = NULL WHERE id = OLD.albumId AND coverPhotoId = OLD.photoId;
        END;

        ALTER TABLE photo ADD COLUMN privateAlbumId TEXT REFERENCES album (id);
        CREATE INDEX photo_on_privateAlbumId ON photo (privateAlbumId) WHERE privateAlbumId IS NOT NULL;

        -- Defence in depth for "a photo in a private album is in no other album" (the vault
        -- checks first and explains): membership must agree with photo.privateAlbumId.
        CREATE TRIGGER albumPhoto_privateExclusive BEFORE INSERT ON albumPhoto
        WHEN (SELECT privateAlbumId FROM photo WHERE id = NEW.photoId) IS NOT
             (SELECT CASE WHEN isPrivate THEN id END FROM album WHERE id = NEW.albumId)
        BEGIN
            SELECT RAISE(ABORT, 'a photo in a private album cannot be in any other album');
        END;
        CREATE TRIGGER photo_privateExclusive BEFORE UPDATE OF privateAlbumId ON photo
        WHEN NEW.privateAlbumId IS NOT NULL
             AND EXISTS (SELECT 1 FROM albumPhoto WHERE photoId = NEW.id AND albumId IS NOT NEW.privateAlbumId)
        BEGIN
            SELECT RAISE(ABORT, 'a photo in a private album cannot be in any other album');
        END;

        CREATE TABLE photoTag (
            photoId TEXT NOT NULL REFERENCES photo (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (photoId, tag)
        ) WITHOUT ROWID;
        CREATE INDEX photoTag_on_tag ON photoTag (tag, photoId);

        -- Tags already in the v1 JSON column (none written by v1 code, but be exact).
        INSERT OR IGNORE INTO photoTag (photoId, tag)
            SELECT photo.id, lower(trim(j.value)) FROM photo, json_each(photo.tags) AS j
            WHERE json_valid(photo.tags) AND j.type = 'text' AND trim(j.value) <> '';
        UPDATE photo SET tags = (SELECT json_group_array(tag) FROM
            (SELECT tag FROM photoTag WHERE photoId = photo.id ORDER BY tag)) WHERE tags <> '[]';

        -- photo.tags mirrors photoTag (sorted), so every reader of PhotoRecord.tags sees the truth.
        CREATE TRIGGER photoTag_afterInsert AFTER INSERT ON photoTag BEGIN
            UPDATE photo SET tags = (SELECT json_group_array(tag) FROM
                (SELECT tag FROM photoTag WHERE photoId = NEW.photoId ORDER BY tag)) WHERE id = NEW.photoId;
        END;
        CREATE TRIGGER photoTag_afterDelete AFTER DELETE ON photoTag BEGIN
            UPDATE photo SET tags = (SELECT json_group_array(tag) FROM
                (SELECT tag FROM photoTag WHERE photoId = OLD.photoId ORDER BY tag)) WHERE id = OLD.photoId;
        END;
        -- A photo inserted with tags (not done by this version) gets its photoTag rows.
        CREATE TRIGGER photo_insertTags AFTER INSERT ON photo WHEN NEW.tags <> '[]' AND json_valid(NEW.tags) BEGIN
            INSERT OR IGNORE INTO photoTag (photoId, tag)
                SELECT NEW.id, j.value FROM json_each(NEW.tags) AS j WHERE j.type = 'text' AND j.value <> '';
        END;

        CREATE TABLE unlockAttempt (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            failures INTEGER NOT NULL DEFAULT 0,
            lastFailure DATETIME
        );
        INSERT INTO unlockAttempt (id, failures) VALUES (1, 0);

        -- Sort indexes; the trailing privateAlbumId lets the visibility test run on the index
        -- alone (rows skipped by OFFSET and COUNT(*) never touch the table).
        CREATE INDEX photo_on_isHidden_effectiveDate
            ON photo (isHidden, COALESCE(captureDate, importDate), id, privateAlbumId);
        CREATE INDEX photo_on_isHidden_importDate ON photo (isHidden, importDate, id, privateAlbumId);
        CREATE INDEX photo_on_isHidden_originalSize ON photo (isHidden, originalSize, id, privateAlbumId);
        CREATE INDEX photo_on_isHidden_name ON photo (isHidden, name COLLATE NOCASE, id, privateAlbumId);
        CREATE INDEX photo_on_effectiveDate ON photo (COALESCE(captureDate, importDate), id, privateAlbumId);
        CREATE INDEX photo_on_importDate_id ON photo (importDate, id, privateAlbumId);
        CREATE INDEX photo_on_originalSize ON photo (originalSize, id, privateAlbumId);
        CREATE INDEX photo_on_name ON photo (name COLLATE NOCASE, id, privateAlbumId);
        CREATE INDEX photo_on_favorite_effectiveDate
            ON photo (isHidden, COALESCE(captureDate, importDate), id, privateAlbumId) WHERE isFavorite = 1;
        CREATE INDEX photo_on_format ON photo (format);
        CREATE INDEX photo_on_senderFingerprint ON photo (senderFingerprint);
        """#
}
