import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoVault

/// A query as JSON or URL parameters (every field optional), as the vault's query.
extension PhotoQueryRequest {
    package func query() throws -> PhotoQuery {
        var q = PhotoQuery()
        if let sort {
            guard let s = PhotoQuery.Sort(rawValue: sort) else {
                throw AgentError(
                    .invalidRequest,
                    "sort must be one of \(PhotoQuery.Sort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            q.sort = s
        }
        if let order {
            guard let o = PhotoQuery.Order(rawValue: order) else {
                throw AgentError(.invalidRequest, "order must be ascending or descending")
            }
            q.order = o
        }
        if let hidden {
            guard let h = PhotoQuery.HiddenPhotos(rawValue: hidden) else {
                throw AgentError(.invalidRequest, "hidden must be exclude, include or only")
            }
            q.hidden = h
        }
        q.album = album
        q.tag = tag
        q.favorite = favorite
        q.from = from
        q.before = before
        q.format = format
        q.senderFingerprint = sender
        q.text = text
        q.limit = limit
        q.offset = offset ?? 0
        if let minBytes {
            guard minBytes >= 0 else { throw AgentError(.invalidRequest, "minBytes must be 0 or more") }
            q.minSize = minBytes
        }
        q.hasLocation = hasLocation
        return q
    }

    package static func fromURL(_ p: [String: String]) throws -> PhotoQueryRequest {
        func date(_ k: String) throws -> Date? {
            guard let v = p[k], !v.isEmpty else { return nil }
            guard let d = Self.date(v) else { throw AgentError(.invalidRequest, "\(k) must be a date like 2025-11-15") }
            return d
        }
        func minBytes() throws -> Int64? {
            guard let v = p["minBytes"], !v.isEmpty else { return nil }
            guard let n = Int64(v), n >= 0 else {
                throw AgentError(.invalidRequest, "minBytes must be a number of bytes, 0 or more")
            }
            return n
        }
        func flag(_ k: String) throws -> Bool? {
            switch p[k] {
            case nil, "": return nil
            case "1", "true": return true
            case "0", "false": return false
            default: throw AgentError(.invalidRequest, "\(k) must be 1 or 0 (true or false)")
            }
        }
        return PhotoQueryRequest(
            sort: p["sort"], order: p["order"], album: p["album"], tag: p["tag"],
            favorite: p["favorite"].map { $0 == "1" || $0 == "true" }, hidden: p["hidden"], from: try date("from"),
            before: try date("before"), format: p["format"], sender: p["sender"], text: p["q"],
            limit: p["limit"].flatMap(Int.init), offset: p["offset"].flatMap(Int.init), minBytes: try minBytes(),
            hasLocation: try flag("hasLocation"))
    }
}

/// `{"ids": [...]}` or `{"query": {...}}`; `{"all": true}` selects every visible photo.
extension PhotoSelectionRequest {
    package func selection() throws -> PhotoSelection {
        if let ids, !ids.isEmpty { return .ids(ids) }
        if let query { return .query(try query.query()) }
        if all == true { return .query(PhotoQuery()) }
        throw AgentError(.invalidRequest, "name photos by id, or give a filter (or select all explicitly)")
    }
}
