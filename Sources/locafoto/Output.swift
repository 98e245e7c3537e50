import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoNode
import LocafotoWire
import Synchronization

extension GlobalOptions {
    var nodeHome: NodeHome { NodeHome.resolve(explicit: home) }
    var client: ControlClient { ControlClient(socketPath: nodeHome.socketPath(explicit: socket)) }

    /// Calls the agent and decodes its answer as `T` (the shared types of `LocafotoControl`);
    /// an error answer throws its message. The agent's JSON text comes along, for `--json`.
    func fetch<T: Decodable>(_ type: T.Type, _ path: String, method: String = "GET") throws -> Answer<T> {
        let c = client
        let r = method == "GET" ? try c.get(path) : try c.request(method, path, body: Data("{}".utf8))
        return try typed(T.self, path, r)
    }

    /// The same with a request body (the shared request types of `LocafotoControl`).
    func fetch<T: Decodable>(_ type: T.Type, _ path: String, method: String = "POST", body: some Encodable) throws
        -> Answer<T>
    {
        let r = try client.request(method, path, body: try ControlCoding.encoder().encode(body))
        return try typed(T.self, path, r)
    }

    /// Decodes an answer already received (an upload's, or one whose request body is a secret).
    func typed<T: Decodable>(_ type: T.Type, _ path: String, _ r: ControlClient.Response) throws -> Answer<T> {
        try check(r)  // an error answer: said here
        do {
            return Answer(value: try ControlCoding.decoder().decode(T.self, from: r.body), json: r.body)
        } catch {
            // Parsed a second time only to say which it is: not JSON at all, or another shape.
            guard Self.isJSON(r.body) else {
                throw CLIError(
                    "the agent's answer (\(r.body.count) bytes) is not valid JSON; nothing was shown. See the agent's log"
                )
            }
            throw Self.unexpected(path, "what this CLI reads (\(WireMessage.describe(error)))")
        }
    }

    /// A list the agent keeps (peers, keys, albums, transfers…): under `--json` as the agent wrote
    /// it, else `empty` when there is nothing, or a table of `columns` with one row per element.
    /// The list comes back for what a command says after the table; nil under `--json`.
    @discardableResult
    func printList<T: Decodable>(
        _ type: T.Type, _ path: String, empty: String, _ columns: [String], row: (T) -> [String]
    ) throws -> [T]? {
        let answer = try fetch([T].self, path)
        if json {
            printJSON(answer)
            return nil
        }
        print(answer.value.isEmpty ? empty : Format.table(columns, answer.value.map(row)))
        return answer.value
    }

    /// Prints an answer: under `--json` as the agent wrote it, else the line `text` makes of it.
    func say<T>(_ answer: Answer<T>, _ text: (T) -> String) {
        json ? printJSON(answer) : print(text(answer.value))
    }

    /// Prints an answer's JSON as the agent wrote it.
    func printJSON<T>(_ answer: Answer<T>) {
        printRawJSON(String(decoding: answer.json, as: UTF8.self))
    }

    /// Prints a typed answer as the agent would have written it.
    func printEncoded<T: Encodable>(_ value: T) throws {
        printRawJSON(String(decoding: try ControlCoding.encoder().encode(value), as: UTF8.self))
    }

    static func unexpected(_ path: String, _ shape: String) -> CLIError {
        CLIError(
            "the agent's answer to \(path.split(separator: "?").first ?? "") is not \(shape) as expected; nothing was shown. Are the CLI and the agent the same version?"
        )
    }

    static func isJSON(_ body: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) != nil
    }

    /// An error answer throws its message, with the exit status of its code (a success passes:
    /// `typed` decodes it, and an answer that is not JSON is an error there, never an empty result).
    func check(_ r: ControlClient.Response) throws {
        guard (200..<300).contains(r.status) else {
            guard Self.isJSON(r.body) else {
                throw CLIError(
                    "the agent answered \(r.status) without an explanation", code: r.status == 404 ? .notFound : .failed
                )
            }
            let printed = json && !jsonOutputStarted.withLock { $0 }
            if printed { printRawJSON(String(decoding: r.body, as: UTF8.self)) }
            let e = try? ControlCoding.decoder().decode(ErrorAnswer.self, from: r.body).error
            var error = CLIError(
                e?.message ?? "the agent answered \(r.status)",
                // A code this CLI does not know (a newer agent's) is a plain failure.
                code: e?.code ?? (r.status == 404 ? .notFound : .failed))
            error.printedJSON = json
            throw error
        }
    }

    /// Reads a list page by page (`limit`/`offset` of the control API), so every answer stays
    /// small however long the list: `body` gets each page in order, decoded as `Row`s and as the
    /// agent's JSON text. `limit` caps the total.
    func pages<Row: Decodable>(
        _ path: String, _ parameters: [String: String] = [:], limit: Int? = nil, pageSize: Int = 5000, as: Row.Type,
        _ body: (_ page: [Row], _ text: Data) throws -> Void
    ) throws {
        var offset = 0
        while true {
            let want = limit.map { min(pageSize, $0 - offset) } ?? pageSize
            if want <= 0 { break }
            var p = parameters
            p["limit"] = "\(want)"
            p["offset"] = "\(offset)"
            let target = path + Format.query(p)
            let answer = try client.get(target)
            guard (200..<300).contains(answer.status) else {
                try check(answer)
                throw Self.unexpected(target, "a list")
            }
            let page: [Row]
            do {
                page = try ControlCoding.decoder().decode([Row].self, from: answer.body)
            } catch {
                throw CLIError(
                    "the agent's answer to \(path) could not be read (\(error)); nothing was shown. Are the CLI and the agent the same version?"
                )
            }
            try body(page, answer.body)
            offset += page.count
            if page.count < want { break }
        }
    }

    /// Prints a JSON array as its pages arrive: the agent's own JSON text of each page, joined
    /// (re-encoding 100,000 records cost more than fetching them).
    func printJSONPages(_ path: String, _ parameters: [String: String] = [:], limit: Int? = nil) throws {
        var first = true
        var opened = false
        try pages(path, parameters, limit: limit, as: SkippedJSON.self) { page, text in
            // Opened once the first page arrived whole: an error answer instead is printed alone.
            if !opened {
                printRawJSON("[", terminator: "")
                opened = true
            }
            guard !page.isEmpty else { return }
            // The elements are what lies between the array's brackets (found on the bytes: the
            // page is megabytes, and String's Foundation trimming walks it in UTF-16).
            guard let open = text.firstIndex(of: UInt8(ascii: "[")), let close = text.lastIndex(of: UInt8(ascii: "]")),
                open < close
            else {
                throw Self.unexpected(path, "a list")
            }
            var inner = text[text.index(after: open)..<close]
            while let b = inner.first, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { inner = inner.dropFirst() }
            while let b = inner.last, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { inner = inner.dropLast() }
            printRawJSON((first ? "\n  " : ",\n  ") + String(decoding: inner, as: UTF8.self), terminator: "")
            first = false
        }
        printRawJSON(opened ? (first ? "]" : "\n]") : "[]")
    }
}

/// Everything the CLI prints as text goes through here: text from the agent (peer names and
/// messages, file names) has every unsafe scalar escaped (`PeerText`), so what a peer wrote
/// cannot retitle, clear or rewrite the user's terminal. Line breaks the CLI makes itself stay.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(
        PeerText.escaped(items.map { "\($0)" }.joined(separator: separator), keepingNewlines: true),
        terminator: terminator)
}

/// The one shape of every failure under `--json` (protocol/control-api.md, "Exit statuses"):
/// `{"error": {"code", "message"}}`, and for a command whose work had a result (`send`'s
/// transfers, `accept`'s offers) that result under `key` beside them, e.g.
/// `{"error": {"code": "failed", "message": "bob declined the photos", "transfer": {…}}}`.
func printJSONError(code: ErrorCode, message: String, detail: (key: String, value: any Encodable)? = nil) {
    guard !jsonOutputStarted.withLock({ $0 }) else { return }
    var body: [String: Any] = ["code": code.rawValue, "message": message]
    if let detail, let data = try? ControlCoding.encoder().encode(detail.value),
        let value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    {
        body[detail.key] = value
    }
    guard
        let data = try? JSONSerialization.data(
            withJSONObject: ["error": body], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    else { return }
    printRawJSON(String(decoding: data, as: UTF8.self))
}

/// JSON output: the same JSON values, with unsafe scalars as `\uXXXX` escapes.
func printRawJSON(_ json: String, terminator: String = "\n") {
    jsonOutputStarted.withLock { $0 = true }
    Swift.print(PeerText.jsonEscaped(json), terminator: terminator)
}

/// Whether some JSON went to stdout already: an error after that (a list cut short half-way)
/// is reported on stderr only, since a second document would corrupt the first.
let jsonOutputStarted = Mutex(false)

enum Format {
    static func bytes(_ n: Int64) -> String { ByteSize.text(n) }

    /// Foundation's `ISO8601FormatStyle` (Swift-native; the older ISO8601DateFormatter took
    /// more time than everything else `list` does for 100,000 rows).
    static func date(_ s: Any?) -> Date? {
        guard let s = s as? String else { return nil }
        return try? Date(s, strategy: .iso8601)
    }

    static func age(_ s: Any?) -> String {
        guard let d = (s as? Date) ?? date(s) else { return "-" }
        let secs = Int(Date().timeIntervalSince(d))
        if secs < 60 { return "\(max(secs, 0))s ago" }
        if secs < 3600 { return "\(secs / 60)m ago" }
        if secs < 86400 { return "\(secs / 3600)h ago" }
        return "\(secs / 86400)d ago"
    }

    /// `?k=v&…`, sorted by key, values percent-encoded.
    static func query(_ parameters: [String: String]) -> String {
        let items = parameters.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    static func int64(_ v: Any?) -> Int64 { (v as? NSNumber)?.int64Value ?? 0 }

    /// Left-aligned columns.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        // A cell is one line: a line break in it (a local file name, say) is shown escaped.
        let all = [header] + rows.map { $0.map { PeerText.escaped($0) } }
        // Widths in terminal cells (a CJK character or an emoji takes two), counted once per
        // cell (100,000-row lists are printed whole).
        let counts = all.map { $0.map(PeerText.cells) }
        let widths = header.indices.map { i in counts.map { $0[i] }.max() ?? 0 }
        var out = ""
        for (r, row) in all.enumerated() {
            if r > 0 { out += "\n" }
            for (i, cell) in row.enumerated() {
                if i > 0 { out += "  " }
                out += cell
                if i < row.count - 1 { out += String(repeating: " ", count: widths[i] - counts[r][i]) }
            }
        }
        return out
    }
}

/// Standard error gets the same escaping as `print` (a leading carriage return of a progress
/// line is the CLI's own and stays).
func writeStderr(_ text: String) {
    let cr = text.hasPrefix("\r")
    let body = PeerText.escaped(cr ? String(text.dropFirst()) : text, keepingNewlines: true)
    FileHandle.standardError.write(Data(((cr ? "\r" : "") + body).utf8))
}

/// A status line on a terminal's stderr, redrawn in place: text escaped as `writeStderr` does,
/// the rest of the old line erased (EL, `ESC [ K`, the CLI's own control sequence).
func writeStatusLine(_ text: String) {
    FileHandle.standardError.write(Data(("\r" + PeerText.escaped(text) + "\u{1B}[K").utf8))
}

/// Erases the status line (before ordinary lines are written).
func clearStatusLine() {
    FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
}

/// A decoded answer and the JSON it was decoded from.
struct Answer<T> {
    var value: T
    var json: Data
}
