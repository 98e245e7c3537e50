import ArgumentParser
import Foundation
import LocafotoControl

/// `locafoto preview OFFER [N]`: the preview an offered item came with, to look at before deciding.
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Write the preview of an offered photo (a small JPEG) to a file or standard output.",
        discussion: """
            Senders offer their photos with a small preview (at most 160 px, 16 KiB, no metadata) \
            unless they send with --no-preview. `locafoto inbox` says which offers have previews; \
            `locafoto preview ID 2 -o p.jpg` writes the second photo's (photos are counted from 1, as `receive` and the web app show them), `-o -` \
            writes it to standard output (e.g. `| display` or `| kitty +kitten icat`). The agent \
            keeps previews sealed to its key and opens one only for this answer; they go when the \
            offer is decided.

            Exit status: 66 when the offer, the item or its preview does not exist.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Offer id (or a unique prefix, 4+ characters).", completion: Completions.pendingOffers) var offer:
        String
    @Argument(help: "The photo's number in the offer, counting from 1.") var item: Int = 1
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Where to write the JPEG; - for standard output.", valueName: "file"))
    var output: String?

    func validate() throws {
        guard item >= 1 else { throw ValidationError("photos in an offer are counted from 1") }
        if output == nil, isatty(STDOUT_FILENO) == 1 {
            throw ValidationError(
                "give -o FILE to write the preview to a file, or -o - to write the JPEG to standard output")
        }
    }

    func run() throws {
        let path = "/v1/inbox/\(offer)/items/\(item - 1)/preview"  // the API counts from 0
        let r = try global.client.get(path)
        guard r.status == 200 else {
            try global.check(r)  // the agent's error, with its exit status
            throw CLIError("the agent answered \(r.status)")
        }
        if let output, output != "-" {
            guard
                FileManager.default.createFile(
                    atPath: output, contents: r.body, attributes: [.posixPermissions: 0o600])
            else {
                throw CLIError("cannot write \(output)", code: .io)
            }
            if !global.json { print("wrote the preview of photo \(item) (\(r.body.count) bytes) to \(output)") }
        } else {
            FileHandle.standardOutput.write(r.body)
        }
    }
}
