import Foundation
import LocafotoErrors
import LocafotoQuery

// What the CLI (or any client) sends in the control API's request bodies
// (protocol/control-api.md). The agent decodes the same types; absent optional fields take the
// defaults the document gives. Photos are selected by the vault's own `PhotoSelection`
// (`LocafotoQuery`), which codes the API's `{"ids"}`, `{"query"}` or `{"all": true}`.

/// `POST /v1/imports`.
public struct ImportRequest: Codable, Sendable, Equatable {
    public var paths: [String]
    /// Defaults: recursive, keep the originals, skip content already in the vault.
    public var recursive: Bool?
    public var removeOriginals: Bool?
    public var skipDuplicates: Bool?
    /// A filter (`GET /v1/filters`) applied to each photo on the way in: only the filtered photo
    /// (a JPEG) is stored.
    public var filter: String?
    public init(
        paths: [String], recursive: Bool? = nil, removeOriginals: Bool? = nil, skipDuplicates: Bool? = nil,
        filter: String? = nil
    ) {
        self.paths = paths
        self.recursive = recursive
        self.removeOriginals = removeOriginals
        self.skipDuplicates = skipDuplicates
        self.filter = filter
    }
}

/// `POST /v1/export`: the selected photos into `directory`.
public struct ExportRequest: Codable, Sendable, Equatable {
    public var selection: PhotoSelection
    public var directory: String
    public var overwrite: Bool?
    public var stripLocation: Bool?
    /// A filter applied to each copy (then a JPEG named `NAME-FILTER.jpg`).
    public var filter: String?
    public init(
        selection: PhotoSelection, directory: String, overwrite: Bool? = nil, stripLocation: Bool? = nil,
        filter: String? = nil
    ) {
        self.selection = selection
        self.directory = directory
        self.overwrite = overwrite
        self.stripLocation = stripLocation
        self.filter = filter
    }
}

/// `POST /v1/photos/{id}/export`: one photo, or with `lfsKey` a `.lfs` sealed with that key.
public struct ExportPhotoRequest: Codable, Sendable, Equatable {
    public var directory: String
    public var overwrite: Bool?
    public var lfsKey: String?
    public init(directory: String, overwrite: Bool? = nil, lfsKey: String? = nil) {
        self.directory = directory
        self.overwrite = overwrite
        self.lfsKey = lfsKey
    }
}

/// A file the agent reads or creates: `POST /v1/photos/{id}/thumbnail`, `/v1/backup`, `/v1/open`.
public struct PathRequest: Codable, Sendable, Equatable {
    public var path: String
    public init(path: String) { self.path = path }
}

/// `POST /v1/backup`: the backup file to create; `withIdentity` adds the node identity.
public struct BackupRequest: Codable, Sendable, Equatable {
    public var path: String
    public var withIdentity: Bool?
    public init(path: String, withIdentity: Bool? = nil) {
        self.path = path
        self.withIdentity = withIdentity
    }
}

/// What `POST /v1/photos/batch` does to the photos it selects.
public enum BatchAction: String, NamedChoice {
    case tag, untag, favorite, unfavorite, hide, unhide, delete
}

/// `POST /v1/photos/batch`: one action on a selection (`tags` for tag and untag).
public struct BatchRequest: Codable, Sendable, Equatable {
    public var selection: PhotoSelection
    public var action: BatchAction
    public var tags: [String]?
    public init(selection: PhotoSelection, action: BatchAction, tags: [String]? = nil) {
        self.selection = selection
        self.action = action
        self.tags = tags
    }
}

/// `POST /v1/albums/{action}`: what can be done to an album, each with its own request type
/// (`AlbumActionRequest`).
public enum AlbumAction: String, NamedChoice {
    case create, rename, delete, add, remove, move, copy, cover, unlock, lock, passwd

    /// Whether the answer is an `AlbumChange` (photos moved, or the album deleted); the other
    /// actions answer with the album itself (`AlbumInfo`).
    public var answersWithChange: Bool {
        switch self {
        case .add, .remove, .move, .copy, .delete: true
        case .create, .rename, .cover, .unlock, .lock, .passwd: false
        }
    }
}

/// The request of one album action: `POST /v1/albums/{action}`.
public protocol AlbumActionRequest: Codable, Sendable, Equatable {
    static var actions: [AlbumAction] { get }
}

/// `create`: a new album; with `passphrase` a private one.
public struct AlbumCreateRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.create]
    public var name: String
    /// A private album's passphrase: zeroed by the agent after use.
    public var passphrase: String?
    public init(name: String, passphrase: String? = nil) {
        self.name = name
        self.passphrase = passphrase
    }
}

/// `rename`: the album, and its new name.
public struct AlbumRenameRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.rename]
    public var album: String
    public var name: String
    public init(album: String, name: String) {
        self.album = album
        self.name = name
    }
}

/// `delete`: the album; its photos too with `deletePhotos`.
public struct AlbumDeleteRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.delete]
    public var album: String
    public var deletePhotos: Bool?
    public init(album: String, deletePhotos: Bool? = nil) {
        self.album = album
        self.deletePhotos = deletePhotos
    }
}

/// `add`, `remove`: photos into or out of the album.
public struct AlbumPhotosRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.add, .remove]
    public var album: String
    public var selection: PhotoSelection
    public init(album: String, selection: PhotoSelection) {
        self.album = album
        self.selection = selection
    }
}

/// `move`, `copy`: photos of `album` to the album `to`.
public struct AlbumMoveRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.move, .copy]
    public var album: String
    public var to: String
    public var selection: PhotoSelection
    public init(album: String, to: String, selection: PhotoSelection) {
        self.album = album
        self.to = to
        self.selection = selection
    }
}

/// `cover`: the album's cover photo (absent to unset it).
public struct AlbumCoverRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.cover]
    public var album: String
    public var photo: String?
    public init(album: String, photo: String? = nil) {
        self.album = album
        self.photo = photo
    }
}

/// `unlock`: a private album with its passphrase (zeroed by the agent after use); `lock`: the
/// album alone.
public struct AlbumLockRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.unlock, .lock]
    public var album: String
    public var passphrase: String?
    public init(album: String, passphrase: String? = nil) {
        self.album = album
        self.passphrase = passphrase
    }
}

/// `passwd`: a private album's current and new passphrase (zeroed by the agent after use).
public struct AlbumPasswdRequest: AlbumActionRequest {
    public static let actions: [AlbumAction] = [.passwd]
    public var album: String
    public var passphrase: String
    public var newPassphrase: String
    public init(album: String, passphrase: String, newPassphrase: String) {
        self.album = album
        self.passphrase = passphrase
        self.newPassphrase = newPassphrase
    }
}

/// `POST /v1/passwd`: the vault's current and new passphrase (zeroed by the agent after use).
public struct PassphraseChangeRequest: Codable, Sendable, Equatable {
    public var passphrase: String
    public var newPassphrase: String
    public init(passphrase: String, newPassphrase: String) {
        self.passphrase = passphrase
        self.newPassphrase = newPassphrase
    }
}

/// `POST /v1/keys/create` and `/v1/keys/export`: the key's name.
public struct KeyNameRequest: Codable, Sendable, Equatable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// `POST /v1/keys/import`: a key as 64 hex digits, under a name (zeroed by the agent after use).
public struct KeyImportRequest: Codable, Sendable, Equatable {
    public var name: String
    public var hex: String
    public init(name: String, hex: String) {
        self.name = name
        self.hex = hex
    }
}

/// `POST /v1/keys/delete`: `force` deletes a key that received files still wait for.
public struct KeyDeleteRequest: Codable, Sendable, Equatable {
    public var name: String
    public var force: Bool?
    public init(name: String, force: Bool? = nil) {
        self.name = name
        self.force = force
    }
}

/// `POST /v1/peers/{peer}/{change}` and `/v1/localsend/devices/{device}/{change}`: what a
/// person decides about a peer or a device.
public enum TrustChange: String, NamedChoice {
    case trust, untrust, forget
}

/// `POST /v1/bundle`: seal `file`, or the vault's `photo`, for `peer` into a new `.locaphoto` at
/// `output` (exactly one of `file` and `photo`).
public struct BundleWriteRequest: Codable, Sendable, Equatable {
    public var file: String?
    /// A vault photo's id (or unique prefix).
    public var photo: String?
    public var peer: String
    public var output: String
    public init(file: String? = nil, photo: String? = nil, peer: String, output: String) {
        self.file = file
        self.photo = photo
        self.peer = peer
        self.output = output
    }
}

/// `POST /v1/send`: files and/or vault photos to one peer or several (one transfer each).
public struct SendRequest: Codable, Sendable, Equatable {
    public var peer: String?
    /// Several recipients: the photos are prepared once, each peer gets a transfer.
    public var peers: [String]?
    /// Absolute paths of files to send.
    public var files: [String]?
    /// Vault photos to send.
    public var selection: PhotoSelection?
    public var compress: Bool?
    /// JPEG quality for `compress`, 60...90.
    public var quality: Int?
    public var stripLocation: Bool?
    /// A relay to leave the photos at (HOST:PORT, name or fingerprint).
    public var via: String?
    /// Seconds to wait for a known peer that is not online at this moment (0...300).
    public var wait: Double?
    /// false: offer the photos without previews (`send --no-preview`); default true.
    public var preview: Bool?
    /// Ids of photos uploaded with `POST /v1/uploads` (the web app's way of sending).
    public var uploads: [String]?
    /// The PIN a LocalSend device asks for (never on a command line: `send` reads it at a prompt
    /// or from a file).
    public var pin: String?

    public init(
        peer: String? = nil, peers: [String]? = nil, files: [String]? = nil, selection: PhotoSelection? = nil,
        compress: Bool? = nil,
        quality: Int? = nil, stripLocation: Bool? = nil, via: String? = nil, wait: Double? = nil, preview: Bool? = nil,
        uploads: [String]? = nil, pin: String? = nil
    ) {
        self.pin = pin
        self.peer = peer
        self.peers = peers
        self.files = files
        self.selection = selection
        self.compress = compress
        self.quality = quality
        self.stripLocation = stripLocation
        self.via = via
        self.wait = wait
        self.preview = preview
        self.uploads = uploads
    }
}
