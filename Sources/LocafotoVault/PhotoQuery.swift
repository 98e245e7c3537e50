import Foundation
import GRDB
import LocafotoErrors
import LocafotoFormats
import LocafotoQuery
import Synchronization

/// The SQL `PhotoQuery` compiles to (documented in scripts/bench-catalog.py, which times the
/// same statements). With every filter set, descending effective-date order:
///
///     SELECT photo.id FROM clearPhoto AS photo                     -- the decrypted mirror (CatalogSeal.swift)
///     WHERE photo.isHidden = 0                                     -- hidden: exclude / only (= 1) / include (absent)
///       AND +photo.privateAlbumId IS NULL                          -- or "(... IS NULL OR +photo.privateAlbumId IN (?, ...))"
///       AND photo.id IN (SELECT photoId FROM albumPhoto WHERE albumId = ?)
///       AND photo.id IN (SELECT photoId FROM clearTag WHERE tag = ?)
///       AND photo.isFavorite = 1
///       AND COALESCE(photo.captureDate, photo.importDate) >= ?
///       AND COALESCE(photo.captureDate, photo.importDate) < ?
///       AND photo.format = ?
///       AND photo.senderFingerprint = ?
///       AND (photo.name LIKE ? ESCAPE '\' OR photo.id IN (SELECT photoId FROM clearTag WHERE tag LIKE ? ESCAPE '\'))
///     ORDER BY COALESCE(photo.captureDate, photo.importDate) DESC, photo.id DESC
///     LIMIT ? OFFSET ?
///
/// and then the page's rows by ID from `photoView` (`Vault.rows(ids:)`).
///
/// Sort keys: `COALESCE(photo.captureDate, photo.importDate)`, `photo.importDate`,
/// `photo.originalSize`, `photo.name COLLATE NOCASE` — each with an index `(isHidden, key, id,
/// privateAlbumId)` and `(key, id, privateAlbumId)` on the mirror `clearPhoto` (CatalogMirror.swift), so ORDER BY never needs a
/// temporary b-tree and the visibility test needs no table access.
struct CompiledPhotoQuery {
    var whereClause: String
    var orderBy: String
    var limitClause: String
    var arguments: StatementArguments
    var limitArguments: StatementArguments

    /// The page's IDs, in order, from the mirror alone (covering sort indexes: rows skipped by
    /// OFFSET are never joined with the stored rows); `Vault.rows(ids:)` then reads the page.
    var selectSQL: String {
        "SELECT photo.id FROM clearPhoto AS photo WHERE \(whereClause) ORDER BY \(orderBy)\(limitClause)"
    }
    /// Counts on the mirror alone: every column a filter names is there.
    var countSQL: String { "SELECT COUNT(*) FROM clearPhoto AS photo WHERE \(whereClause)" }
    var selectArguments: StatementArguments { arguments + limitArguments }
}

extension PhotoQuery {
    static let effectiveDateSQL = "COALESCE(photo.captureDate, photo.importDate)"

    var sortSQL: String {
        switch sort {
        case .captureDate: Self.effectiveDateSQL
        case .importDate: "photo.importDate"
        case .size: "photo.originalSize"
        case .name: "photo.name COLLATE NOCASE"
        }
    }

    /// The LIKE pattern for "contains `text`", with `\` as the escape character.
    static func containsPattern(_ text: String) -> String {
        var escaped = ""
        for c in text {
            if c == "\\" || c == "%" || c == "_" { escaped.append("\\") }
            escaped.append(c)
        }
        return "%" + escaped + "%"
    }

    /// Builds the SQL; resolves the album (`albumNotFound`, `albumLocked`) in `db`.
    func compile(_ db: Database, unlockedAlbums: [String], isUnlocked: (AlbumRow) -> Bool) throws -> CompiledPhotoQuery
    {
        var terms: [String] = []
        var args: [any DatabaseValueConvertible] = []
        switch hidden {
        case .exclude: terms.append("photo.isHidden = 0")
        case .only: terms.append("photo.isHidden = 1")
        case .include: break
        }
        let visibility = Vault.visibilitySQL(unlockedAlbums)
        terms.append(visibility.sql)
        args += visibility.arguments
        if let album {
            let row = try Vault.findAlbum(db, album)
            if row.isPrivate && !isUnlocked(row) {
                throw VaultError(
                    .albumLocked, "the private album \"\(row.name)\" is locked; unlock it with its passphrase first")
            }
            terms.append("photo.id IN (SELECT photoId FROM albumPhoto WHERE albumId = ?)")
            args.append(row.id)
        }
        if let tag {
            terms.append("photo.id IN (SELECT photoId FROM clearTag WHERE tag = ?)")
            args.append(try Vault.validatedTag(tag))
        }
        if let favorite { terms.append(favorite ? "photo.isFavorite = 1" : "photo.isFavorite = 0") }
        if let from {
            terms.append("\(Self.effectiveDateSQL) >= ?")
            args.append(from)
        }
        if let before {
            terms.append("\(Self.effectiveDateSQL) < ?")
            args.append(before)
        }
        if let format {
            let f = format.trimmingCharacters(in: .whitespaces).lowercased()
            guard ContentType(rawValue: f) != nil else {
                throw VaultError(
                    .invalidArgument,
                    "unknown photo format \"\(Vault.printable(format))\"; formats: \(ContentType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            terms.append("photo.format = ?")
            args.append(f)
        }
        if let senderFingerprint {
            let raw = senderFingerprint.trimmingCharacters(in: .whitespaces)
            terms.append("photo.senderFingerprint = ?")
            args.append((try? Fingerprint(parsing: raw))?.description ?? raw)
        }
        if let text, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let t = text.trimmingCharacters(in: .whitespaces)
            terms.append(
                #"(photo.name LIKE ? ESCAPE '\' OR photo.id IN (SELECT photoId FROM clearTag WHERE tag LIKE ? ESCAPE '\'))"#
            )
            args.append(Self.containsPattern(t))
            args.append(Self.containsPattern(t.lowercased()))
        }
        if let minSize {
            guard minSize >= 0 else {
                throw VaultError(.invalidArgument, "the minimum size is \(minSize); give 0 or more bytes")
            }
            terms.append("photo.originalSize >= ?")
            args.append(minSize)
        }
        if let hasLocation { terms.append(hasLocation ? "photo.hasLocation = 1" : "photo.hasLocation = 0") }
        let direction = order == .ascending ? "ASC" : "DESC"
        var limitClause = ""
        var limitArgs: [any DatabaseValueConvertible] = []
        if let limit {
            guard limit >= 0 else { throw VaultError(.invalidArgument, "the limit is \(limit); give 0 or more") }
            limitClause = " LIMIT ?"
            limitArgs.append(limit)
        }
        guard offset >= 0 else { throw VaultError(.invalidArgument, "the offset is \(offset); give 0 or more") }
        if offset > 0 {
            if limit == nil { limitClause = " LIMIT -1" }
            limitClause += " OFFSET ?"
            limitArgs.append(offset)
        }
        return CompiledPhotoQuery(
            whereClause: terms.joined(separator: " AND "), orderBy: "\(sortSQL) \(direction), photo.id \(direction)",
            limitClause: limitClause, arguments: StatementArguments(args), limitArguments: StatementArguments(limitArgs)
        )
    }
}

extension Vault {
    /// The photos `query` selects, in its order, limit and offset applied.
    public func photos(matching query: PhotoQuery) throws -> [PhotoRecord] {
        _ = try requireMasterKey()
        return try readCatalog { db in
            let c = try compile(query, db)
            return try rows(ids: String.fetchAll(db, sql: c.selectSQL, arguments: c.selectArguments), db).map(\.record)
        }
    }

    /// How many photos `query` selects, ignoring its limit and offset (for paging).
    public func photoCount(matching query: PhotoQuery) throws -> Int {
        _ = try requireMasterKey()
        return try readCatalog { db in
            let c = try compile(query, db)
            return try Int.fetchOne(db, sql: c.countSQL, arguments: c.arguments) ?? 0
        }
    }

    /// How many photos the vault holds and their sizes (originals, and encrypted on disk), hidden
    /// ones included; photos of private albums count only while their album is unlocked here
    /// (a locked album's photos stay invisible, their number too).
    public func totals() throws -> (photoCount: Int, originalBytes: Int64, encryptedBytes: Int64) {
        _ = try requireMasterKey()
        return try readCatalog { db in
            let c = try compile(PhotoQuery(hidden: .include), db)
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*), COALESCE(SUM(originalSize), 0), COALESCE(SUM(encryptedSize), 0) FROM photoView AS photo WHERE \(c.whereClause)",
                arguments: c.arguments)
            return (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0)
        }
    }

    /// The statement `photos(matching:)` runs and SQLite's plan for it (EXPLAIN QUERY PLAN
    /// details, one line per step): diagnostics, and the tests' proof that sorts use indexes.
    func explain(_ query: PhotoQuery) throws -> (sql: String, plan: [String]) {
        try readCatalog { db in
            let c = try compile(query, db)
            let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + c.selectSQL, arguments: c.selectArguments)
            return (c.selectSQL, rows.map { $0["detail"] })
        }
    }

    func compile(_ query: PhotoQuery, _ db: Database) throws -> CompiledPhotoQuery {
        let unlocked = unlockedAlbums.withLock { $0 }
        return try query.compile(
            db, unlockedAlbums: unlocked.keys.sorted(), isUnlocked: { unlocked[$0.id] != nil })
    }

    /// The rows of `ids`, in that order (IDs of no row are left out).
    func rows(ids: [String], _ db: Database) throws -> [PhotoRow] {
        var byID: [String: PhotoRow] = [:]
        try Self.forEachChunk(ids) { chunk, marks in
            for row in try PhotoRow.fetchAll(
                db, sql: "\(PhotoRow.select) WHERE photo.id IN (\(marks))", arguments: StatementArguments(chunk))
            {
                byID[row.record.id] = row
            }
        }
        return ids.compactMap { byID[$0] }
    }

    // MARK: - Resolving selections

    /// The photos of `selection`, each once, in selection order. For IDs: every one must name
    /// exactly one photo that is visible here; otherwise nothing is returned and the error lists
    /// every bad ID (`photoNotFound` if any is unknown, else `ambiguousPhoto`, else `albumLocked`).
    func resolve(_ selection: PhotoSelection, _ db: Database) throws -> [PhotoRow] {
        switch selection {
        case .query(let query):
            let c = try compile(query, db)
            return try rows(ids: String.fetchAll(db, sql: c.selectSQL, arguments: c.selectArguments), db)
        case .ids(let ids):
            var unknown: [String] = []
            var ambiguous: [String] = []
            var locked: [String] = []
            var rows: [PhotoRow] = []
            var seen = Set<String>()
            for raw in ids {
                let q = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                let isHex = q.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == 0x2D }
                guard isHex, q.count >= 4 else {
                    unknown.append("\"\(Self.printable(raw))\" (not a photo ID or prefix of at least 4 characters)")
                    continue
                }
                // IDs are lowercase hex and dashes, all below "g": a range scan of the primary key.
                let found = try PhotoRow.fetchAll(
                    db, sql: "\(PhotoRow.select) WHERE photo.id >= ? AND photo.id < ? ORDER BY photo.id LIMIT 2",
                    arguments: [q, q + "g"])
                switch found.count {
                case 0: unknown.append(q)
                case 1:
                    let row = found[0]
                    if !isVisible(row) {
                        locked.append(
                            "\(row.record.id) (in the locked private album \"\(try Self.albumName(db, row.privateAlbumId!))\")"
                        )
                    } else if seen.insert(row.record.id).inserted {
                        rows.append(row)
                    }
                default: ambiguous.append(q)
                }
            }
            if unknown.isEmpty && ambiguous.isEmpty && locked.isEmpty { return rows }
            var parts: [String] = []
            if !unknown.isEmpty { parts.append("no photo with ID \(Self.list(unknown))") }
            if !ambiguous.isEmpty {
                parts.append(
                    "ambiguous ID prefix \(Self.list(ambiguous)) (matches several photos; give more characters)")
            }
            if !locked.isEmpty { parts.append("unlock the album first for \(Self.list(locked))") }
            let code: VaultError.Code =
                !unknown.isEmpty ? .photoNotFound : !ambiguous.isEmpty ? .ambiguousPhoto : .albumLocked
            throw VaultError(code, "nothing was changed: " + parts.joined(separator: "; "))
        }
    }
}
