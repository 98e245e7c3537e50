/// The codes of one layer's errors: a closed list, each with a stable name (its raw value) that
/// logs, tests and other layers' mappings use.
public protocol LayerErrorCode: Hashable, Sendable, CustomStringConvertible, RawRepresentable
where RawValue == String {}

extension LayerErrorCode {
    public var description: String { rawValue }
}

/// The one shape of an error in every layer below the agent (crypto, Noise, formats, media, the
/// vault, discovery): a code from the layer's list, a message that says what failed and, where
/// there is something to do, what to do; and the lower-level error it reports, if any (an errno,
/// SQLite's message, libvips'), kept for the log. No message or cause ever carries key
/// material or a passphrase.
///
/// Each layer names its own: `public typealias VaultError = LayerError<VaultErrorCode>`, so a
/// `catch let e as VaultError` still says which layer failed.
public struct LayerError<C: LayerErrorCode>: ExplainedError, CustomStringConvertible, Equatable {
    public typealias Code = C

    public let code: Code
    public let message: String
    /// The error this one reports, for the log and for a caller that needs the detail.
    public let cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, then the cause in parentheses: the log's line. A peer is told `message` only.
    public var description: String {
        guard let cause else { return message }
        let detail = "\(cause)"
        // An error that reports another's in its words (an agent error for a vault error) adds
        // only what the other had more.
        if detail.hasPrefix(message) { return detail }
        return "\(message) (\(detail))"
    }

    /// Two errors are the same when they say the same: their causes are for the log.
    public static func == (a: Self, b: Self) -> Bool { a.code == b.code && a.message == b.message }
}

/// A cause that is only text (an avahi or errno message with nothing else to keep).
public struct CauseText: Error, CustomStringConvertible {
    public let description: String

    public init(_ text: String) { description = text }
}

/// An error with a message for a person apart from its log line (`LayerError`): what a peer or
/// the control API is told of it, without the causes behind it.
public protocol ExplainedError: Error {
    var message: String { get }
}
