import Foundation
import LocafotoCrypto

/// Where one node keeps its state. Everything lives under one directory (`--home`,
/// `LOCAFOTO_HOME`, or `$XDG_DATA_HOME/locafoto`), so two agents on one machine only need
/// two homes. The control socket goes to `$XDG_RUNTIME_DIR` when that exists.
public struct NodeHome: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = (directory as NSString).standardizingPath
    }

    /// `--home` wins, then `LOCAFOTO_HOME`, then `$XDG_DATA_HOME/locafoto`, then `~/.local/share/locafoto`.
    public static func resolve(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> NodeHome
    {
        if let e = explicit, !e.isEmpty { return NodeHome(directory: absolute(e)) }
        if let e = environment["LOCAFOTO_HOME"], !e.isEmpty { return NodeHome(directory: absolute(e)) }
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return NodeHome(directory: x + "/locafoto") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return NodeHome(directory: home + "/.local/share/locafoto")
    }

    public static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    public var identityFile: String { directory + "/identity.json" }
    public var storeFile: String { directory + "/agent.sqlite" }
    public var vaultDirectory: String { directory + "/vault" }
    public var spoolDirectory: String { directory + "/spool" }
    /// The web app's port chosen when the asked-for one was taken: tried first at the next start,
    /// so that a bookmark keeps working (a decimal number and a newline).
    public var webPortFile: String { directory + "/web-port" }
    /// A relay's deposits (`locafoto relay`; see LocafotoRelay's RelayStore for the layout).
    public var relayDirectory: String { directory + "/relay" }

    /// The control socket path: `--socket`, `LOCAFOTO_SOCKET`, `$XDG_RUNTIME_DIR/locafoto-<hash of home>.sock`,
    /// else `<home>/agent.sock`. The hash keeps agents with different homes apart and the path short
    /// (Unix socket paths are limited to 107 bytes).
    public func socketPath(explicit: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let e = explicit, !e.isEmpty { return NodeHome.absolute(e) }
        if let e = environment["LOCAFOTO_SOCKET"], !e.isEmpty { return NodeHome.absolute(e) }
        if let run = environment["XDG_RUNTIME_DIR"], run.hasPrefix("/"), FileManager.default.fileExists(atPath: run) {
            let tag = Hex.encode(SHA256.hash(Array(directory.utf8)).prefix(6))
            return "\(run)/locafoto-\(tag).sock"
        }
        return directory + "/agent.sock"
    }

    /// Creates the home (0700) if needed.
    public func prepare() throws {
        for d in [directory, spoolDirectory] {
            try FileManager.default.createDirectory(
                atPath: d, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = chmod(d, 0o700)
        }
    }
}
