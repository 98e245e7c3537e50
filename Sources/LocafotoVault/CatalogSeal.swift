import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import Synchronization

/// The sealed catalog (migration v4-sealed, protocol/formats.md "Sealed catalog"): everything
/// that describes a photo — name, format, content hash, capture date, size in pixels, tags,
/// sender, camera, GPS flag, orientation — is one XChaCha20-Poly1305 record per photo
/// (`photo.sealed`), album names are sealed too (`album.sealedName`), and album-name uniqueness
/// is a keyed BLAKE2b blind index (`album.nameKey`). What `catalog.sqlite` still shows without
/// the passphrase: photo and album IDs (random UUIDs), sizes, import and change times, the
/// favourite and hidden flags, album membership, which photo was derived from which, and key
/// material that is itself wrapped.
///
/// Keys (`crypto_kdf_derive_from_key`, context `LFCATLG1`):
///
///     id 1 from the master key     row key of ordinary photos          (class 0x01)
///     id 1 from a private album key row key of that album's photos     (class 0x02)
///     id 2 from the master key     album name key
///     id 3 from the master key     blind index key of album names
///
/// Queries cannot run on sealed bytes, so while the vault is unlocked its one SQLite connection
/// keeps a decrypted mirror in TEMP tables (memory only, never written to a file): `clearPhoto`,
/// `clearTag`, `clearAlbum`, and the views `photoView`/`albumView` that join them with the
/// stored rows under the old column names. TEMP triggers on `main.photo` and `main.album` keep
/// the mirror in step inside the same transaction, through the SQL function `lf_open_photo`
/// (which decrypts with the keys in the `CatalogKeyRing`). Locking drops the mirror.
enum CatalogSeal {
    static let kdfContext = "LFCATLG1"
    static let rowKeyID: UInt64 = 1
    static let albumNameKeyID: UInt64 = 2
    static let nameIndexKeyID: UInt64 = 3

    /// The first byte of `photo.sealed`: which key sealed the record.
    enum KeyClass: UInt8 {
        /// The row key from the master key.
        case vault = 0x01
        /// The row key from the key of the private album in `photo.privateAlbumId`.
        case privateAlbum = 0x02
    }

    static func rowAAD(_ keyClass: KeyClass, photoID: String) -> [UInt8] {
        Array("locafoto catalog row v1:".utf8) + [keyClass.rawValue] + Array(photoID.utf8)
    }

    static func albumNameAAD(albumID: String) -> [UInt8] { Array("locafoto album name v1:".utf8) + Array(albumID.utf8) }

    static func rowKey(from key: SecretBytes) -> SecretBytes {
        SecretStream.deriveKey(from: key, id: rowKeyID, context: kdfContext)
    }

    /// What a sealed photo record holds (JSON, keys sorted, absent values left out). Dates are
    /// SQLite's text form ("YYYY-MM-DD HH:MM:SS.SSS", UTC), so the mirror sorts them as before.
    struct Fields: Codable, Equatable, Sendable {
        var name: String?
        var format: String
        /// Lowercase hex of the BLAKE2b-256 content hash.
        var contentHash: String
        var captureDate: String?
        var width: Int?
        var height: Int?
        var tags: [String]
        var senderFingerprint: String?
        var senderName: String?
        var cameraMake: String?
        var cameraModel: String?
        var hasLocation: Bool?
        var orientation: Int?

        static func databaseText(_ date: Date) -> String {
            if case .string(let s) = date.databaseValue.storage { return s }
            return ""
        }

        func json() throws -> [UInt8] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return [UInt8](try encoder.encode(self))
        }
    }

    static func seal(_ fields: Fields, photoID: String, _ keyClass: KeyClass, rowKey: SecretBytes) throws -> Data {
        let json = try fields.json()
        guard json.count <= SealedRecord.maxPlaintext else {
            throw VaultError(
                .tooLarge,
                "the catalog record of photo \(photoID) would be \(json.count) bytes; remove tags or shorten its name")
        }
        return Data(
            [keyClass.rawValue] + SealedRecord.seal(json, with: rowKey, aad: rowAAD(keyClass, photoID: photoID)))
    }
}

// In an extension, so that `Fields` keeps its memberwise initialiser.
extension CatalogSeal.Fields {
    /// The fields a `PhotoRecord` carries (the media indexer adds camera, GPS and orientation).
    init(_ record: PhotoRecord) {
        self.init(
            name: record.name, format: record.format, contentHash: Hex.encode(record.contentHash),
            captureDate: record.captureDate.map(Self.databaseText), width: record.width, height: record.height,
            tags: record.tags, senderFingerprint: record.senderFingerprint, senderName: record.senderName)
    }
}

/// The keys of the sealed catalog while the vault is unlocked, shared by the `Vault` and the SQL
/// functions of its connection (which run on the connection's queue).
final class CatalogKeyRing: Sendable {
    private struct State {
        var rows: SecretBytes?
        var albumNames: SecretBytes?
        var nameIndex: SecretBytes?
        /// Row keys of the private albums unlocked here, by album ID.
        var albumRows: [String: SecretBytes] = [:]
        /// The last record opened: the mirror's statements ask for one row's fields many times.
        var last: (photoID: String, sealed: Data, json: String)?
    }

    private let state = Mutex(State())

    func unlock(master: SecretBytes) {
        let rows = CatalogSeal.rowKey(from: master)
        let names = SecretStream.deriveKey(
            from: master, id: CatalogSeal.albumNameKeyID, context: CatalogSeal.kdfContext)
        let index = SecretStream.deriveKey(
            from: master, id: CatalogSeal.nameIndexKeyID, context: CatalogSeal.kdfContext)
        state.withLock {
            $0.rows = rows
            $0.albumNames = names
            $0.nameIndex = index
            $0.last = nil
        }
    }

    func lock() { state.withLock { $0 = State() } }

    func unlockAlbum(_ id: String, albumKey: SecretBytes) {
        let key = CatalogSeal.rowKey(from: albumKey)
        state.withLock {
            $0.albumRows[id] = key
            $0.last = nil
        }
    }

    func lockAlbum(_ id: String) {
        state.withLock {
            $0.albumRows[id] = nil
            $0.last = nil
        }
    }

    /// The key that seals a photo's record now: its private album's row key, else the vault's.
    func sealingKey(privateAlbum: String?) throws -> (CatalogSeal.KeyClass, SecretBytes) {
        try state.withLock { s in
            if let album = privateAlbum {
                guard let key = s.albumRows[album] else {
                    throw VaultError(
                        .albumLocked, "the private album of this photo is locked; unlock it with its passphrase first")
                }
                return (.privateAlbum, key)
            }
            guard let key = s.rows else {
                throw VaultError(.locked, "the vault is locked; unlock it with your passphrase first")
            }
            return (.vault, key)
        }
    }

    /// The JSON of a sealed photo record, or nil when its key is not here (vault or album
    /// locked) or the record does not open (damaged: the photo then shows without metadata).
    func openPhoto(id: String, privateAlbum: String?, sealed: Data) -> String? {
        let keyClass = sealed.first.flatMap(CatalogSeal.KeyClass.init(rawValue:))
        let (cached, key) = state.withLock { s -> (String?, SecretBytes?) in
            if let last = s.last, last.photoID == id, last.sealed == sealed { return (last.json, nil) }
            switch keyClass {
            case .vault: return (nil, s.rows)
            case .privateAlbum: return (nil, privateAlbum.flatMap { s.albumRows[$0] })
            case nil: return (nil, nil)
            }
        }
        if let cached { return cached }
        guard let key, let keyClass,
            let plain = try? SealedRecord.open(
                [UInt8](sealed.dropFirst()), with: key, aad: CatalogSeal.rowAAD(keyClass, photoID: id))
        else { return nil }
        let json = String(decoding: plain, as: UTF8.self)
        state.withLock { $0.last = (id, sealed, json) }
        return json
    }

    func sealAlbumName(_ name: String, albumID: String) throws -> Data {
        guard let key = state.withLock({ $0.albumNames }) else {
            throw VaultError(.locked, "the vault is locked; unlock it with your passphrase first")
        }
        return Data(SealedRecord.seal(Array(name.utf8), with: key, aad: CatalogSeal.albumNameAAD(albumID: albumID)))
    }

    func openAlbumName(id: String, sealed: Data) -> String? {
        guard let key = state.withLock({ $0.albumNames }),
            let plain = try? SealedRecord.open([UInt8](sealed), with: key, aad: CatalogSeal.albumNameAAD(albumID: id))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    /// `album.nameKey` as stored: keyed BLAKE2b-256 of the case-folded name, lowercase hex.
    func blindNameKey(_ nameKey: String) throws -> String {
        guard let key = state.withLock({ $0.nameIndex }) else {
            throw VaultError(.locked, "the vault is locked; unlock it with your passphrase first")
        }
        return Hex.encode(BLAKE2b.keyed(Array(nameKey.utf8), key: key))
    }

    /// The SQL functions of the mirror, added to the catalog connection.
    func register(in db: Database) {
        db.add(
            function: DatabaseFunction("lf_open_photo", argumentCount: 3) { [self] args in
                guard let id = String.fromDatabaseValue(args[0]), let sealed = Data.fromDatabaseValue(args[2]) else {
                    return nil
                }
                return openPhoto(id: id, privateAlbum: String.fromDatabaseValue(args[1]), sealed: sealed)
            })
        db.add(
            function: DatabaseFunction("lf_open_album", argumentCount: 2) { [self] args in
                guard let id = String.fromDatabaseValue(args[0]), let sealed = Data.fromDatabaseValue(args[1]) else {
                    return nil
                }
                return openAlbumName(id: id, sealed: sealed)
            })
        db.add(
            function: DatabaseFunction("lf_name_key", argumentCount: 1, pure: true) { args in
                String.fromDatabaseValue(args[0]).map(Vault.nameKey)
            })
        db.add(
            function: DatabaseFunction("lf_unhex", argumentCount: 1, pure: true) { args in
                String.fromDatabaseValue(args[0]).flatMap(Hex.decode).map { Data($0) }
            })
    }
}
