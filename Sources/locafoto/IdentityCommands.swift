import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoFormats
import LocafotoNode

/// `locafoto identity`: how identity.json keeps this node's private key, and switching it.
/// Works on the home directly, with the agent stopped (see `IdentityProtection` for why).
struct IdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Show how the node identity is stored, or protect it with the vault passphrase.",
        discussion: """
            By default identity.json holds the node's private key in clear (mode 0600), so that an unattended \
            node or a relay starts without anyone typing a passphrase; whoever reads the disk can then act as \
            this node towards its peers. `protect` wraps the key under the vault's master key: the key on disk \
            then opens only with the vault passphrase, and the agent needs the passphrase to start \
            (--passphrase-file, LOCAFOTO_PASSPHRASE_FILE, the systemd credential, or a terminal; `agent --locked` \
            is refused). The fingerprint does not change. Stop the agent first.
            """,
        subcommands: [Show.self, VerbCommand<Protect>.self, VerbCommand<Unprotect>.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "This node's fingerprint and whether its identity is protected (no agent or passphrase needed).")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let home = global.nodeHome
            guard FileManager.default.fileExists(atPath: home.identityFile) else {
                throw CLIError(
                    "this node has no identity yet (\(home.identityFile)); the agent makes one when it first starts",
                    code: .notFound)
            }
            // From the clear public key: works while the key itself is protected.
            let stored = try Identity.read(at: home.identityFile)
            try report(
                global,
                IdentityProtection.Outcome(
                    fingerprint: stored.fingerprint.description, protection: stored.protection, changed: false),
                verb: nil)
        }
    }

    enum Protect: Verb {
        static let configuration = CommandConfiguration(
            commandName: "protect",
            abstract: "Wrap the node's private key under the vault (the agent then needs the passphrase to start).")
        static func run(_ t: VaultPassphrase, _ global: GlobalOptions) throws { try set(.vault, global, t.file) }
    }

    enum Unprotect: Verb {
        static let configuration = CommandConfiguration(
            commandName: "unprotect",
            abstract: "Store the node's private key in clear again (mode 0600), for a node that starts unattended.")
        static func run(_ t: VaultPassphrase, _ global: GlobalOptions) throws { try set(.clear, global, t.file) }
    }

    static func set(_ protection: Identity.Protection, _ global: GlobalOptions, _ passphraseFile: String?) throws {
        umask(0o077)
        let pass = try Passphrase.obtain(file: passphraseFile, prompt: "Vault passphrase: ")
        let outcome = try IdentityProtection.set(protection, home: global.nodeHome, passphrase: pass)
        try report(
            global, outcome, verb: protection == .vault ? "protected by the vault passphrase" : "stored in clear")
    }

    static func report(_ global: GlobalOptions, _ o: IdentityProtection.Outcome, verb: String?) throws {
        if global.json { return try global.printEncoded(o) }
        print("fingerprint: \(o.fingerprint)")
        print(
            "protection:  \(o.protection == .vault ? "vault (the agent needs the vault passphrase to start)" : "clear (mode 0600; the agent starts unattended)")"
        )
        if let verb {
            print(
                o.changed
                    ? "The node identity is now \(verb)." : "The node identity already was \(verb); nothing changed.")
        }
    }
}
