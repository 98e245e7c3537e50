/// Errors of the format layer (LOCA files, content sniffing, and later bundles).
/// The message says what is wrong and, where there is something to do, what to do.
/// Shared file: add cases additively.
public struct FormatError: Error, CustomStringConvertible, Equatable, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case truncated, badMagic, unsupportedVersion, unsupportedAlgorithm, tooLarge, malformed,
                unsupportedContent, sizeMismatch, badSignature, wrongRecipient, tagMismatch
            case invalidKey
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Fewer bytes than the structure needs.
        public static let truncated = Code(.truncated)
        /// The bytes do not start with the expected magic number: not this kind of file.
        public static let badMagic = Code(.badMagic)
        /// A version this build does not read.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// An algorithm identifier this build does not know.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// A size above the format's limit.
        public static let tooLarge = Code(.tooLarge)
        /// A field has a value the format forbids (e.g. non-zero reserved bytes).
        public static let malformed = Code(.malformed)
        /// Content that is not one of the supported image formats.
        public static let unsupportedContent = Code(.unsupportedContent)
        /// The total length disagrees with the length the header announces.
        public static let sizeMismatch = Code(.sizeMismatch)

        /// A signature that does not verify: the bytes were altered or not made by the claimed sender.
        public static let badSignature = Code(.badSignature)
        /// A bundle addressed to another node's key.
        public static let wrongRecipient = Code(.wrongRecipient)

        /// The ciphertext does not match its AEAD tag: altered in transit or at rest.
        public static let tagMismatch = Code(.tagMismatch)

        /// Key material in the wrong form (e.g. a shared key that is not 64 hex digits).
        public static let invalidKey = Code(.invalidKey)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
