import Foundation

// What the CLI (or any client) sends in the control API's request bodies
// (protocol/control-api.md). The agent decodes the same types; absent optional fields take the
// defaults the document gives.

/// A photo query: every field optional (`GET /v1/photos` takes the same as URL parameters).
public struct PhotoQueryRequest: Codable, Sendable, Equatable {
    /// captureDate, importDate, size or name.
    public var sort: String?
    /// ascending or descending.
    public var order: String?
    public var album: String?
    public var tag: String?
    public var favorite: Bool?
    /// exclude (default), include or only.
    public var hidden: String?
    public var from: Date?
    public var before: Date?
    public var format: String?
    /// A sender's fingerprint.
    public var sender: String?
    /// Searched in names and tags.
    public var text: String?
    public var limit: Int?
    public var offset: Int?
    /// Only photos whose original has at least this many bytes.
    public var minBytes: Int64?
    /// Only photos with a GPS position (true) or known to have none (false).
    public var hasLocation: Bool?

    public init(
        sort: String? = nil, order: String? = nil, album: String? = nil, tag: String? = nil, favorite: Bool? = nil,
        hidden: String? = nil,
        from: Date? = nil, before: Date? = nil, format: String? = nil, sender: String? = nil, text: String? = nil,
        limit: Int? = nil,
        offset: Int? = nil, minBytes: Int64? = nil, hasLocation: Bool? = nil
    ) {
        self.minBytes = minBytes
        self.hasLocation = hasLocation
        self.sort = sort
        self.order = order
        self.album = album
        self.tag = tag
        self.favorite = favorite
        self.hidden = hidden
        self.from = from
        self.before = before
        self.format = format
        self.sender = sender
        self.text = text
        self.limit = limit
        self.offset = offset
    }
}

extension PhotoQueryRequest {
    /// A date of a query as people and URLs write it: `2025-11-15` (midnight UTC) or RFC 3339.
    public static func date(_ text: String) -> Date? {
        if let d = try? Date(text, strategy: .iso8601) { return d }
        return try? Date(text + "T00:00:00Z", strategy: .iso8601)
    }
}

/// Photos named by id (unique prefixes allowed), or by a query; `all: true` selects every
/// visible photo. One of the three is required.
public struct PhotoSelectionRequest: Codable, Sendable, Equatable {
    public var ids: [String]?
    public var query: PhotoQueryRequest?
    public var all: Bool?
    public init(ids: [String]? = nil, query: PhotoQueryRequest? = nil, all: Bool? = nil) {
        self.ids = ids
        self.query = query
        self.all = all
    }
}

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
    public var selection: PhotoSelectionRequest
    public var directory: String
    public var overwrite: Bool?
    public var stripLocation: Bool?
    /// A filter applied to each copy (then a JPEG named `NAME-FILTER.jpg`).
    public var filter: String?
    public init(
        selection: PhotoSelectionRequest, directory: String, overwrite: Bool? = nil, stripLocation: Bool? = nil,
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

/// `POST /v1/photos/batch`: tag, untag, favorite, unfavorite, hide, unhide or delete.
public struct BatchRequest: Codable, Sendable, Equatable {
    public var selection: PhotoSelectionRequest
    public var action: String
    public var tags: [String]?
    public init(selection: PhotoSelectionRequest, action: String, tags: [String]? = nil) {
        self.selection = selection
        self.action = action
        self.tags = tags
    }
}

/// `POST /v1/albums/{action}`: which fields an action needs is in control-api.md.
public struct AlbumRequest: Codable, Sendable, Equatable {
    public var album: String?
    /// The new album's name (create), or the new name (rename).
    public var name: String?
    /// The target album of move and copy.
    public var to: String?
    /// A private album's passphrase (create --private, unlock; the current one for passwd):
    /// zeroed by the agent after use.
    public var passphrase: String?
    /// The album's new passphrase (passwd).
    public var newPassphrase: String?
    public var deletePhotos: Bool?
    /// The cover photo (cover; absent to unset it).
    public var photo: String?
    public var selection: PhotoSelectionRequest?
    public init(
        album: String? = nil, name: String? = nil, to: String? = nil, passphrase: String? = nil,
        deletePhotos: Bool? = nil,
        photo: String? = nil, selection: PhotoSelectionRequest? = nil, newPassphrase: String? = nil
    ) {
        self.album = album
        self.newPassphrase = newPassphrase
        self.name = name
        self.to = to
        self.passphrase = passphrase
        self.deletePhotos = deletePhotos
        self.photo = photo
        self.selection = selection
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

/// `POST /v1/keys/{create,import,export,delete}`: `hex` for import, `force` for delete.
public struct KeyRequest: Codable, Sendable, Equatable {
    public var name: String
    public var hex: String?
    public var force: Bool?
    public init(name: String, hex: String? = nil, force: Bool? = nil) {
        self.name = name
        self.hex = hex
        self.force = force
    }
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
    public var selection: PhotoSelectionRequest?
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
        peer: String? = nil, peers: [String]? = nil, files: [String]? = nil, selection: PhotoSelectionRequest? = nil,
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
