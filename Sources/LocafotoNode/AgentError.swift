import LocafotoControl
import LocafotoVault
import LocafotoWire

/// Errors of the agent, each with a message that says what to do. `httpStatus` is what the
/// control API answers with.
public struct AgentError: Error, CustomStringConvertible, Sendable {
    /// A code of the control API's one table (`ErrorCode`, whose exit statuses the CLI takes).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        package let value: ErrorCode
        private init(_ value: ErrorCode) { self.value = value }
        public static let io = Code(.io)
        public static let insecure = Code(.insecure)
        public static let corrupt = Code(.corrupt)
        public static let invalidRequest = Code(.invalidRequest)
        public static let notFound = Code(.notFound)
        public static let ambiguous = Code(.ambiguous)
        public static let peerUnavailable = Code(.peerUnavailable)
        public static let identityMismatch = Code(.identityMismatch)
        public static let refused = Code(.refused)
        public static let vaultLocked = Code(.vaultLocked)
        public static let noVault = Code(.noVault)
        public static let conflict = Code(.conflict)
        public static let internalError = Code(.internalError)
        public static let timeout = Code(.timeout)
        public static let unsupported = Code(.unsupported)
        /// Too many failed unlock attempts: wait before the next one.
        public static let throttled = Code(.throttled)
        /// The offered item has no preview (none was sent, it failed its checks, or the offer ended).
        public static let noPreview = Code(.noPreview)
        /// The web app without a session: log in first (`locafoto web`).
        public static let unauthenticated = Code(.unauthenticated)
        public var description: String { value.rawValue }
        /// The CLI's exit status for it (`ErrorCode.exitStatus`).
        public var exitStatus: Int32 { value.exitStatus }

        package var httpStatus: Int {
            switch value {
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

    public let code: Code
    public let message: String
    /// The error this one reports, when it reports another layer's (a vault's, a session's):
    /// kept for the log and for a caller that needs the detail; never shown to a peer.
    public let cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
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
extension AgentError: WireCoded {
    public var wireCode: WireErrorCode? {
        switch code.value {
        // The vault refused the photo for its content or size (not an image, over its limit).
        case .unsupported: .unsupportedContent
        case .identityMismatch: .identityMismatch
        case .refused: .refusedByPolicy
        case .throttled: .rateLimited
        default: nil
        }
    }
}
