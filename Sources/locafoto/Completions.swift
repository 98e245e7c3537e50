import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoNode

/// Shell completion of what only the running agent knows: peer names, offer ids, transfer ids.
/// The shell asks the binary (argument-parser's custom completion); the binary asks the agent of
/// the home named on the command line being completed (`--home`, else the environment). No
/// agent, or any error: no candidates, silently.
enum Completions {
    static let peers = CompletionKind.custom { words, _, prefix in
        names(words, "/v1/peers", prefix) { (p: PeerSummary) in p.name }
    }
    static let pendingOffers = CompletionKind.custom { words, _, prefix in
        names(words, "/v1/inbox", prefix) { (o: InboxOffer) in o.state == "pending" ? String(o.id.prefix(8)) : nil }
    }
    static let transfers = CompletionKind.custom { words, _, prefix in
        names(words, "/v1/transfers", prefix) { (t: TransferSnapshot) in
            t.finishedAt == nil ? String(t.id.prefix(8)) : nil
        }
    }
    /// `send`: peer names and files (its arguments are peers, then files).
    static let peersAndFiles = CompletionKind.custom { words, _, prefix in
        names(words, "/v1/peers", prefix) { (p: PeerSummary) in p.name } + files(prefix)
    }

    private static func names<Row: Decodable>(
        _ words: [String], _ path: String, _ prefix: String, _ pick: (Row) -> String?
    ) -> [String] {
        var home: String?
        var socket: String?
        for (i, w) in words.enumerated() where i + 1 < words.count {
            if w == "--home" { home = words[i + 1] }
            if w == "--socket" { socket = words[i + 1] }
        }
        let client = ControlClient(socketPath: NodeHome.resolve(explicit: home).socketPath(explicit: socket))
        guard let r = try? client.get(path), r.status == 200,
            let list = try? ControlCoding.decoder().decode([Row].self, from: r.body)
        else {
            return []
        }
        return Array(Set(list.compactMap(pick))).filter { $0.hasPrefix(prefix) }.sorted()
    }

    private static func files(_ prefix: String) -> [String] {
        let dir = prefix.contains("/") ? String(prefix[...prefix.lastIndex(of: "/")!]) : ""
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        return entries.filter { !$0.hasPrefix(".") }.map { dir + $0 }.filter { $0.hasPrefix(prefix) }.sorted()
    }
}
