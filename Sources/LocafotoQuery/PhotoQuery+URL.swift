import Foundation
import LocafotoErrors

/// `GET /v1/photos?…`: the query as URL parameters, the same names as its JSON but `q` for the
/// text, dates as `2025-11-15` or RFC 3339, flags as `1`/`0` (or `true`/`false`). Every parameter
/// is optional; an empty one counts as absent. As before the query was one type, a `favorite`
/// other than `1`/`true` means false, and a `limit` or `offset` that is not a number is ignored.
extension PhotoQuery {
    public init(urlParameters p: [String: String]) throws(RefusedValue) {
        func text(_ k: String) -> String? { p[k].flatMap { $0.isEmpty ? nil : $0 } }
        func choice<C: NamedChoice>(_ k: String, _ absent: C) throws(RefusedValue) -> C {
            guard let v = text(k) else { return absent }
            return try C.named(v, field: k)
        }
        func date(_ k: String) throws(RefusedValue) -> Date? {
            guard let v = text(k) else { return nil }
            guard let d = Self.date(v) else { throw RefusedValue("\(k) must be a date like 2025-11-15") }
            return d
        }
        func minBytes() throws(RefusedValue) -> Int64? {
            guard let v = text("minBytes") else { return nil }
            guard let n = Int64(v), n >= 0 else { throw RefusedValue("minBytes must be a number of bytes, 0 or more") }
            return n
        }
        func flag(_ k: String) throws(RefusedValue) -> Bool? {
            switch text(k) {
            case nil: return nil
            case "1", "true": return true
            case "0", "false": return false
            default: throw RefusedValue("\(k) must be 1 or 0 (true or false)")
            }
        }
        self.init(
            sort: try choice("sort", .captureDate), order: try choice("order", .descending), album: text("album"),
            tag: text("tag"), favorite: p["favorite"].map { $0 == "1" || $0 == "true" },
            hidden: try choice("hidden", .exclude),
            from: try date("from"), before: try date("before"), format: text("format"),
            senderFingerprint: text("sender"), text: text("q"), limit: p["limit"].flatMap { Int($0) },
            offset: p["offset"].flatMap { Int($0) } ?? 0, minSize: try minBytes(), hasLocation: try flag("hasLocation"))
    }

    /// The parameters `init(urlParameters:)` reads back as this query; defaults are left out.
    public var urlParameters: [String: String] {
        var p: [String: String] = [:]
        if sort != .captureDate { p["sort"] = sort.rawValue }
        if order != .descending { p["order"] = order.rawValue }
        if hidden != .exclude { p["hidden"] = hidden.rawValue }
        if offset != 0 { p["offset"] = String(offset) }
        p["album"] = album
        p["tag"] = tag
        p["favorite"] = favorite.map { $0 ? "1" : "0" }
        p["from"] = from.map { $0.formatted(.iso8601) }
        p["before"] = before.map { $0.formatted(.iso8601) }
        p["format"] = format
        p["sender"] = senderFingerprint
        p["q"] = text
        p["limit"] = limit.map(String.init)
        p["minBytes"] = minSize.map(String.init)
        p["hasLocation"] = hasLocation.map { $0 ? "1" : "0" }
        return p
    }
}
