import ArgumentParser
import Foundation

struct TransfersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfers", abstract: "List outgoing transfers: in progress, interrupted (waiting to resume), and recent ones.",
        discussion: """
            An interrupted transfer (the connection broke, or either agent restarted) is offered again \
            when its peer is reachable, and continues where the receiver stopped; the receiver is not \
            asked to accept it again. A file that changed meanwhile is sent again from the start.
            """)
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try guarded {
            let list = try global.list("GET", "/v1/transfers")
            if global.json { return global.printJSON(list) }
            guard !list.isEmpty else { return print("No transfers.") }
            print(Format.table(
                ["ID", "PEER", "STATE", "PROGRESS", "MESSAGE"],
                list.map { t in
                    let sent = Format.int64(t["bytesSent"]), total = Format.int64(t["totalBytes"])
                    return [
                        String((t["id"] as? String ?? "").prefix(8)), t["peer"] as? String ?? "", t["state"] as? String ?? "",
                        "\(Format.bytes(sent)) / \(Format.bytes(total))", t["message"] as? String ?? "",
                    ]
                }))
        }
    }
}
