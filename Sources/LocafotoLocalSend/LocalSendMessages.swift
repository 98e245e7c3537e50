import Foundation
import LocafotoErrors
import LocafotoFormats
import LocafotoWire

// The JSON bodies of LocalSend's protocol v2 (github.com/localsend/protocol, README "2.1"; the
// apps announce "2.2"), as a node reads them from the LAN: decoded within a size limit, every
// field checked, text from the peer cleaned where it enters (`PeerText`). No I/O.

/// A device as it announces itself (multicast), registers (`/register`) or names itself in
/// `info` of a prepare-upload.
public struct LocalSendDevice: Codable, Sendable, Equatable {
    public enum DeviceType: String, Codable, Sendable {
        case mobile, desktop, web, headless, server
    }

    public var alias: String
    /// The protocol version, "major.minor" ("2.0", "2.1", "2.2").
    public var version: String
    public var deviceModel: String?
    /// nil when absent, or a type this node does not know (a later app's).
    public var deviceType: DeviceType?
    /// Over HTTPS the SHA-256 of the device's certificate (uppercase hex); over HTTP a random
    /// string. Only to avoid discovering oneself: the certificate seen in the TLS handshake is
    /// what a node pins.
    public var fingerprint: String
    public var port: Int?
    /// "https" or "http".
    public var `protocol`: String?
    public var download: Bool?
    /// In a multicast announcement: whether the hearer should answer.
    public var announce: Bool?

    public init(
        alias: String, version: String = "2.1", deviceModel: String? = nil, deviceType: DeviceType? = nil,
        fingerprint: String, port: Int? = nil, protocol: String? = nil, download: Bool? = nil, announce: Bool? = nil
    ) {
        self.alias = alias
        self.version = version
        self.deviceModel = deviceModel
        self.deviceType = deviceType
        self.fingerprint = fingerprint
        self.port = port
        self.protocol = `protocol`
        self.download = download
        self.announce = announce
    }

    private enum CodingKeys: String, CodingKey {
        case alias, version, deviceModel, deviceType, fingerprint, port, `protocol`, download, announce
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        alias = LocalSendText.name(try c.decode(String.self, forKey: .alias))
        version = try c.decode(String.self, forKey: .version)
        deviceModel = try c.decodeIfPresent(String.self, forKey: .deviceModel).map(LocalSendText.name)
        deviceType = (try? c.decodeIfPresent(String.self, forKey: .deviceType)).flatMap { $0 }.flatMap(
            DeviceType.init(rawValue:))
        fingerprint = LocalSendText.fingerprint(try c.decode(String.self, forKey: .fingerprint))
        port = try c.decodeIfPresent(Int.self, forKey: .port)
        `protocol` = try c.decodeIfPresent(String.self, forKey: .protocol)
        download = try c.decodeIfPresent(Bool.self, forKey: .download)
        announce = try c.decodeIfPresent(Bool.self, forKey: .announce)
    }

    /// The checks of every device description: a major version 2, a fingerprint of printable
    /// ASCII within 128 bytes, a port in range, a known scheme.
    public func validate() throws {
        guard !alias.isEmpty else { throw LocalSendError.invalid("the device has no alias") }
        guard LocalSendText.isVersion2(version) else {
            throw LocalSendError.invalid("protocol version \(PeerText.quoted(version)) is not 2.x")
        }
        guard !fingerprint.isEmpty, fingerprint.utf8.count <= 128,
            fingerprint.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw LocalSendError.invalid("the device's fingerprint is not 1 to 128 printable ASCII characters") }
        if let port, !(1...65535).contains(port) { throw LocalSendError.invalid("port \(port) is out of range") }
        if let p = `protocol`, p != "https", p != "http" {
            throw LocalSendError.invalid("protocol \(PeerText.quoted(p)) is neither https nor http")
        }
    }
}

/// One file a sender offers (`files` of a prepare-upload).
public struct LocalSendFile: Codable, Sendable, Equatable {
    public struct Metadata: Codable, Sendable, Equatable {
        public var modified: String?
        public var accessed: String?

        public init(modified: String? = nil, accessed: String? = nil) {
            self.modified = modified
            self.accessed = accessed
        }
    }

    public var id: String
    public var fileName: String
    public var size: Int64
    /// The MIME type the sender claims ("image/jpeg"); the content is sniffed regardless.
    public var fileType: String
    /// Lowercase or uppercase hex SHA-256 of the content, when the sender gives one.
    public var sha256: String?
    /// The sender's preview (a data URI or base64 thumbnail, as the apps send it).
    public var preview: String?
    public var metadata: Metadata?

    public init(
        id: String, fileName: String, size: Int64, fileType: String, sha256: String? = nil, preview: String? = nil,
        metadata: Metadata? = nil
    ) {
        self.id = id
        self.fileName = fileName
        self.size = size
        self.fileType = fileType
        self.sha256 = sha256
        self.preview = preview
        self.metadata = metadata
    }

    /// The checks of the file's description (not of whether this node wants it): an id of
    /// printable ASCII, a name that is one file name (no path, no control, format or
    /// line-separator characters), a size in range, a hash of 64 hex digits, bounded text.
    public func validate(limits: LocalSendLimits) throws {
        guard !id.isEmpty, id.utf8.count <= LocalSendLimits.maxIDBytes, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw LocalSendError.invalid("file id \(PeerText.quoted(id)) is not 1 to 64 printable ASCII characters")
        }
        // A folder's files come as `Folder/Sub/IMG_1006.jpg` (the apps send folders so): each
        // part is checked as a name; the path as a whole is bounded too.
        let parts = fileName.split(separator: "/", omittingEmptySubsequences: false)
        guard fileName.utf8.count <= LocalSendLimits.maxPathBytes, parts.count <= LocalSendLimits.maxPathParts,
            parts.allSatisfy({ part in
                !part.isEmpty && part.utf8.count <= limits.maxNameBytes && part != "." && part != ".."
                    && !part.unicodeScalars.contains(where: { PeerText.isUnsafe($0) || $0 == "\\" })
            })
        else {
            throw LocalSendError.invalid(
                "file name \(PeerText.quoted(fileName)) must be 1 to \(limits.maxNameBytes) bytes: one name (or a folder's, as Folder/name, at most \(LocalSendLimits.maxPathParts) parts), without '\\', '.', '..', control, format or line-separator characters"
            )
        }
        guard (0...limits.maxFileBytes).contains(size) else {
            throw LocalSendError.invalid(
                "\(PeerText.quoted(fileName)) claims \(size) bytes, outside 0...\(limits.maxFileBytes)")
        }
        guard fileType.utf8.count <= 255 else { throw LocalSendError.invalid("the file type of \(id) is too long") }
        if let sha256, sha256.utf8.count != 64 || !sha256.utf8.allSatisfy(LocalSendText.isHexDigit) {
            throw LocalSendError.invalid("the sha256 of \(PeerText.quoted(fileName)) is not 64 hex digits")
        }
        if let preview, preview.utf8.count > LocalSendLimits.maxPreviewBytes {
            throw LocalSendError.invalid(
                "the preview of \(PeerText.quoted(fileName)) is over \(LocalSendLimits.maxPreviewBytes) bytes")
        }
        for date in [metadata?.modified, metadata?.accessed].compactMap({ $0 }) where date.utf8.count > 64 {
            throw LocalSendError.invalid("a date of \(PeerText.quoted(fileName)) is over 64 bytes")
        }
    }
}

/// `POST /api/localsend/v2/prepare-upload`: who sends, and what.
public struct LocalSendPrepareUpload: Codable, Sendable, Equatable {
    public var info: LocalSendDevice
    /// By file id (each file's own `id` is the same).
    public var files: [String: LocalSendFile]

    public init(info: LocalSendDevice, files: [String: LocalSendFile]) {
        self.info = info
        self.files = files
    }

    /// Every check of the request: the device, at least one file and at most `maxFiles`, each
    /// file valid under its own id, and a total within `maxTotalBytes`.
    public func validate(limits: LocalSendLimits) throws {
        try info.validate()
        guard !files.isEmpty else { throw LocalSendError.invalid("the request offers no file") }
        guard files.count <= limits.maxFiles else {
            throw LocalSendError.invalid(
                "\(files.count) files are offered; at most \(limits.maxFiles) are taken at once")
        }
        var total: Int64 = 0
        for (key, file) in files {
            try file.validate(limits: limits)
            guard key == file.id else { throw LocalSendError.invalid("file \(PeerText.quoted(key)) names another id") }
            total += file.size
        }
        guard total <= limits.maxTotalBytes else {
            throw LocalSendError.invalid("the files add up to \(total) bytes, more than \(limits.maxTotalBytes)")
        }
    }

    /// The files in a stable order (by id): the offer's item order.
    public var orderedFiles: [LocalSendFile] { files.values.sorted { $0.id < $1.id } }
}

/// The answer to a prepare-upload this node accepts: its session, and a token for each file it
/// wants (files it does not want have none).
public struct LocalSendPrepareUploadAnswer: Codable, Sendable, Equatable {
    public var sessionId: String
    public var files: [String: String]

    public init(sessionId: String, files: [String: String]) {
        self.sessionId = sessionId
        self.files = files
    }
}

/// What one node takes from LocalSend peers at most.
public struct LocalSendLimits: Sendable, Equatable {
    /// A JSON body read from the LAN, before it is parsed (previews make prepare-upload large).
    public var maxBodyBytes = 16 << 20
    public var maxFiles = 1_000
    public var maxNameBytes = 255
    /// A folder's path (`Folder/Sub/name`): its bytes and its parts.
    public static let maxPathBytes = 1_024
    public static let maxPathParts = 16
    public var maxFileBytes: Int64 = 1 << 32
    public var maxTotalBytes: Int64 = 64 << 30
    public static let maxIDBytes = 64
    /// One file's preview, as text (the apps send a small base64 thumbnail).
    public static let maxPreviewBytes = 256 << 10

    public init() {}
}

/// Reading a LocalSend JSON body: refused above the limit before any parsing, then decoded and
/// checked; every failure is a `LocalSendError` that says what is wrong.
public enum LocalSendJSON {
    /// A body this node sends: its keys sorted, so that the same value is always the same bytes.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], maxBytes: Int) throws -> T {
        guard body.count <= maxBytes else {
            throw LocalSendError.tooLarge("the body is \(body.count) bytes; at most \(maxBytes) are read")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let e as LocalSendError {
            throw e
        } catch let DecodingError.keyNotFound(key, _) {
            throw LocalSendError.invalid("the body has no '\(key.stringValue)'")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw LocalSendError.invalid("'\(PeerText.message(path, maxBytes: 128))' has the wrong type")
        } catch {
            throw LocalSendError.invalid("the body is not the JSON expected")
        }
    }

    public static func prepareUpload(_ body: [UInt8], limits: LocalSendLimits) throws -> LocalSendPrepareUpload {
        let request = try decode(LocalSendPrepareUpload.self, from: body, maxBytes: limits.maxBodyBytes)
        try request.validate(limits: limits)
        return request
    }

    /// An announcement or a `/register` body: small, whatever the limits.
    public static func device(_ body: [UInt8]) throws -> LocalSendDevice {
        let device = try decode(LocalSendDevice.self, from: body, maxBytes: 64 << 10)
        try device.validate()
        return device
    }
}

enum LocalSendText {
    /// A name from the LAN (alias, device model): cleaned as peer text, at most 64 bytes.
    static func name(_ raw: String) -> String { PeerText.message(raw, maxBytes: 64) }

    /// A certificate's SHA-256 in uppercase hex, whatever case the device wrote it in (the apps
    /// write uppercase, localsend-cli lowercase); anything else (an HTTP device's random string)
    /// as it came.
    static func fingerprint(_ raw: String) -> String {
        raw.utf8.count == 64 && raw.utf8.allSatisfy(isHexDigit) ? raw.uppercased() : raw
    }

    static func isVersion2(_ v: String) -> Bool {
        let parts = v.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0] == "2" && !parts[1].isEmpty && parts[1].utf8.count <= 4
            && parts[1].allSatisfy(\.isASCII) && parts[1].allSatisfy(\.isNumber)
    }

    static func isHexDigit(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
    }
}

extension LocalSendFile {
    /// The photo format the sender's description names — its MIME type, else its name's
    /// extension (some senders send `application/octet-stream` for HEIC) — or nil when it does
    /// not name one. Only a filter before asking: the content is sniffed as it arrives.
    /// The file's own name: the last part of `fileName`.
    public var name: String { fileName.split(separator: "/").last.map(String.init) ?? fileName }

    /// The folder the sender shared it in: the first part of a `Folder/…/name` path (the one the
    /// user picked); nil for a file sent alone.
    public var folder: String? {
        let parts = fileName.split(separator: "/")
        return parts.count > 1 ? String(parts[0]) : nil
    }

    public var claimedPhotoType: ContentType? {
        let mime = fileType.lowercased()
        if let t = ContentType.allCases.first(where: { $0.mimeType == mime }) { return t }
        if mime == "image/jpg" || mime == "image/pjpeg" { return .jpeg }
        guard mime.isEmpty || mime == "application/octet-stream" || mime.hasPrefix("image/") else { return nil }
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "jpg", "jpeg", "jpe": return .jpeg
        case "tif", "tiff": return .tiff
        default: return ContentType.allCases.first { $0.fileExtension == ext }
        }
    }
}
