import ArgumentParser
import Foundation
import LocafotoControl

struct TransfersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfers",
        abstract: "List outgoing transfers: in progress, interrupted (waiting to resume), and recent ones.",
        discussion: """
            An interrupted transfer (the connection broke, or either agent restarted) is offered again \
            when its peer is reachable, and continues where the receiver stopped; the receiver is not \
            asked to accept it again. A file that changed meanwhile is sent again from the start.
            """)
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try global.printList(
            TransferSnapshot.self, "/v1/transfers", empty: "No transfers.",
            ["ID", "PEER", "STATE", "PROGRESS", "MESSAGE"]
        ) { t in
            [
                String(t.id.prefix(8)), t.peer.name, t.state.rawValue,
                "\(Format.bytes(t.sentBytes)) / \(Format.bytes(t.totalBytes))", t.message ?? "",
            ]
        }
    }
}
