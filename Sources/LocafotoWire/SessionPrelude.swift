/// The actions every session machine has for the messages any state may see: a PING is
/// answered with PONG, a PONG asks for nothing (messages.md "PING (0x08) / PONG (0x09)"), and an ERROR means the
/// peer failed and closes (messages.md "ERROR"). The machines' action enums conform with their
/// own cases of these names.
public protocol SessionActions: Sendable, Equatable {
    static var none: Self { get }
    static func reply(_ message: WireMessage) -> Self
    static func peerFailed(_ error: ErrorBody) -> Self
}

extension WireMessage {
    /// What `Action`'s machine does with this message whatever its state, and whether the
    /// session ends with it; nil for a message the machine's state decides.
    func answeredInAnyState<Action: SessionActions>(_: Action.Type) -> (action: Action, ends: Bool)? {
        switch self {
        case .ping: (.reply(.pong), false)
        case .pong: (.none, false)
        case .error(let e): (.peerFailed(e), true)
        default: nil
        }
    }
}
