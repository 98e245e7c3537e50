/// Errors of the Noise layer. The message says what happened; none carries key material.
public struct NoiseError: Error, Equatable, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case decryptFailed, invalidMessage, outOfOrder, handshakeComplete, handshakeIncomplete,
                handshakeFailed, unsupported, nonceExhausted, missingKey, invalidKey, invalidArgument
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// An AEAD tag did not verify: wrong key, wrong transcript (prologue, keys) or altered bytes.
        public static let decryptFailed = Code(.decryptFailed)
        /// A message is shorter than its pattern requires, or longer than 65535 bytes (§3).
        public static let invalidMessage = Code(.invalidMessage)
        /// Writing when the peer should write, reading when we should write, or splitting twice.
        public static let outOfOrder = Code(.outOfOrder)
        /// A handshake message was written or read after the last one.
        public static let handshakeComplete = Code(.handshakeComplete)
        /// `split()` before the last handshake message.
        public static let handshakeIncomplete = Code(.handshakeIncomplete)
        /// An earlier error aborted this handshake; it cannot be resumed (its transcript is spoilt).
        public static let handshakeFailed = Code(.handshakeFailed)
        /// A protocol name, pattern, DH, cipher or hash this implementation does not provide.
        public static let unsupported = Code(.unsupported)
        /// The nonce reached 2^64-1, which §5.1 reserves: the CipherState is used up.
        public static let nonceExhausted = Code(.nonceExhausted)
        /// The pattern needs a key (local static, pre-message remote static, psk) that was not given.
        public static let missingKey = Code(.missingKey)
        /// A key of the wrong length, or a DH with a low-order public key.
        public static let invalidKey = Code(.invalidKey)
        /// A programming error by the caller: wrong buffer size, a key the pattern must not be given.
        public static let invalidArgument = Code(.invalidArgument)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
