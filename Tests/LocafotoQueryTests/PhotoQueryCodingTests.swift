// The vault's query is the control API's: its JSON and URL forms, their defaults and what they
// refuse (protocol/control-api.md "A selection S").
import Foundation
import LocafotoErrors
import LocafotoQuery
import Testing

@Suite("the photo query and selection as the control API codes them")
struct PhotoQueryCodingTests {
    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .iso8601
        e.outputFormatting = .sortedKeys
        return e
    }
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try Self.decoder().decode(T.self, from: Data(json.utf8))
    }
    /// The words a refusal carries, or nil when decoding succeeded or failed otherwise.
    func refusal<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try decode(T.self, json)
            return nil
        } catch DecodingError.dataCorrupted(let c) {
            return (c.underlyingError as? RefusedValue)?.description
        } catch {
            return nil
        }
    }

    @Test("an empty query is the vault's default: newest first, hidden photos left out, from the start")
    func defaults() throws {
        #expect(try decode(PhotoQuery.self, "{}") == PhotoQuery())
        #expect(try String(decoding: Self.encoder().encode(PhotoQuery()), as: UTF8.self) == "{}")
    }

    @Test("every field has the API's name (sender, minBytes, capturedAt), and survives a round trip")
    func apiNames() throws {
        let json = """
            {"sort": "originalBytes", "order": "ascending", "album": "Trip", "tag": "sea", "favorite": true,
             "hidden": "only", "from": "2025-06-01T00:00:00Z", "before": "2025-07-01T00:00:00Z", "format": "heic",
             "sender": "ab12", "text": "IMG", "limit": 10, "offset": 20, "minBytes": 1048576, "hasLocation": false}
            """
        let q = try decode(PhotoQuery.self, json)
        #expect(q.sort == .size && q.order == .ascending && q.hidden == .only)
        #expect(q.senderFingerprint == "ab12" && q.minSize == 1_048_576 && q.hasLocation == false)
        #expect(q.from == PhotoQuery.date("2025-06-01") && q.before == PhotoQuery.date("2025-07-01"))
        #expect(q.limit == 10 && q.offset == 20 && q.text == "IMG" && q.format == "heic")
        #expect(try decode(PhotoQuery.self, String(decoding: Self.encoder().encode(q), as: UTF8.self)) == q)
        #expect(try decode(PhotoQuery.self, #"{"sort": "capturedAt"}"#).sort == .captureDate)
        #expect(try decode(PhotoQuery.self, #"{"sort": "importedAt"}"#).sort == .importDate)
    }

    @Test("a name outside a closed set is refused with the names there are")
    func closedSets() {
        #expect(
            refusal(PhotoQuery.self, #"{"sort": "date"}"#)
                == "sort must be capturedAt, importedAt, originalBytes or name")
        #expect(refusal(PhotoQuery.self, #"{"order": "up"}"#) == "order must be ascending or descending")
        #expect(refusal(PhotoQuery.self, #"{"hidden": "all"}"#) == "hidden must be exclude, include or only")
        #expect(
            refusal(PhotoSelection.self, #"{"query": {"order": "newest"}}"#) == "order must be ascending or descending")
    }

    @Test("a selection names photos by id, by a query, or all of them; nothing else")
    func selections() throws {
        #expect(try decode(PhotoSelection.self, #"{"ids": ["e46b", "77aa"]}"#) == .ids(["e46b", "77aa"]))
        #expect(try decode(PhotoSelection.self, #"{"query": {"tag": "sea"}}"#) == .query(PhotoQuery(tag: "sea")))
        #expect(try decode(PhotoSelection.self, #"{"all": true}"#) == .query(PhotoQuery()))
        // ids win over a query; an empty id list is no selection
        #expect(try decode(PhotoSelection.self, #"{"ids": ["e46b"], "query": {}}"#) == .ids(["e46b"]))
        let none = "name photos by id, or give a filter (or select all explicitly)"
        for json in ["{}", #"{"ids": []}"#, #"{"all": false}"#] {
            #expect(refusal(PhotoSelection.self, json) == none, "\(json)")
        }
        for selection: PhotoSelection in [.ids(["e46b"]), .query(PhotoQuery(album: "Trip", limit: 3))] {
            #expect(
                try decode(PhotoSelection.self, String(decoding: Self.encoder().encode(selection), as: UTF8.self))
                    == selection)
        }
    }

    @Test("URL parameters: q is the text, dates as people write them, and the CLI's parameters read back")
    func urlParameters() throws {
        let q = try PhotoQuery(urlParameters: [
            "sort": "name", "order": "ascending", "q": "beach", "from": "2025-11-15", "hasLocation": "1",
            "minBytes": "500", "favorite": "true", "limit": "5", "offset": "10", "album": "",
        ])
        #expect(q.sort == .name && q.order == .ascending && q.text == "beach" && q.hasLocation == true)
        #expect(q.from == PhotoQuery.date("2025-11-15T00:00:00Z") && q.minSize == 500 && q.favorite == true)
        #expect(q.limit == 5 && q.offset == 10 && q.album == nil)
        #expect(try PhotoQuery(urlParameters: q.urlParameters) == q)
        #expect(PhotoQuery().urlParameters.isEmpty)
    }

    @Test("URL parameters it refuses say which and why")
    func urlRefusals() {
        func refusal(_ p: [String: String]) -> String? {
            do {
                _ = try PhotoQuery(urlParameters: p)
                return nil
            } catch { return error.description }
        }
        #expect(refusal(["sort": "big"]) == "sort must be capturedAt, importedAt, originalBytes or name")
        #expect(refusal(["before": "yesterday"]) == "before must be a date like 2025-11-15")
        #expect(refusal(["minBytes": "-1"]) == "minBytes must be a number of bytes, 0 or more")
        #expect(refusal(["hasLocation": "maybe"]) == "hasLocation must be 1 or 0 (true or false)")
    }
}
