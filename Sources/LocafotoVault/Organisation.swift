import Foundation
import GRDB
import LocafotoErrors
import LocafotoQuery

/// A tag and how many photos (visible here) carry it.
public struct TagCount: Codable, Sendable, Equatable {
    public var tag: String
    public var photoCount: Int
}

/// Tags, favourites and hidden photos, in batch. Each operation takes a `PhotoSelection` (IDs or
/// unique prefixes, or a query), resolves it and changes every photo in one transaction: all or
/// nothing. Each returns how many photos were selected and updates their `modifiedDate`.
///
/// Tags live in each photo's sealed record (sorted); the unlocked vault's mirror has them one row
/// per photo and tag in `clearTag`, indexed both ways (CatalogSeal.swift). Tags are stored
/// trimmed, NFC-normalised and lowercased — "Paris" and "paris" are one tag — 1 to 100
/// characters, without control characters.
extension Vault {
    public static let maxTagLength = 100

    /// Tags are kept sorted by their UTF-8 bytes (SQLite's BINARY order, as v2 kept them).
    static func tagOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Adds tags to the selected photos (tags they already have are kept once).
    @discardableResult
    public func addTags(_ tags: [String], to selection: PhotoSelection) throws -> Int {
        let tags = try Self.validatedTags(tags, allowEmpty: false)
        return try updatePhotos(selection, "could not tag the photos") { db, ids in
            for id in ids {
                try reseal(db, id) { $0.tags = Array(Set($0.tags).union(tags)).sorted(by: Self.tagOrder) }
            }
        }
    }

    /// Removes tags from the selected photos (tags a photo does not have are ignored).
    @discardableResult
    public func removeTags(_ tags: [String], from selection: PhotoSelection) throws -> Int {
        let tags = try Self.validatedTags(tags, allowEmpty: false)
        return try updatePhotos(selection, "could not untag the photos") { db, ids in
            for id in ids {
                try reseal(db, id) { $0.tags = $0.tags.filter { !tags.contains($0) } }
            }
        }
    }

    /// Replaces the tags of the selected photos (an empty list clears them).
    @discardableResult
    public func setTags(_ tags: [String], for selection: PhotoSelection) throws -> Int {
        let tags = try Self.validatedTags(tags, allowEmpty: true)
        return try updatePhotos(selection, "could not tag the photos") { db, ids in
            for id in ids {
                try reseal(db, id) { $0.tags = Array(Set(tags)).sorted(by: Self.tagOrder) }
            }
        }
    }

    /// Marks the selected photos as favourites, or not.
    @discardableResult
    public func setFavorite(_ favorite: Bool, for selection: PhotoSelection) throws -> Int {
        try setFlag(.isFavorite, favorite, for: selection, "could not change favourites")
    }

    /// Hides the selected photos (left out of queries unless asked for), or shows them again.
    @discardableResult
    public func setHidden(_ hidden: Bool, for selection: PhotoSelection) throws -> Int {
        try setFlag(.isHidden, hidden, for: selection, "could not change hidden photos")
    }

    /// A photo's flags that a batch sets (the names are the catalog's columns).
    private enum Flag: String {
        case isFavorite, isHidden
    }

    private func setFlag(_ flag: Flag, _ value: Bool, for selection: PhotoSelection, _ failure: String) throws -> Int {
        try updatePhotos(selection, failure) { db, ids in
            try Self.forEachChunk(ids) { chunk, marks in
                try db.execute(
                    sql: "UPDATE photo SET \(flag.rawValue) = ? WHERE id IN (\(marks))",
                    arguments: StatementArguments([value]) + StatementArguments(chunk))
            }
        }
    }

    /// Every tag on photos visible here (hidden photos included), with counts, by tag.
    public func allTags() throws -> [TagCount] {
        _ = try requireMasterKey()
        let visibility = Self.visibilitySQL(unlockedAlbumIDs())
        return try readCatalog { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT clearTag.tag AS tag, COUNT(*) AS n FROM clearTag JOIN clearPhoto AS photo ON photo.id = clearTag.photoId
                    WHERE \(visibility.sql) GROUP BY clearTag.tag ORDER BY clearTag.tag
                    """,
                arguments: StatementArguments(visibility.arguments)
            ).map { TagCount(tag: $0["tag"], photoCount: $0["n"]) }
        }
    }

    // MARK: - Helpers

    /// Resolves the selection and applies `change` to its IDs in one write transaction.
    private func updatePhotos(
        _ selection: PhotoSelection, _ what: String, _ change: (Database, [String]) throws -> Void
    ) throws -> Int {
        _ = try requireMasterKey()
        return try writeCatalog(what) { db in
            let ids = try resolve(selection, db).map(\.record.id)
            try change(db, ids)
            let now = Self.now()
            try Self.forEachChunk(ids) { chunk, marks in
                try db.execute(
                    sql: "UPDATE photo SET modifiedDate = ? WHERE id IN (\(marks))",
                    arguments: StatementArguments([now]) + StatementArguments(chunk))
            }
            return ids.count
        }
    }

    /// Calls `body` with slices of at most 500 IDs and their "?, ?, ..." placeholders.
    static func forEachChunk(_ ids: [String], _ body: ([String], String) throws -> Void) rethrows {
        var start = 0
        while start < ids.count {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            try body(chunk, Array(repeating: "?", count: chunk.count).joined(separator: ", "))
            start += chunk.count
        }
    }

    /// A tag as stored: trimmed, NFC, lowercased; `invalidArgument` if empty, too long or with
    /// control characters.
    static func validatedTag(_ raw: String) throws -> String {
        try validatedName(raw, what: "tag", maxLength: maxTagLength).lowercased()
    }

    static func validatedTags(_ raw: [String], allowEmpty: Bool) throws -> [String] {
        guard allowEmpty || !raw.isEmpty else { throw VaultError(.invalidArgument, "give at least one tag") }
        var out: [String] = []
        for t in raw {
            let tag = try validatedTag(t)
            if !out.contains(tag) { out.append(tag) }
        }
        return out
    }
}
