import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoControlServer
import LocafotoFormats
import LocafotoNode
import LocafotoVault

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Write an encrypted backup of the whole vault to one file.",
        discussion:
            "Photos stay encrypted under their own keys; the catalog and the file layout are encrypted under a key derived from the vault master key. Restore it on any machine with `locafoto restore FILE` and the vault passphrase."
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Backup file to create (must not exist).") var file: String
    @Flag(
        help:
            "Also back up the node identity (its private key, encrypted in the backup like the rest), so that a restored node keeps its fingerprint and its peers' trust."
    )
    var withIdentity = false

    func run() throws {
        let r = try global.fetch(
            VaultBackup.Summary.self, "/v1/backup",
            body: BackupRequest(path: NodeHome.absolute(file), withIdentity: withIdentity ? true : nil))
        global.say(r) {
            "Backed up \($0.photos) photo(s), \(Format.bytes($0.bytes))\($0.identity == true ? " and the node identity" : "") to \($0.path)."
        }
    }
}

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a vault backup into this node's home (no agent needed).",
        discussion:
            "The home must not already have a vault. The backup's passphrase is read from the terminal or --passphrase-file; the restored vault keeps it. Nothing is moved into place unless the whole backup verifies."
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Backup file written by `locafoto backup`.") var file: String
    @Option(help: ArgumentHelp("Read the passphrase from this file.", valueName: "file")) var passphraseFile: String?
    @Flag(help: "Leave out the node identity a `backup --with-identity` holds (this node keeps, or makes, its own).")
    var withoutIdentity = false

    func run() throws {
        let home = global.nodeHome
        if ControlProbe.isAnswering(home.socketPath(explicit: global.socket)) {
            throw CLIError("an agent is running for \(home.directory); stop it before restoring", code: .failed)
        }
        try home.prepare()
        let pass = try Passphrase.obtain(file: passphraseFile, prompt: "Backup passphrase: ")
        let s = try Vault.restoreBackup(
            from: NodeHome.absolute(file), to: home.vaultDirectory, passphrase: pass,
            identityPath: withoutIdentity ? nil : home.identityFile)
        var fingerprint: String?
        if s.identity == true {
            // From the clear public key: a protected identity is restored protected.
            fingerprint = try Identity.read(at: home.identityFile).fingerprint.description
        }
        if global.json {
            struct Restored: Encodable {
                var vault: String
                var photos: Int
                var files: Int
                var bytes: Int64
                var fingerprint: String?
            }
            try global.printEncoded(
                Restored(vault: s.path, photos: s.photos, files: s.files, bytes: s.bytes, fingerprint: fingerprint))
        } else {
            print(
                "Restored \(s.photos) photo(s) into \(s.path)\(fingerprint.map { " and the node identity \($0)" } ?? ""). Start the agent and unlock with the same passphrase."
            )
        }
    }
}
