import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoSession
import LocafotoWire

@main
struct Locafoto: AsyncParsableCommand {
    static func main() async {
        // A peer or the agent closing a socket must surface as an error message, not kill the CLI.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            // Before any thread starts (ConnectionGate.useOneHeapArena): what a transfer frees
            // goes back to one arena instead of staying in one per thread.
            if command is AgentCommand { ConnectionGate.useOneHeapArena() }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let error = Failure.report(error)
            // Under --json a usage error (a bad option, a missing argument) is the same JSON
            // error as any other; help and --version are not errors.
            let status = exitCode(for: error)
            if status != .success, !(error is ExitCode), CommandLine.arguments.dropFirst().contains("--json") {
                printJSONError(code: ExitStatus.code(for: status.rawValue), message: message(for: error))
            }
            exit(withError: error)
        }
    }

    /// The release of this binary (CLI and agent are one program); the wire protocol version
    /// is separate: peers of other releases interoperate as long as it matches.
    static let version = "0.9.0"

    static let configuration = CommandConfiguration(
        commandName: "locafoto",
        abstract: "Share photos between Linux machines on a LAN, end-to-end encrypted, into an encrypted vault.",
        discussion: """
            Each machine runs an agent (`locafoto agent`) that advertises itself over mDNS, authenticates \
            peers with a Noise XX handshake and receives offers into an inbox. Every other command talks \
            to the agent over its control socket.

            Quick start:
              locafoto vault init             create the vault (asks a passphrase)
              locafoto agent                  run the agent (Ctrl-C stops it)
              locafoto peers                  who is on the network
              locafoto send bob a.jpg b.heic  offer photos to bob, wait for him
              locafoto receive                wait for offers and answer each
              locafoto inbox / accept ID      offers made to you
              locafoto list / export ID DIR   your photos
              locafoto relay --allow FP       hold photos for peers that are offline

            Environment: LOCAFOTO_HOME (node folder), LOCAFOTO_SOCKET, LOCAFOTO_PASSPHRASE_FILE.

            Exit status: 0 done; 1 it did not happen (rejected, failed, cancelled); 64 usage; \
            65 refused content; 66 not found; 69 no agent running or peer unreachable; 70 internal \
            error; 74 I/O error; 75 vault locked, try later; 77 refused (wrong passphrase, unsafe \
            socket). With --json, errors are also printed as {"error": {"code", "message"}}.
            """,
        version: "locafoto \(version) (wire protocol \(WireProtocol.version))",
        // Grouped by what people do (`locafoto --help` lists each group under its name).
        subcommands: [MediaWorkerCommand.self],
        groupedSubcommands: [
            CommandGroup(
                name: "Sharing",
                subcommands: [
                    SendCommand.self, ReceiveCommand.self, InboxCommand.self, PreviewCommand.self, AcceptCommand.self,
                    RejectCommand.self,
                    TransfersCommand.self, CancelCommand.self,
                ]),
            CommandGroup(
                name: "Peers",
                subcommands: [
                    PeersCommand.self, PairCommand.self, TrustCommand.self, UntrustCommand.self, ForgetCommand.self,
                    PolicyCommand.self, LocalSendCommand.self,
                ]),
            CommandGroup(
                name: "Your photos",
                subcommands: [
                    ListCommand.self, ShowCommand.self, ThumbCommand.self, ExportCommand.self, ImportCommand.self,
                    CaptureCommand.self,
                    AlbumCommand.self, TagCommand.self, FavoriteCommand.self, HideCommand.self, DeleteCommand.self,
                    FilterCommand.self,
                    CompressCommand.self,
                ]),
            CommandGroup(
                name: "Vault, keys and backups",
                subcommands: [
                    VaultCommand.self, UnlockCommand.self, LockCommand.self, BackupCommand.self, RestoreCommand.self,
                    KeyCommand.self,
                    BundleCommand.self, OpenCommand.self, IdentityCommand.self, IDCommand.self,
                ]),
            CommandGroup(
                name: "Running it",
                subcommands: [
                    AgentCommand.self, StatusCommand.self, DoctorCommand.self, WebCommand.self, RelayCommand.self,
                ]),
        ])
}

/// Options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Node folder (identity, vault, inbox).",
            discussion: "Default: $LOCAFOTO_HOME, else $XDG_DATA_HOME/locafoto.", valueName: "dir"))
    var home: String?

    @Option(name: .long, help: ArgumentHelp("Control socket of the agent.", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print machine-readable JSON instead of text.")
    var json = false
}
