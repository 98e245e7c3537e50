import ArgumentParser
import Foundation

struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Drop an interrupted outgoing transfer so that it is not offered again.",
        discussion: "The id (or a unique prefix of at least 4 characters) is listed by `locafoto transfers`. The receiver can drop its side with `locafoto reject OFFER`.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Transfer id or unique prefix.") var transfer: String

    func run() throws {
        try guarded {
            let t = try global.object("POST", "/v1/transfers/\(transfer)/cancel")
            if global.json { return global.printJSON(t) }
            print("cancelled the transfer to \(t["peer"] as? String ?? "the peer")")
        }
    }
}
