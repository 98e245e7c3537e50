import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats

/// A named shared key as the rest of the app sees it: never the key itself.
public struct SharedKeyInfo: Codable, Sendable, Equatable {
    /// The name written in `.lfs` headers (1…128 bytes of UTF-8, case-sensitive).
    public var name: String
    public var createdDate: Date
    /// First 8 bytes of SHA-256(key) as 16 lowercase hex digits: safe to show, lets two people
    /// check that they hold the same key.
    public var fingerprint: String
    /// Photos in the vault that were imported from `.lfs` files sealed with this key.
    public var photoCount: Int

    public init(name: String, createdDate: Date, fingerprint: String, photoCount: Int) {
        self.name = name
        self.createdDate = createdDate
        self.fingerprint = fingerprint
        self.photoCount = photoCount
    }

    // The control API's names (control-api.md, "Names").
    private enum CodingKeys: String, CodingKey {
        case name, fingerprint, photoCount
        case createdDate = "createdAt"
    }
}

/// A row of `sharedKey` (migration "v2-keys", CatalogKeys.swift).
struct SharedKeyRow: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "sharedKey"
    var name: String
    var fingerprint: String
    /// `KeyWrap` output under the master key, aad `Vault.sharedKeyAAD(name)`.
    var wrappedKey: Data
    var createdDate: Date
}

/// A row of `photoSourceKey`: this photo was imported from an `.lfs` file sealed with this key.
struct PhotoSourceKeyRow: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "photoSourceKey"
    var photoId: String
    var keyName: String
    var keyFingerprint: String
}

/// Named shared keys (seed 001, "Shared Keys", "Using External Encryption").
///
/// Names: 1…128 bytes of UTF-8 (the `.lfs` header), no control characters (U+0000–U+001F,
/// U+007F–U+009F), no bidirectional-formatting characters, no leading or trailing whitespace.
/// They are case-sensitive — `.lfs` headers are matched exactly, so a file made by another tool
/// finds its key — and compared under Unicode canonical equivalence (an NFC and an NFD spelling
/// are the same name, so they cannot both exist).
///
/// Keys: 32 random bytes (or imported), wrapped under the vault master key with `KeyWrap`
/// (XChaCha20-Poly1305) and associated data "locafoto shared key v1:" ‖ name, so a wrapped key
/// cannot be moved to another name in the catalog. Every operation needs the vault unlocked.
extension Vault {
    public static let maxKeyNameLength = LFSFile.headerLength

    static func sharedKeyAAD(_ name: String) -> [UInt8] { Array("locafoto shared key v1:".utf8) + Array(name.utf8) }

    /// First 8 bytes of SHA-256 of the key, lowercase hex (16 characters).
    public static func keyFingerprint(_ key: SecretBytes) -> String {
        Hex.encode(Array(SHA256.hash(key).prefix(8)))
    }

    /// Throws `invalidKeyName` unless `name` follows the vault's rules for key names (see above).
    public static func validateKeyName(_ name: String) throws {
        let n = name.utf8.count
        guard n > 0 else { throw VaultError(.invalidKeyName, "a key name cannot be empty") }
        guard n <= maxKeyNameLength else {
            throw VaultError(
                .invalidKeyName,
                "the key name is \(n) bytes of UTF-8; key names are at most \(maxKeyNameLength) bytes (the size of the .lfs header)"
            )
        }
        if name.unicodeScalars.contains(where: isForbiddenInKeyName) {
            throw VaultError(
                .invalidKeyName,
                "the key name \(displayKeyName(name)) contains control or bidirectional-formatting characters, which key names cannot contain"
            )
        }
        if name.unicodeScalars.first!.properties.isWhitespace || name.unicodeScalars.last!.properties.isWhitespace {
            throw VaultError(
                .invalidKeyName, "the key name \(displayKeyName(name)) starts or ends with whitespace; remove it")
        }
    }

    private static func isForbiddenInKeyName(_ s: Unicode.Scalar) -> Bool {
        if s.properties.generalCategory == .control { return true }
        switch s.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The name in single quotes for messages, control and bidi characters shown as `\u{…}`.
    static func displayKeyName(_ name: String) -> String {
        var out = "'"
        for s in name.unicodeScalars {
            if isForbiddenInKeyName(s) || s.properties.generalCategory == .format && s.value != 0x200D {
                out += "\\u{\(String(s.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out + "'"
    }

    /// The name as a shell word, for commands suggested in messages.
    static func shellWord(_ name: String) -> String {
        let plain = name.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
                || Array("-_.,:@%+=/".utf8).contains(c)
        }
        if plain && !name.hasPrefix("-") { return name }
        return "'" + name.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: - Managing keys

    /// Creates a random 256-bit key named `name`. Throws `invalidKeyName`, `keyExists`, `locked`.
    @discardableResult
    public func createKey(name: String) throws -> SharedKeyInfo {
        try addKey(name: name, key: SecretBytes(randomCount: SharedKeyHex.keyLength), verb: "create")
    }

    /// Adds a key received from someone else under `name` (which must be the name their `.lfs`
    /// files carry). Throws `invalidKey` unless `key` is 32 bytes, `invalidKeyName`, `keyExists`
    /// (whatever the existing key's bytes: delete it first to replace it), `locked`.
    /// `SharedKeyHex.parse` turns the exported text form into `SecretBytes`.
    @discardableResult
    public func importKey(name: String, key: SecretBytes) throws -> SharedKeyInfo {
        guard key.count == SharedKeyHex.keyLength else {
            throw VaultError(
                .invalidKey,
                "a shared key is \(SharedKeyHex.keyLength) bytes (64 hex digits); this one is \(key.count) bytes")
        }
        return try addKey(name: name, key: key, verb: "import")
    }

    private func addKey(name: String, key: SecretBytes, verb: String) throws -> SharedKeyInfo {
        let master = try requireMasterKey()
        try Self.validateKeyName(name)
        let row = SharedKeyRow(
            name: name, fingerprint: Self.keyFingerprint(key),
            wrappedKey: Data(KeyWrap.wrap(key, with: master, aad: Self.sharedKeyAAD(name))), createdDate: Self.now())
        do {
            return try db.write { db -> SharedKeyInfo in
                if let existing = try Self.lookupKeyRow(db, name) {
                    throw VaultError(
                        .keyExists,
                        "a key named \(Self.displayKeyName(existing.name)) already exists (fingerprint \(existing.fingerprint)); "
                            + "delete it first (`locafoto key delete \(Self.shellWord(existing.name))`) to \(verb) another key under this name"
                    )
                }
                try row.insert(db)
                // Read back: the date as the catalog stores it (milliseconds), as later reads see it.
                guard let stored = try SharedKeyRow.fetchOne(db, key: row.name) else {
                    throw VaultError(.io, "the key row vanished during its own insert")
                }
                return try Self.info(db, stored)
            }
        } catch {
            throw VaultError.wrap(error, "could not store the key \(Self.displayKeyName(name)) in the vault catalog")
        }
    }

    /// All keys, sorted by name (binary order). Never the key material.
    public func keys() throws -> [SharedKeyInfo] {
        _ = try requireMasterKey()
        return try readCatalog { db in
            try SharedKeyRow.order(Column("name")).fetchAll(db).map { try Self.info(db, $0) }
        }
    }

    /// The key named `name` (exact, or canonically equivalent). Throws `unknownKey`.
    public func key(named name: String) throws -> SharedKeyInfo {
        _ = try requireMasterKey()
        return try readCatalog { db in
            guard let row = try Self.lookupKeyRow(db, name) else { throw Self.noSuchKey(db, name) }
            return try Self.info(db, row)
        }
    }

    /// Deletes the key. While photos imported from `.lfs` files sealed with it are in the vault
    /// this is refused with `keyInUse` unless `force`. (Those photos have their own keys and stay
    /// readable either way; the key is needed to import more files of the group or to share
    /// photos with it.) Throws `unknownKey`.
    @discardableResult
    public func deleteKey(name: String, force: Bool = false) throws -> SharedKeyInfo {
        _ = try requireMasterKey()
        do {
            let deleted = try db.write { db -> SharedKeyInfo in
                guard let row = try Self.lookupKeyRow(db, name) else { throw Self.noSuchKey(db, name) }
                let info = try Self.info(db, row)
                if info.photoCount > 0 && !force {
                    throw VaultError(
                        .keyInUse,
                        "the key \(Self.displayKeyName(row.name)) was used to import \(info.photoCount) photo\(info.photoCount == 1 ? "" : "s") still in the vault; "
                            + "they stay readable without it, but you will need the key to import more files sealed with it. "
                            + "Delete it anyway with `locafoto key delete --force \(Self.shellWord(row.name))`")
                }
                // Zero the wrapped key before deleting the row (as photo deletion does), so the
                // page image that the delete leaves in the WAL no longer holds it.
                try db.execute(
                    sql: "UPDATE sharedKey SET wrappedKey = zeroblob(length(wrappedKey)) WHERE name = ?",
                    arguments: [row.name])
                try SharedKeyRow.deleteOne(db, key: row.name)
                // Provenance rows of photos that are gone (or were never committed) go too.
                try db.execute(
                    sql: "DELETE FROM photoSourceKey WHERE keyName = ? AND photoId NOT IN (SELECT id FROM photo)",
                    arguments: [row.name])
                return info
            }
            // Best effort: older page images with the wrapped key leave the WAL file.
            _ = try? db.writeWithoutTransaction { try $0.checkpoint(.truncate) }
            return deleted
        } catch {
            throw VaultError.wrap(error, "could not delete the key \(Self.displayKeyName(name))")
        }
    }

    /// The raw 32-byte key, to hand to someone through a secure channel (the CLI prints it as
    /// 64 hex digits with `SharedKeyHex.format`, and a warning). Throws `unknownKey`.
    public func exportKey(name: String) throws -> SecretBytes {
        try unwrapSharedKey(named: name).key
    }

    /// The photo's source key name and fingerprint when it was imported from an `.lfs` file.
    public func sourceKey(ofPhoto id: String) throws -> (name: String, fingerprint: String)? {
        let row = try row(matching: id)
        return try readCatalog { db in
            try PhotoSourceKeyRow.fetchOne(db, key: row.record.id).map { ($0.keyName, $0.keyFingerprint) }
        }
    }

    // MARK: - Internals

    /// The key row named exactly `name`, else the one canonically equivalent to it.
    static func lookupKeyRow(_ db: Database, _ name: String) throws -> SharedKeyRow? {
        if let row = try SharedKeyRow.fetchOne(db, key: name) { return row }
        let names = try String.fetchAll(db, sql: "SELECT name FROM sharedKey")
        guard let equivalent = names.first(where: { $0 == name }) else { return nil }
        return try SharedKeyRow.fetchOne(db, key: equivalent)
    }

    static func info(_ db: Database, _ row: SharedKeyRow) throws -> SharedKeyInfo {
        let count =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM photoSourceKey s JOIN photo p ON p.id = s.photoId
                    WHERE s.keyName = ? AND s.keyFingerprint = ?
                    """,
                arguments: [row.name, row.fingerprint]) ?? 0
        return SharedKeyInfo(
            name: row.name, createdDate: row.createdDate, fingerprint: row.fingerprint, photoCount: count)
    }

    static func noSuchKey(_ db: Database, _ name: String) -> VaultError {
        var message = "there is no key named \(displayKeyName(name)); run `locafoto key list` to see the keys"
        if let hint = caseHint(db, name) { message += hint }
        return VaultError(.unknownKey, message)
    }

    /// " (the vault has a key named 'X', …)" when a key differs from `name` only in case.
    static func caseHint(_ db: Database, _ name: String) -> String? {
        let lower = name.lowercased()
        guard let names = try? String.fetchAll(db, sql: "SELECT name FROM sharedKey"),
            let other = names.first(where: { $0.lowercased() == lower })
        else { return nil }
        return " (the vault has a key named \(displayKeyName(other)); key names are case-sensitive)"
    }

    /// Unwraps the key named `name`. Throws `unknownKey` (with `missingMessage` when given),
    /// `corrupt` when the row does not unwrap.
    func unwrapSharedKey(named name: String, missingMessage: String? = nil) throws -> (
        name: String, key: SecretBytes, fingerprint: String
    ) {
        let master = try requireMasterKey()
        let found: (row: SharedKeyRow?, hint: String?) = try readCatalog { db in
            let row = try Self.lookupKeyRow(db, name)
            return (row, row == nil ? Self.caseHint(db, name) : nil)
        }
        guard let row = found.row else {
            if let missingMessage { throw VaultError(.unknownKey, missingMessage + (found.hint ?? "")) }
            throw VaultError(
                .unknownKey,
                "there is no key named \(Self.displayKeyName(name)); run `locafoto key list` to see the keys\(found.hint ?? "")"
            )
        }
        let key: SecretBytes
        do {
            key = try KeyWrap.unwrap([UInt8](row.wrappedKey), with: master, aad: Self.sharedKeyAAD(row.name))
        } catch {
            throw VaultError(
                .corrupt, "the key \(Self.displayKeyName(row.name)) cannot be unwrapped: its catalog row is damaged")
        }
        guard key.count == SharedKeyHex.keyLength else {
            throw VaultError(
                .corrupt, "the key \(Self.displayKeyName(row.name)) has the wrong length: its catalog row is damaged")
        }
        return (row.name, key, row.fingerprint)
    }
}
