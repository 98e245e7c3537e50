import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoNode
import LocafotoVault

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Named shared keys for .lfs files (photos encrypted for people outside the LAN).",
        discussion: """
            A .lfs file names its key in its header; `locafoto import x.lfs` decrypts it with the vault's \
            key of that name. Keys are random 256-bit, stored wrapped by the vault master key. They are \
            never printed unless exported, and never read from the command line.
            """,
        subcommands: [Create.self, List.self, Delete.self, Export.self, Import.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a random key.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Key name (written into .lfs headers; case-sensitive, at most 128 bytes).") var name: String
        func run() throws {
            let r = try global.fetch(SharedKeyInfo.self, "/v1/keys/create", body: KeyNameRequest(name: name))
            global.say(r) { "created key '\(name)' (fingerprint \($0.fingerprint))" }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List keys: name, created, fingerprint, photos using it.")
        @OptionGroup var global: GlobalOptions
        func run() throws {
            try global.printList(
                SharedKeyInfo.self, "/v1/keys", empty: "No keys. Create one with `locafoto key create NAME`.",
                ["NAME", "FINGERPRINT", "PHOTOS", "CREATED"]
            ) { [$0.name, $0.fingerprint, "\($0.photoCount)", Format.age($0.createdDate)] }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a key (refused while photos imported with it exist, unless --force).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Flag(help: "Delete even though photos were imported with it (they stay readable: each has its own vault key).")
        var force = false
        func run() throws {
            let r = try global.fetch(
                SharedKeyInfo.self, "/v1/keys/delete", body: KeyDeleteRequest(name: name, force: force))
            global.say(r) { _ in "deleted key '\(name)'" }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a key as hex (or write it to a 0600 file) to share it.",
            discussion:
                "Anyone with this hex can read every .lfs file made with the key. Share it over a channel you trust.")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Option(
            name: [.short, .long],
            help: "Write the hex to this file (created 0600, must not exist) instead of standard output.") var output:
            String?
        func run() throws {
            let hex = try global.fetch(KeyExport.self, "/v1/keys/export", body: KeyNameRequest(name: name)).value.hex
            writeStderr("warning: this is the secret key '\(name)'; anyone holding it can decrypt its .lfs files\n")
            if let output {
                let path = NodeHome.absolute(output)
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw CLIError("cannot create \(path): \(String(cString: strerror(errno)))") }
                let line = Array((hex + "\n").utf8)
                let ok = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) == $0.count }
                close(fd)
                guard ok else { throw CLIError("cannot write \(path)") }
                print("wrote key '\(name)' to \(path)")
            } else {
                print(hex)
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a key given as 64 hex digits, from a file or standard input (never the command line).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Argument(help: "File holding the hex; omit or `-` for standard input.") var file: String?
        func run() throws {
            var data: Data
            if let file, file != "-" {
                guard let d = FileManager.default.contents(atPath: NodeHome.absolute(file)) else {
                    throw CLIError("cannot read \(file)")
                }
                data = d
            } else {
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            defer { data.resetBytes(in: 0..<data.count) }
            guard data.count <= 4096 else { throw CLIError("that is not a key: expected 64 hex digits") }
            let r = try global.fetch(
                SharedKeyInfo.self, "/v1/keys/import",
                body: KeyImportRequest(name: name, hex: String(decoding: data, as: UTF8.self)))
            global.say(r) { "imported key '\(name)' (fingerprint \($0.fingerprint))" }
        }
    }
}
