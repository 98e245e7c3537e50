import LocafotoErrors

/// The CLI's exit statuses, one table for every command (protocol/control-api.md "Exit
/// statuses", docs/usage.md "Peer names, homes, exit statuses and passphrases"), after BSD's sysexits.h so that scripts can tell a typo
/// from an agent that is not running.
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

    /// The code of a failure the CLI only knows by its status (ArgumentParser's usage errors,
    /// a status a command computed), for `--json`.
    public static func code(for status: Int32) -> ErrorCode {
        let code: ErrorCode =
            switch status {
            case usage: .invalidRequest
            case dataError: .unsupported
            case notFound: .notFound
            case unavailable: .unavailable
            case software: .internalError
            case ioError: .io
            case tryLater: .vaultLocked
            case noPermission: .refused
            default: .failed
            }
        return code
    }
}

/// Every code an error carries, from the agent (`{"error": {"code", "message"}}`) or from the
/// CLI itself, and the exit status of each: the one table the CLI's statuses come from.
public enum ErrorCode: String, CaseIterable, Sendable, LayerErrorCode {
    case invalidRequest, ambiguous
    case corrupt, unsupported
    case notFound, noVault, noPreview
    case peerUnavailable, timeout
    case internalError
    case io
    case vaultLocked, throttled
    case refused, identityMismatch, insecure
    case conflict, unauthenticated
    /// The CLI's own: it ran and did not happen; no agent answers.
    case failed, unavailable

    public var exitStatus: Int32 {
        switch self {
        case .invalidRequest, .ambiguous: ExitStatus.usage
        case .corrupt, .unsupported: ExitStatus.dataError
        case .notFound, .noVault, .noPreview: ExitStatus.notFound
        case .peerUnavailable, .timeout, .unavailable: ExitStatus.unavailable
        case .internalError: ExitStatus.software
        case .io: ExitStatus.ioError
        case .vaultLocked, .throttled: ExitStatus.tryLater
        case .refused, .identityMismatch, .insecure: ExitStatus.noPermission
        case .conflict, .unauthenticated, .failed: ExitStatus.failed
        }
    }
}

extension ErrorCode: Codable {
    /// A code this CLI does not know (a newer agent's) reads as a plain failure: its exit status
    /// is 1, and the answer that carries it is still read.
    public init(from decoder: any Decoder) throws {
        self = ErrorCode(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .failed
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
