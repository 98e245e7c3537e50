import LocafotoErrors

/// Errors of the vault. The message says what went wrong and what to do about it; `cause`
/// carries the lower-level error (an errno text, an SQLite message) when there is one. No error
/// ever contains key material or a passphrase.
public typealias VaultError = LayerError<VaultErrorCode>

public enum VaultErrorCode: String, LayerErrorCode {
    /// There is no vault at the path (run `locafoto vault init`).
    case notFound
    /// `create` found a vault already there.
    case alreadyExists
    /// The passphrase does not unlock the vault.
    case wrongPassphrase
    /// The operation needs the vault unlocked.
    case locked
    /// The data is not one of the supported image formats.
    case unsupportedContent
    /// The photo is larger than the limit of the operation.
    case tooLarge
    /// A photo file or the catalog is damaged or was altered (authentication failed, bad header, ...).
    case corrupt
    /// A file system or database operation failed.
    case io
    /// No photo has this ID (or ID prefix).
    case photoNotFound
    /// The ID prefix matches more than one photo.
    case ambiguousPhoto
    /// The export target already exists (pass `overwrite` to replace it).
    case exists
    /// The same content (by content hash) is already in the vault and the import was asked to skip it.
    case duplicate
    /// An `ImportGate` (the classify hook) refused the photo; the message says why.
    case vetoed

    /// No shared key has this name (`.lfs` import, key export/delete). The message names the key.
    case unknownKey
    /// A shared key with this name already exists.
    case keyExists
    /// The shared key was used to import photos still in the vault (delete with `force`).
    case keyInUse
    /// The shared key name breaks the naming rules (empty, over 128 bytes, control characters, ...).
    case invalidKeyName
    /// Shared key material in the wrong form (not 32 bytes, not 64 hex digits).
    case invalidKey
    /// The input file is not a well-formed file of its format (e.g. a truncated `.lfs`).
    case malformedFile
    /// An `.lfs` file does not decrypt with the vault's key of the name in its header: a
    /// different key under the same name, or an altered file.
    case decryptionFailed

    /// Too many wrong passphrases in a row (vault or private album): the attempt was refused
    /// without deriving any key. The message says how long to wait.
    case throttled
    /// The photo or album belongs to a private album that is not unlocked in this instance
    /// (`Vault.unlockAlbum`). The message names the album.
    case albumLocked
    /// No album has this name (or ID).
    case albumNotFound
    /// An album with this name (compared case-insensitively) already exists.
    case albumExists
    /// A value breaks the rules of the operation (album name or tag too long or with control
    /// characters, a negative limit, an unknown format, ...). The message says which rule.
    case invalidArgument
    /// The operation contradicts the state of the catalog (cover photo not in the album, a
    /// photo moved from an album it is not in, a private-album photo added to a second album).
    case conflict
}

extension VaultError {
    static func wrap(_ error: any Error, _ what: String) -> VaultError {
        if let e = error as? VaultError { return e }
        return VaultError(.io, what, cause: error)
    }
}
