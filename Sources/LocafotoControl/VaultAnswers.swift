import Foundation

// Small answers of the vault's routes (protocol/control-api.md). Records that the vault itself
// defines (photos, albums, keys, backups) are encoded from the vault's own Codable types and
// decoded into the same types by the CLI.

/// `POST /v1/unlock` and `POST /v1/lock`.
public struct VaultState: Codable, Sendable, Equatable {
    /// `unlocked` or `locked`.
    public var vault: VaultLockState
    /// Photos received while the vault was locked and imported by this unlock.
    public var importedQueued: Int?
    public init(vault: VaultLockState, importedQueued: Int? = nil) {
        self.vault = vault
        self.importedQueued = importedQueued
    }
}

/// `GET` and `PUT /v1/policy`: everyone, trusted or off.
public struct PolicyAnswer: Codable, Sendable, Equatable {
    public var policy: ReceivePolicy
    public init(policy: ReceivePolicy) { self.policy = policy }
}

/// A file the agent wrote for a photo: `POST /v1/photos/{id}/export`, `…/thumbnail`, and each
/// element of `POST /v1/export` (where `error` instead of `path` says why one was not written).
public struct PhotoFile: Codable, Sendable, Equatable {
    public var photo: String
    public var path: String?
    public var error: String?
    /// The error's code (control-api.md "Errors"): `io` when the file could not be written.
    public var code: ErrorCode?
    public init(photo: String, path: String? = nil, error: String? = nil, code: ErrorCode? = nil) {
        self.photo = photo
        self.path = path
        self.error = error
        self.code = code
    }
}

/// `POST /v1/bundle`: the `.locaphoto` written, for whom, and the photo's size.
public struct BundleWritten: Codable, Sendable, Equatable {
    public var path: String
    /// The recipient's fingerprint.
    public var recipient: PeerRef
    public var bytes: Int64
    public init(path: String, recipient: PeerRef, bytes: Int64) {
        self.path = path
        self.recipient = recipient
        self.bytes = bytes
    }
}

/// `POST /v1/photos/batch`: how many photos the action changed (tag, favorite, hide, delete…).
public struct BatchOutcome: Codable, Sendable, Equatable {
    public var action: BatchAction
    public var count: Int
    /// The ids deleted, for `delete`.
    public var deleted: [String]?
    public init(action: BatchAction, count: Int, deleted: [String]? = nil) {
        self.action = action
        self.count = count
        self.deleted = deleted
    }
}

/// `POST /v1/albums/{add,remove,move,copy}`: photos changed in `album`; and `delete`, with the
/// photos deleted along (`--with-photos`). The other album actions answer with the album.
public struct AlbumChange: Codable, Sendable, Equatable {
    public var album: String
    public var count: Int?
    public var deletedPhotos: [String]?
    public init(album: String, count: Int? = nil, deletedPhotos: [String]? = nil) {
        self.album = album
        self.count = count
        self.deletedPhotos = deletedPhotos
    }
}

/// `POST /v1/keys/export`: a named `.lfs` key as 64 hex digits (a secret: shown once, never logged).
public struct KeyExport: Codable, Sendable, Equatable {
    public var name: String
    public var hex: String
    public var fingerprint: String
    public init(name: String, hex: String, fingerprint: String) {
        self.name = name
        self.hex = hex
        self.fingerprint = fingerprint
    }
}
