import Foundation
import LocafotoAgent

extension GlobalOptions {
    var nodeHome: NodeHome { NodeHome.resolve(explicit: home) }
    var client: ControlClient { ControlClient(socketPath: nodeHome.socketPath(explicit: socket)) }

    /// Calls the agent; on an error answer, throws its message.
    func call(_ method: String, _ path: String, json body: [String: Any]? = nil) throws -> Any {
        let c = client
        let r = method == "GET" ? try c.get(path) : try c.request(method, path, body: try JSONSerialization.data(withJSONObject: body ?? [:]))
        return try decode(r)
    }

    func decode(_ r: ControlClient.Response) throws -> Any {
        let value = (try? JSONSerialization.jsonObject(with: r.body, options: [.fragmentsAllowed])) ?? [:]
        guard (200..<300).contains(r.status) else {
            if json { printJSON(value) }
            let e = (value as? [String: Any])?["error"] as? [String: Any]
            throw CLIError(e?["message"] as? String ?? "the agent answered \(r.status)", exitCode: r.status == 404 ? 66 : 1)
        }
        return value
    }

    func printJSON(_ value: Any) {
        if let d = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
            print(String(decoding: d, as: UTF8.self))
        }
    }
}

enum Format {
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n)
        var u = 0
        while v >= 1024 && u < units.count - 1 {
            v /= 1024
            u += 1
        }
        return u == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[u])
    }

    static func date(_ s: Any?) -> Date? {
        guard let s = s as? String else { return nil }
        return ISO8601DateFormatter().date(from: s)
    }

    static func age(_ s: Any?) -> String {
        guard let d = date(s) else { return "-" }
        let secs = Int(Date().timeIntervalSince(d))
        if secs < 60 { return "\(max(secs, 0))s ago" }
        if secs < 3600 { return "\(secs / 60)m ago" }
        if secs < 86400 { return "\(secs / 3600)h ago" }
        return "\(secs / 86400)d ago"
    }

    static func int64(_ v: Any?) -> Int64 { (v as? NSNumber)?.int64Value ?? 0 }

    /// Left-aligned columns.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { i in all.map { $0[i].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { i, c in i == row.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("locafoto: \(message)\n".utf8))
    exit(1)
}
