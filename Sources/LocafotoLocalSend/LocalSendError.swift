import LocafotoErrors

/// Errors of the LocalSend layer: what a LocalSend peer sent that this node does not take.
public typealias LocalSendError = LayerError<LocalSendErrorCode>

public enum LocalSendErrorCode: String, LayerErrorCode {
    /// A body or a field that breaks the protocol or this node's rules (HTTP 400).
    case invalid
    /// A body over the size this node reads (HTTP 413; the apps treat it as 400).
    case tooLarge
}

extension LocalSendError {
    static func invalid(_ message: String) -> LocalSendError { LocalSendError(.invalid, message) }
    static func tooLarge(_ message: String) -> LocalSendError { LocalSendError(.tooLarge, message) }
}
