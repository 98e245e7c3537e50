import LocafotoWire

/// Errors of the relay store. `code` is what a session reports to the peer (DECISION or
/// ITEM_RESULT); `message` says what is wrong and, where there is something to do, what to do.
public struct RelayError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Bad relay configuration (allow-list entries, limits): the operator must fix it.
        case configuration
        /// A deposit the relay will not take (policy, quota, an offer id already in use).
        case refused
        /// A deposit or item that breaks the rules (sizes, indices, fields).
        case invalidDeposit
        /// An item whose bundle signature does not verify; it was dropped.
        case badSignature
        /// Files of a committed deposit are missing or unreadable.
        case damaged
        /// No such deposit.
        case notFound
        /// The file system or the database failed.
        case io
    }

    public let kind: Kind
    public let code: WireErrorCode
    public let message: String

    public init(_ kind: Kind, _ code: WireErrorCode, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension RelayError: WireCoded {
    public var wireCode: WireErrorCode? { code }
}
