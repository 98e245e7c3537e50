import ArgumentParser
import LocafotoControl

/// A command that does one thing to what it names: `trust PEER`, `localsend forget DEVICE`,
/// `favorite [ID…]`. The command is the same for each; what differs is its verb's: its words in
/// `--help`, what it names (`Target`), and what it asks of the agent.
protocol Verb {
    associatedtype Target: ParsableArguments
    static var configuration: CommandConfiguration { get }
    static func run(_ target: Target, _ global: GlobalOptions) throws
}

struct VerbCommand<V: Verb>: ParsableCommand {
    static var configuration: CommandConfiguration { V.configuration }
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: V.Target

    func run() throws { try V.run(target, global) }
}

/// A known peer, by name or fingerprint.
struct PeerName: ParsableArguments {
    @Argument(help: "Display name or fingerprint prefix.", completion: Completions.peers) var peer: String
}

/// A LocalSend device met before.
struct DeviceName: ParsableArguments {
    @Argument(help: "The device's name, or at least 8 hex digits of its fingerprint.") var device: String
}

/// Where the vault passphrase comes from when not from the terminal.
struct VaultPassphrase: ParsableArguments {
    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp("Read the vault passphrase from this file.", valueName: "file"))
    var file: String?
}

/// Photos to mark or unmark: by id, or by a filter.
struct MarkedPhotos: ParsableArguments {
    @OptionGroup var filter: FilterOptions
    @Flag(help: "Undo it instead: unfavorite, or unhide.") var off = false
    @Argument(help: "Photo ids (or unique prefixes).") var photos: [String] = []

    /// The batch action `action`, or `undo` with `--off`.
    func mark(_ action: BatchAction, _ undo: BatchAction, _ global: GlobalOptions) throws {
        try BatchCommand.run(global, filter, ids: photos, action: off ? undo : action)
    }
}
