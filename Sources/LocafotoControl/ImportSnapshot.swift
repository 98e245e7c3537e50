import Foundation

/// A local import of files and folders (`POST /v1/imports`, `GET /v1/imports/{id}`): its
/// progress while it runs (also as `import.progress` events) and its result.
public struct ImportSnapshot: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var path: String
        /// The imported photo's id; nil when the file was skipped (`reason` says why).
        public var photo: String?
        public var reason: String?
        /// Why it was skipped, as an error code (control-api.md "Errors"): `unsupported` (not a
        /// photo), `conflict` (already in the vault), `notFound`, `io`, … The CLI's exit status
        /// comes from it.
        public var code: ErrorCode?
        /// Tags the classify hook gave the photo.
        public var tags: [String]?

        public init(
            path: String, photo: String? = nil, reason: String? = nil, code: ErrorCode? = nil, tags: [String]? = nil
        ) {
            self.path = path
            self.photo = photo
            self.reason = reason
            self.code = code
            self.tags = tags
        }

        /// A skip that is not a problem: the content is already in the vault.
        public var isDuplicate: Bool { photo == nil && (reason ?? "").hasPrefix("already in the vault") }
    }

    public var id: String
    /// scanning, importing, done, failed.
    public var state: String
    /// Files found; `processed` of them were handled so far.
    public var found: Int
    public var processed: Int
    /// Bytes imported so far.
    public var bytes: Int64
    public var imported: [Entry]
    public var skipped: [Entry]
    public var message: String?
    public var startedAt: Date
    public var finishedAt: Date?

    public init(
        id: String, state: String, found: Int = 0, processed: Int = 0, bytes: Int64 = 0, imported: [Entry] = [],
        skipped: [Entry] = [],
        message: String? = nil, startedAt: Date, finishedAt: Date? = nil
    ) {
        self.id = id
        self.state = state
        self.found = found
        self.processed = processed
        self.bytes = bytes
        self.imported = imported
        self.skipped = skipped
        self.message = message
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
}
