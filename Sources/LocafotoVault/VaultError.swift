/// Errors of the vault. The message says what went wrong and what to do about it; `underlying`
/// carries the lower-level cause (an errno text, an SQLite message) when there is one. No error
/// ever contains key material or a passphrase.
public struct VaultError: Error, CustomStringConvertible, Equatable, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case notFound, alreadyExists, wrongPassphrase, locked, unsupportedContent, tooLarge, corrupt, io,
                photoNotFound, ambiguousPhoto, exists, duplicate
            case unknownKey, keyExists, keyInUse, invalidKeyName, invalidKey, malformedFile, decryptionFailed
            case throttled, albumLocked, albumNotFound, albumExists, invalidArgument, conflict, vetoed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// There is no vault at the path (run `locafoto vault init`).
        public static let notFound = Code(.notFound)
        /// `create` found a vault already there.
        public static let alreadyExists = Code(.alreadyExists)
        /// The passphrase does not unlock the vault.
        public static let wrongPassphrase = Code(.wrongPassphrase)
        /// The operation needs the vault unlocked.
        public static let locked = Code(.locked)
        /// The data is not one of the supported image formats.
        public static let unsupportedContent = Code(.unsupportedContent)
        /// The photo is larger than the limit of the operation.
        public static let tooLarge = Code(.tooLarge)
        /// A photo file or the catalog is damaged or was altered (authentication failed, bad header, ...).
        public static let corrupt = Code(.corrupt)
        /// A file system or database operation failed.
        public static let io = Code(.io)
        /// No photo has this ID (or ID prefix).
        public static let photoNotFound = Code(.photoNotFound)
        /// The ID prefix matches more than one photo.
        public static let ambiguousPhoto = Code(.ambiguousPhoto)
        /// The export target already exists (pass `overwrite` to replace it).
        public static let exists = Code(.exists)
        /// The same content (by content hash) is already in the vault and the import was asked to skip it.
        public static let duplicate = Code(.duplicate)
        /// An `ImportGate` (the classify hook) refused the photo; the message says why.
        public static let vetoed = Code(.vetoed)

        /// No shared key has this name (`.lfs` import, key export/delete). The message names the key.
        public static let unknownKey = Code(.unknownKey)
        /// A shared key with this name already exists.
        public static let keyExists = Code(.keyExists)
        /// The shared key was used to import photos still in the vault (delete with `force`).
        public static let keyInUse = Code(.keyInUse)
        /// The shared key name breaks the naming rules (empty, over 128 bytes, control characters, ...).
        public static let invalidKeyName = Code(.invalidKeyName)
        /// Shared key material in the wrong form (not 32 bytes, not 64 hex digits).
        public static let invalidKey = Code(.invalidKey)
        /// The input file is not a well-formed file of its format (e.g. a truncated `.lfs`).
        public static let malformedFile = Code(.malformedFile)
        /// An `.lfs` file does not decrypt with the vault's key of the name in its header: a
        /// different key under the same name, or an altered file.
        public static let decryptionFailed = Code(.decryptionFailed)

        /// Too many wrong passphrases in a row (vault or private album): the attempt was refused
        /// without deriving any key. The message says how long to wait.
        public static let throttled = Code(.throttled)
        /// The photo or album belongs to a private album that is not unlocked in this instance
        /// (`Vault.unlockAlbum`). The message names the album.
        public static let albumLocked = Code(.albumLocked)
        /// No album has this name (or ID).
        public static let albumNotFound = Code(.albumNotFound)
        /// An album with this name (compared case-insensitively) already exists.
        public static let albumExists = Code(.albumExists)
        /// A value breaks the rules of the operation (album name or tag too long or with control
        /// characters, a negative limit, an unknown format, ...). The message says which rule.
        public static let invalidArgument = Code(.invalidArgument)
        /// The operation contradicts the state of the catalog (cover photo not in the album, a
        /// photo moved from an album it is not in, a private-album photo added to a second album).
        public static let conflict = Code(.conflict)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String
    /// The lower-level cause, for logs.
    public let underlying: String?

    public init(_ code: Code, _ message: String, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        if let underlying { return "\(message) (\(underlying))" }
        return message
    }
}

extension VaultError {
    static func wrap(_ error: any Error, _ what: String) -> VaultError {
        if let e = error as? VaultError { return e }
        return VaultError(.io, what, underlying: String(describing: error))
    }
}
