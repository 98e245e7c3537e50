import LocafotoControl
import LocafotoErrors
import LocafotoVault
import LocafotoWire

/// Errors of the agent, each with a message that says what to do, in the layers' one shape: its
/// codes are the control API's one table (`ErrorCode`, whose exit statuses the CLI takes), and
/// `httpStatus` is what the control API answers with. The cause, when it reports another layer's
/// error (a vault's, a session's), is kept for the log and never shown to a peer.
public typealias AgentError = LayerError<ErrorCode>

extension ErrorCode {
    package var httpStatus: Int {
        switch self {
        case .invalidRequest, .unsupported: 400
        case .notFound, .noPreview: 404
        case .ambiguous, .conflict: 409
        case .vaultLocked, .noVault: 423
        case .refused, .identityMismatch: 403
        case .peerUnavailable, .timeout: 503
        case .throttled: 429
        case .unauthenticated: 401
        case .internalError, .io, .corrupt, .insecure, .failed, .unavailable: 500
        }
    }
}

extension AgentError {
    /// The agent's answer for a vault error: the one place a vault code becomes an agent code
    /// (and through it an HTTP status and an exit status).
    package init(_ e: VaultError) {
        let code: AgentError.Code =
            switch e.code {
            case .wrongPassphrase: .refused
            case .locked: .vaultLocked
            case .notFound: .noVault
            case .photoNotFound: .notFound
            case .ambiguousPhoto: .ambiguous
            case .exists, .alreadyExists: .conflict
            case .unsupportedContent, .tooLarge, .malformedFile: .unsupported
            case .unknownKey: .notFound
            case .keyExists, .keyInUse: .conflict
            case .invalidKeyName, .invalidKey: .invalidRequest
            case .decryptionFailed: .corrupt
            case .throttled: .throttled
            case .albumLocked: .refused
            case .albumNotFound: .notFound
            case .albumExists, .conflict: .conflict
            case .invalidArgument: .invalidRequest
            case .duplicate: .conflict
            // The classify hook refused the photo for its content (exit status 65, like a non-image).
            case .vetoed: .unsupported
            default: .io
            }
        self.init(code, e.message, cause: e)
    }
}

/// What an agent error is to a peer (`WireError(_:local:)`): a refusal of the photo, the
/// policy or the key says so; anything else is this node's own failure, sent as what the node
/// was doing.
extension LayerError: WireCoded where C == ErrorCode {
    public var wireCode: WireErrorCode? {
        switch code {
        // The vault refused the photo for its content or size (not an image, over its limit).
        case .unsupported: .unsupportedContent
        case .identityMismatch: .identityMismatch
        case .refused: .refusedByPolicy
        case .throttled: .rateLimited
        default: nil
        }
    }
}
