/// The closed, numbered set of error codes carried in ERROR, DECISION and ITEM_RESULT messages
/// (protocol/messages.md "Error codes"). Unknown numbers from a newer peer decode to `.unknown`.
public enum WireErrorCode: UInt16, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case unknown = 0
    case protocolViolation = 1
    case unsupportedVersion = 2
    case refusedByPolicy = 3
    case rateLimited = 4
    case tooLarge = 5
    case expired = 6
    case unknownOffer = 7
    case badSignature = 8
    case decryptFailed = 9
    case unsupportedContent = 10
    case sizeMismatch = 11
    case hashMismatch = 12
    case storageFailed = 13
    case cancelled = 14
    case internalError = 15
    case identityMismatch = 16

    public init(wire value: UInt16) {
        self = WireErrorCode(rawValue: value) ?? .unknown
    }

    public init(from decoder: any Decoder) throws {
        self.init(wire: try decoder.singleValueContainer().decode(UInt16.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    /// Stable name used in JSON output and documentation.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .protocolViolation: "protocol_violation"
        case .unsupportedVersion: "unsupported_version"
        case .refusedByPolicy: "refused_by_policy"
        case .rateLimited: "rate_limited"
        case .tooLarge: "too_large"
        case .expired: "expired"
        case .unknownOffer: "unknown_offer"
        case .badSignature: "bad_signature"
        case .decryptFailed: "decrypt_failed"
        case .unsupportedContent: "unsupported_content"
        case .sizeMismatch: "size_mismatch"
        case .hashMismatch: "hash_mismatch"
        case .storageFailed: "storage_failed"
        case .cancelled: "cancelled"
        case .internalError: "internal_error"
        case .identityMismatch: "identity_mismatch"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}

/// Errors of the wire layer: malformed or out-of-order input from a peer.
public struct WireError: Error, CustomStringConvertible, Equatable, Sendable {
    public let code: WireErrorCode
    public let message: String

    public init(_ code: WireErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.name)]" }
}
