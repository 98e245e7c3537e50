import Foundation
import GRDB
import LocafotoCrypto
import LocafotoFormats

/// A photo of the vault as the rest of the app sees it: catalog metadata, no key material.
/// In JSON, `contentHash` is lowercase hex.
public struct PhotoRecord: Codable, Sendable, Equatable, Identifiable {
    /// Lowercase UUID string.
    public var id: String
    /// The original file name, if known (never trusted as a path: see `Vault.exportFileName(for:)`).
    public var name: String?
    /// `ContentType.rawValue` ("jpeg", "png", "heic", ...).
    public var format: String
    public var originalSize: Int64
    public var encryptedSize: Int64
    /// BLAKE2b-256 of the plaintext (32 bytes).
    public var contentHash: [UInt8]
    public var captureDate: Date?
    public var importDate: Date
    public var width: Int?
    public var height: Int?
    public var tags: [String]
    public var isFavorite: Bool
    public var isHidden: Bool
    public var senderFingerprint: String?
    public var senderName: String?
    /// The photo this one was made from (a filter or `compress`); nil for an original, and
    /// once that photo is deleted (catalog migration v3-derived).
    public var derivedFrom: String? = nil

    public init(
        id: String, name: String?, format: String, originalSize: Int64, encryptedSize: Int64, contentHash: [UInt8],
        captureDate: Date?, importDate: Date, width: Int?, height: Int?, tags: [String], isFavorite: Bool,
        isHidden: Bool, senderFingerprint: String?, senderName: String?
    ) {
        self.id = id
        self.name = name
        self.format = format
        self.originalSize = originalSize
        self.encryptedSize = encryptedSize
        self.contentHash = contentHash
        self.captureDate = captureDate
        self.importDate = importDate
        self.width = width
        self.height = height
        self.tags = tags
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.senderFingerprint = senderFingerprint
        self.senderName = senderName
    }

    /// The format as a `ContentType` (nil only for a format written by a newer version).
    public var contentType: ContentType? { ContentType(rawValue: format) }

    // The control API's names (control-api.md, "Names"): dates end in `At`, sizes in `Bytes`,
    // booleans are adjectives, the sender is a peer object. The Swift names stay the catalog's.
    private enum CodingKeys: String, CodingKey {
        case id, name, format, contentHash, width, height, tags, sender, derivedFrom
        case originalSize = "originalBytes"
        case encryptedSize = "encryptedBytes"
        case captureDate = "capturedAt"
        case importDate = "importedAt"
        case isFavorite = "favorite"
        case isHidden = "hidden"
    }

    private enum SenderKeys: String, CodingKey { case name, fingerprint }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        format = try c.decode(String.self, forKey: .format)
        originalSize = try c.decode(Int64.self, forKey: .originalSize)
        encryptedSize = try c.decode(Int64.self, forKey: .encryptedSize)
        let hex = try c.decode(String.self, forKey: .contentHash)
        guard let hash = Hex.decode(hex) else {
            throw DecodingError.dataCorruptedError(forKey: .contentHash, in: c, debugDescription: "not hex")
        }
        contentHash = hash
        captureDate = try c.decodeIfPresent(Date.self, forKey: .captureDate)
        importDate = try c.decode(Date.self, forKey: .importDate)
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        tags = try c.decodeIfPresent([String].self, forKey: .tags) ?? []
        isFavorite = try c.decodeIfPresent(Bool.self, forKey: .isFavorite) ?? false
        isHidden = try c.decodeIfPresent(Bool.self, forKey: .isHidden) ?? false
        derivedFrom = try c.decodeIfPresent(String.self, forKey: .derivedFrom)
        if c.contains(.sender), try !c.decodeNil(forKey: .sender) {
            let sender = try c.nestedContainer(keyedBy: SenderKeys.self, forKey: .sender)
            senderName = try sender.decodeIfPresent(String.self, forKey: .name)
            senderFingerprint = try sender.decodeIfPresent(String.self, forKey: .fingerprint)
        } else {
            senderName = nil
            senderFingerprint = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encode(format, forKey: .format)
        try c.encode(originalSize, forKey: .originalSize)
        try c.encode(encryptedSize, forKey: .encryptedSize)
        try c.encode(Hex.encode(contentHash), forKey: .contentHash)
        try c.encodeIfPresent(captureDate, forKey: .captureDate)
        try c.encode(importDate, forKey: .importDate)
        try c.encodeIfPresent(width, forKey: .width)
        try c.encodeIfPresent(height, forKey: .height)
        try c.encode(tags, forKey: .tags)
        try c.encode(isFavorite, forKey: .isFavorite)
        try c.encode(isHidden, forKey: .isHidden)
        try c.encodeIfPresent(derivedFrom, forKey: .derivedFrom)
        // A photo from a peer names it like every answer names a peer; one imported here has none.
        if senderName != nil || senderFingerprint != nil {
            var sender = c.nestedContainer(keyedBy: SenderKeys.self, forKey: .sender)
            try sender.encode(senderName ?? "", forKey: .name)
            try sender.encodeIfPresent(senderFingerprint, forKey: .fingerprint)
        }
    }
}

/// A full row of the `photo` table, including the wrapped key and file location, as read from
/// `photoView` (the stored row joined with its decrypted mirror: CatalogSeal.swift). Written
/// with `insert(_:keyRing:)`, never through the query interface: the stored row is sealed.
struct PhotoRow: FetchableRecord, Sendable {
    /// Every read of photo rows: the view, named `photo` so that filters read as before.
    static let select = "SELECT photo.* FROM photoView AS photo"

    /// The row of one photo (any visibility), or nil.
    static func fetchOne(_ db: Database, id: String) throws -> PhotoRow? {
        try fetchOne(cached: "\(select) WHERE photo.id = ?", db, arguments: [id])
    }

    /// One row by a statement kept prepared on the connection. Reads that run once per photo
    /// go through here: preparing a statement on `photoView` expands the view's join with the
    /// mirror, and GRDB's authorizer then records every column it reads; on a transfer of
    /// 1,000 small photos that was over a quarter of the receiving agent's CPU (`perf`, W3).
    static func fetchOne(cached sql: String, _ db: Database, arguments: StatementArguments) throws -> PhotoRow? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    var record: PhotoRecord
    var modifiedDate: Date
    var albumId: String?
    /// The private album the photo is in (then `wrappedKey` is under that album's key, see
    /// PrivateAlbums.swift). Read only: written by the album operations, never by `encode`.
    var privateAlbumId: String? = nil
    var wrappedKey: [UInt8]
    var algorithm: UInt8
    /// Relative to the vault directory: `photos/<2 hex>/<id>.loca`.
    var filePath: String

    init(record: PhotoRecord, modifiedDate: Date, wrappedKey: [UInt8], algorithm: AEADAlgorithm, filePath: String) {
        self.record = record
        self.modifiedDate = modifiedDate
        albumId = nil
        self.wrappedKey = wrappedKey
        self.algorithm = algorithm.rawValue
        self.filePath = filePath
    }

    init(row: Row) throws {
        let tagsJSON: String = row["tags"] ?? "[]"
        let tags = (try? JSONDecoder().decode([String].self, from: Data(tagsJSON.utf8))) ?? []
        let hash: Data = row["contentHash"] ?? Data()
        let key: Data = row["wrappedKey"]
        record = PhotoRecord(
            id: row["id"], name: row["name"], format: row["format"], originalSize: row["originalSize"],
            encryptedSize: row["encryptedSize"], contentHash: [UInt8](hash), captureDate: row["captureDate"],
            importDate: row["importDate"], width: row["width"], height: row["height"], tags: tags,
            isFavorite: row["isFavorite"], isHidden: row["isHidden"], senderFingerprint: row["senderFingerprint"],
            senderName: row["senderName"])
        record.derivedFrom = row.hasColumn("derivedFrom") ? row["derivedFrom"] : nil
        modifiedDate = row["modifiedDate"]
        albumId = row["albumId"]
        privateAlbumId = row.hasColumn("privateAlbumId") ? row["privateAlbumId"] : nil
        wrappedKey = [UInt8](key)
        algorithm = row["algorithm"]
        filePath = row["filePath"]
    }

    /// Inserts the row: the describing fields sealed (`Fields`), the rest in clear, placeholders
    /// in the v1 columns that held them. Its mirror row follows through the TEMP trigger.
    func insert(_ db: Database, keyRing: CatalogKeyRing) throws {
        let (keyClass, key) = try keyRing.sealingKey(privateAlbum: privateAlbumId)
        // Cached: preparing it compiles the mirror's TEMP trigger too (CatalogMirror.swift),
        // which costs more than the insert itself when a batch of photos is committed.
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO main.photo (id, format, originalSize, encryptedSize, contentHash, importDate, modifiedDate,
                    tags, isFavorite, isHidden, albumId, wrappedKey, algorithm, filePath, derivedFrom, sealed)
                VALUES (?, '', ?, ?, x'', ?, ?, '[]', ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try insert.execute(
            arguments: [
                record.id, record.originalSize, record.encryptedSize, record.importDate, modifiedDate,
                record.isFavorite,
                record.isHidden, albumId, Data(wrappedKey), Int(algorithm), filePath, record.derivedFrom,
                try CatalogSeal.seal(CatalogSeal.Fields(record), photoID: record.id, keyClass, rowKey: key),
            ])
    }
}

/// The single row of the `vaultKey` table: the master key wrapped under the passphrase key.
struct VaultKeyRow: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "vaultKey"
    static let kdfAlgorithmName = "argon2id13"

    var id: Int = 1
    /// `KeyWrap` output: nonce (24) ‖ ciphertext (32) ‖ tag (16).
    var wrappedMasterKey: Data
    var kdfAlgorithm: String
    var kdfSalt: Data
    var kdfOpsLimit: Int64
    var kdfMemLimit: Int64
    var createdDate: Date
}

/// The catalog schema. Migrations are frozen once released: add new ones, never edit these.
enum Catalog {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "vaultKey") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("wrappedMasterKey", .blob).notNull()
                t.column("kdfAlgorithm", .text).notNull()
                t.column("kdfSalt", .blob).notNull()
                t.column("kdfOpsLimit", .integer).notNull()
                t.column("kdfMemLimit", .integer).notNull()
                t.column("createdDate", .datetime).notNull()
            }
            try db.create(table: "photo") { t in
                t.primaryKey("id", .text)
                t.column("name", .text)
                t.column("format", .text).notNull()
                t.column("originalSize", .integer).notNull()
                t.column("encryptedSize", .integer).notNull()
                t.column("contentHash", .blob).notNull().indexed()
                t.column("captureDate", .datetime)
                t.column("importDate", .datetime).notNull().indexed()
                t.column("modifiedDate", .datetime).notNull()
                t.column("width", .integer)
                t.column("height", .integer)
                t.column("tags", .jsonText).notNull().defaults(to: "[]")
                t.column("isFavorite", .boolean).notNull().defaults(to: false)
                t.column("isHidden", .boolean).notNull().defaults(to: false)
                t.column("albumId", .text)
                t.column("senderFingerprint", .text)
                t.column("senderName", .text)
                t.column("wrappedKey", .blob).notNull()
                t.column("algorithm", .integer).notNull()
                t.column("filePath", .text).notNull().unique()
            }
        }
        registerOrganisation(&m)
        registerKeys(&m)
        registerMedia(&m)
        registerDerived(&m)
        registerSealed(&m)
        return m
    }

    /// `keyRing`: the sealed catalog's keys, for the SQL functions of its mirror (CatalogSeal.swift).
    static func configuration(keyRing: CatalogKeyRing? = nil) -> Configuration {
        var config = Configuration()
        config.journalMode = .wal
        config.label = "LocafotoVault"
        config.busyMode = .timeout(10)
        // Deleted rows (wrapped photo keys) are overwritten with zeros, not just unlinked from the b-tree.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY")
            keyRing?.register(in: db)
        }
        return config
    }
}

/// A received photo that `Vault.prepareReceived` wrote as a LOCA file, waiting for
/// `Vault.commitReceived` to enter the catalog with others of its batch.
public struct ReceivedPhoto: Sendable {
    let source: String
    let row: PhotoRow
    /// The fsync of `source` under way (nil: already durable).
    let durable: BackgroundSync?
    public var id: String { row.record.id }
}
