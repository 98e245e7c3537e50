/// The CLI's exit statuses, one table for every command (README "Exit status"), after BSD's
/// sysexits.h so that scripts can tell a typo from an agent that is not running.
public enum ExitStatus {
    public static let ok: Int32 = 0
    /// The command ran and what it asked for did not happen: a peer rejected the offer, an item
    /// failed, a transfer was cancelled, the offer was already decided.
    public static let failed: Int32 = 1
    /// The command line or the request was wrong (a bad option value, an ambiguous name).
    public static let usage: Int32 = 64
    /// A file or a photo was refused for its content (corrupt, not a supported image).
    public static let dataError: Int32 = 65
    /// What was named does not exist: a photo, an offer, a peer, an album, the vault.
    public static let notFound: Int32 = 66
    /// No agent is running for this home, or the peer cannot be reached now.
    public static let unavailable: Int32 = 69
    /// A bug: the agent answered something it should not have.
    public static let software: Int32 = 70
    /// Reading or writing a file failed.
    public static let ioError: Int32 = 74
    /// Try again later: the vault is locked, or unlocking is throttled.
    public static let tryLater: Int32 = 75
    /// Refused: a wrong passphrase, a peer whose key does not match, a control socket that
    /// another user could reach.
    public static let noPermission: Int32 = 77

    /// The status for an error code of the control API (protocol/control-api.md "Errors").
    public static func forError(code: String) -> Int32 {
        switch code {
        case "invalidRequest", "ambiguous": usage
        case "corrupt", "unsupported": dataError
        case "notFound", "noVault", "noPreview": notFound
        case "peerUnavailable", "timeout": unavailable
        case "internalError": software
        case "io": ioError
        case "vaultLocked", "throttled": tryLater
        case "refused", "identityMismatch", "insecure": noPermission
        default: failed
        }
    }

    /// The control API's error code for a status the CLI raises itself (its JSON errors).
    public static func code(for status: Int32) -> String {
        switch status {
        case usage: "invalidRequest"
        case dataError: "unsupported"
        case notFound: "notFound"
        case unavailable: "unavailable"
        case software: "internalError"
        case ioError: "io"
        case tryLater: "vaultLocked"
        case noPermission: "refused"
        default: "failed"
        }
    }
}
