import ArgumentParser
import Foundation
import LocafotoControl

struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel an outgoing transfer: being prepared, waiting for a decision, sending, or interrupted.",
        discussion: """
            The id (or a unique prefix of at least 4 characters) is the one `send` printed and \
            `locafoto transfers` lists; the receiver's inbox shows the same id. The receiver is told and \
            drops the offer and any partial photo (photos already imported stay). An interrupted transfer \
            is dropped at once; its receiver is told if it is online, else it deletes the partial photos \
            when the resume window ends. A transfer held by a relay cannot be cancelled. The receiver \
            can stop a running transfer with `locafoto reject OFFER`.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Transfer id or unique prefix.", completion: Completions.transfers) var transfer: String

    func run() throws {
        let answer = try global.fetch(TransferSnapshot.self, "/v1/transfers/\(transfer)/cancel", method: "POST")
        let t = answer.value
        guard t.state == .cancelled else {
            // It ended otherwise meanwhile (done, rejected…), or is still stopping.
            let message = "the transfer to \(t.peer.name) is \(t.state.rawValue): \(t.message ?? "")"
            if global.json {
                printJSONError(
                    code: ExitStatus.code(for: ExitStatus.failed), message: message, detail: ("transfer", t))
            } else {
                print(message)
            }
            throw ExitCode(ExitStatus.failed)
        }
        global.say(answer) { _ in "cancelled the transfer to \(t.peer.name)" }
    }
}
