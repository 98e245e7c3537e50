/// Errors of the crypto layer. The message says what failed; none carries secret material.
public struct CryptoError: Error, Equatable, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String { case authenticationFailed, invalidLength, invalidKey, kdfFailed, unavailable }
        private let value: Value
        private init(_ value: Value) { self.value = value }
        /// An AEAD tag, signature or sealed box did not verify: wrong key or altered bytes.
        public static let authenticationFailed = Code(.authenticationFailed)
        public static let invalidLength = Code(.invalidLength)
        public static let invalidKey = Code(.invalidKey)
        /// Argon2id could not run (usually: not enough memory for the chosen limits).
        public static let kdfFailed = Code(.kdfFailed)
        /// The primitive is not available on this CPU (AES-256-GCM without AES-NI).
        public static let unavailable = Code(.unavailable)
        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func length(_ what: String, expected: Int, got: Int) -> CryptoError {
        CryptoError(.invalidLength, "\(what) must be \(expected) bytes, got \(got)")
    }
}
