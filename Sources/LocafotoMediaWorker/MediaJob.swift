import Foundation
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia

/// What the agent asks of photo decoding: a preview for an offer, the facts the vault's indexer
/// keeps (EXIF, size), or a thumbnail when one is asked for. `MediaJob.perform` does it in the calling process;
/// `MediaWorkers` has it done in worker processes (the hidden command `media-worker`), so that
/// libvips, its ~90 libraries and the decoders' buffers (about 47 MiB of RSS once loaded, more during a HEIC
/// decode) never enter the agent, and a decoder that crashes on a hostile photo takes only
/// its worker down.
public struct MediaRequest: Codable, Sendable, Equatable {
    public enum Operation: String, Codable, Sendable {
        /// `Media.preview` of the file at `path` (its head first when a JPEG: see
        /// `MediaJob.previewHeadBytes`), or of the body when `path` is nil.
        case preview
        /// `Media.metadata` (as `type`) of the body: header and EXIF, no decode of the pixels
        /// (thumbnails are made when first asked for, `thumbnail`).
        case index
        /// `Media.thumbnailWithSource` of the body at `maxSide` and `quality` (a vault thumbnail
        /// asked for, the web app's rendition of a HEIC for a browser).
        case thumbnail
    }

    public var operation: Operation
    public var path: String?
    /// The file's size when it was chosen: a file of another size now gets no preview.
    public var size: Int64?
    /// The content type's raw value (`ContentType`), for `.index`.
    public var type: String?
    public var maxSide: Int?
    public var quality: Int?

    public static func preview(path: String, size: Int64) -> MediaRequest {
        MediaRequest(operation: .preview, path: path, size: size)
    }
    public static var previewOfBody: MediaRequest { MediaRequest(operation: .preview) }
    public static func index(type: ContentType) -> MediaRequest { MediaRequest(operation: .index, type: type.rawValue) }
    public static func thumbnail(maxSide: Int, quality: Int) -> MediaRequest {
        MediaRequest(operation: .thumbnail, maxSide: maxSide, quality: quality)
    }
}

/// The answer; its body is the JPEG made (a preview or a thumbnail), empty when none was.
public struct MediaReply: Codable, Sendable, Equatable {
    /// Where the JPEG's pixels came from; nil when no JPEG was made.
    public var source: String?
    public var metadata: PhotoMetadata?
    /// Why the photo could not be read (`.index`): the message of the MediaError.
    public var failure: String?

    public init(source: String? = nil, metadata: PhotoMetadata? = nil, failure: String? = nil) {
        self.source = source
        self.metadata = metadata
        self.failure = failure
    }
}

/// A preview or thumbnail as the caller gets it back.
public struct MediaResult: Sendable, Equatable {
    public var jpeg: [UInt8]?
    public var source: ThumbnailSource?
    public var metadata: PhotoMetadata?
    /// Why no JPEG or metadata could be made, when the photo is at fault.
    public var failure: String?
}

public enum MediaJob {
    /// What of a JPEG file is read first for its preview: its EXIF block (at most 64 KiB, after
    /// at most a JFIF segment) with the thumbnail in it. Only when that has no usable thumbnail
    /// is the whole file read, for a shrink-on-load decode.
    public static let previewHeadBytes = 160 << 10

    /// Does `request` here, in the calling process.
    public static func perform(_ request: MediaRequest, body: [UInt8]) -> (MediaReply, [UInt8]) {
        switch request.operation {
        case .preview:
            let t =
                request.path.map { previewOfFile($0, size: request.size) }
                ?? body.withUnsafeBytes { Media.preview(of: $0) }
            return (MediaReply(source: t?.source.rawValue), t?.jpeg ?? [])
        case .index:
            do {
                guard let type = request.type.flatMap(ContentType.init(rawValue:)) else {
                    throw MediaError(.invalidOption, "no content type given")
                }
                let meta = try body.withUnsafeBytes { try Media.metadata(of: $0, type: type) }
                return (MediaReply(metadata: meta), [])
            } catch {
                return (MediaReply(failure: "\(error)"), [])
            }
        case .thumbnail:
            do {
                let t = try body.withUnsafeBytes {
                    try Media.thumbnailWithSource(
                        of: $0, maxSide: request.maxSide ?? 320, quality: request.quality ?? 80)
                }
                return (MediaReply(source: t.source.rawValue), t.jpeg)
            } catch {
                return (MediaReply(failure: (error as? MediaError)?.message ?? "\(error)"), [])
            }
        }
    }

    /// What the head of a JPEG tells without a decoder (`Media.previewFromJPEGHead`), for the
    /// file at `path` or for `body`; `.needsDecoder` for every other format.
    public static func previewWithoutDecoder(path: String?, size: Int64?, body: [UInt8]) -> JPEGHeadPreview {
        guard let path else {
            guard ContentType.sniff(body) == .jpeg else { return .needsDecoder }
            return Media.previewFromJPEGHead(
                Array(body.prefix(previewHeadBytes)), wholeFile: body.count <= previewHeadBytes)
        }
        guard let file = PhotoFile(path, size: size), let head = file.read(min(file.size, previewHeadBytes)),
            ContentType.sniff(head) == .jpeg
        else { return .needsDecoder }
        return Media.previewFromJPEGHead(head, wholeFile: file.size <= previewHeadBytes)
    }

    /// `Media.preview` of a file, reading no more of it than that needs; nil when the file is
    /// unreadable, has another size than `size`, or has no cheap preview.
    static func previewOfFile(_ path: String, size expected: Int64?) -> QuickThumbnail? {
        guard let file = PhotoFile(path, size: expected), file.size <= Media.maxInputBytes else { return nil }
        if file.size > previewHeadBytes, let head = file.read(previewHeadBytes), ContentType.sniff(head) == .jpeg {
            switch Media.previewFromJPEGHead(head, wholeFile: false) {
            case .ready(let t): return t
            case .unreadable: return nil
            case .needsDecoder:
                // A turned EXIF thumbnail, from the head: the scan data was not read.
                if let t = head.withUnsafeBytes({ Media.preview(of: $0, embeddedOnly: true) }) { return t }
            }
        }
        return file.read(file.size)?.withUnsafeBytes { Media.preview(of: $0) }
    }
}

/// A regular file opened for reading its first bytes (pread: no shared offset).
private final class PhotoFile {
    let fd: Int32
    let size: Int

    /// nil when it cannot be opened, is not a regular file, or is not `expected` bytes long.
    init?(_ path: String, size expected: Int64?) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, expected == nil || Int64(st.st_size) == expected
        else {
            close(fd)
            return nil
        }
        size = Int(st.st_size)
    }

    deinit { close(fd) }

    /// The first `count` bytes; nil when the file is shorter now or cannot be read.
    func read(_ count: Int) -> [UInt8]? {
        var b = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return b
    }
}

extension MediaResult {
    init(_ reply: MediaReply, _ body: [UInt8]) {
        jpeg = body.isEmpty ? nil : body
        source = reply.source.flatMap(ThumbnailSource.init(rawValue:))
        metadata = reply.metadata
        failure = reply.failure
    }
}
