import Foundation
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoVault
import Hummingbird
import NIOCore
import Synchronization

/// Filters and compression in the vault (README "Filters", "Compression in the vault"): every
/// photo is decrypted in memory, processed by libvips in memory, and either answered, written
/// where the user asked (an export), or imported encrypted. No plaintext file is ever made.
/// `POST /v1/import?filter=NAME`: the body is gathered in memory (at most 256 MiB; never on
/// disk), filtered, and only the filtered photo goes into the vault.
final class FilteredStreamImport: BodySink {
    let vault: Vault
    let name: String?
    let filter: PhotoFilter
    let hook: ClassifyHook?
    let activity: VaultActivity
    private var buffer: [UInt8] = []

    init(vault: Vault, name: String?, filter: PhotoFilter, hook: ClassifyHook?, activity: VaultActivity) {
        self.vault = vault
        self.name = name
        self.filter = filter
        self.hook = hook
        self.activity = activity
    }

    func write(_ bytes: ByteBuffer) throws {
        // A photo streamed in for a long time (a slow pipe) is use: no auto-lock under it.
        activity.touch()
        guard buffer.count + bytes.readableBytes <= FiltersController.maxProcessedBytes else {
            throw AgentError(
                .unsupported, "a photo to filter may be at most \(FiltersController.maxProcessedBytes >> 20) MiB")
        }
        buffer.append(contentsOf: bytes.readableBytesView)
    }

    func finish() throws -> ControlResponse {
        defer { abort() }
        let out = try buffer.withUnsafeBytes {
            try Media.render($0, type: nil, filter: filter, options: RenderOptions())
        }
        let importer = try vault.beginImport(
            name: FiltersController.derivedName(name, tag: filter.rawValue, extension: "jpg"))
        do {
            importer.gate = try hook?.start()
            try importer.write(out)
            return .json(try importer.finish(), status: 201)
        } catch {
            importer.abort()
            throw error
        }
    }

    func abort() {
        secureZero(&buffer)
        buffer = []
    }
}

/// Export helpers: the folder is made when missing, the file gets the capture time.
enum ExportFiles {
    /// `mkdir -p`: each missing folder is created 0700 (an export holds plaintext photos).
    static func makeDirectory(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw AgentError(.io, "cannot create the folder \(current): \(String(cString: strerror(errno)))")
            }
        }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw AgentError(.io, "\(path) is not a folder")
        }
    }

    /// Sets the file's modification (and access) time to the photo's capture time, so file
    /// managers and `ls -t` order exports as the photos were taken. Unknown capture time: unchanged.
    static func setCaptureTime(_ path: String, _ date: Date?) {
        guard let date else { return }
        let t = date.timeIntervalSince1970
        let spec = timespec(tv_sec: Int(t.rounded(.down)), tv_nsec: Int((t - t.rounded(.down)) * 1e9))
        var times = [spec, spec]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }
}

/// A photo decrypted chunk by chunk into an HTTP answer (`GET /v1/photos/{id}/original`): the
/// plaintext exists only in the chunks in flight (two of at most 1 MiB), whatever the photo's
/// size, and never in a file. `Vault.streamPhoto` verifies the whole file (tag, content hash)
/// before it delivers the first chunk, so a damaged photo is still an error answer, not a 200
/// cut short.
final class PhotoStream: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
    private let credit = DispatchSemaphore(value: 2)
    private let stopped = Mutex(false)

    private init(_ stream: AsyncThrowingStream<ByteBuffer, any Error>) {
        iterator = stream.makeAsyncIterator()
    }

    /// Starts decrypting on a thread of its own (blocking file reads) and waits until the photo
    /// verified: its errors are thrown here. Then the first chunk is ready.
    static func open(_ vault: Vault, _ id: String) async throws -> (PhotoStream, ByteBuffer?) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let s = PhotoStream(stream)
        Thread.detachNewThread {
            do {
                try vault.streamPhoto(id) { chunk in
                    s.credit.wait()  // at most two chunks ahead of the socket
                    if s.stopped.withLock({ $0 }) { throw CancellationError() }
                    continuation.yield(ByteBuffer(bytes: chunk))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let first = try await s.next()
        return (s, first)
    }

    func next() async throws -> ByteBuffer? {
        let b = try await iterator.next()
        credit.signal()
        return b
    }

    /// The reader went away: the decrypting thread ends at its next chunk.
    func stop() {
        stopped.withLock { $0 = true }
        credit.signal()
        credit.signal()
    }
}

extension Agent {
    /// `GET /v1/photos/{id}/original`: the photo as imported, with its own type, decrypted
    /// chunk by chunk into the answer (`locafoto export ID -`); no size limit, no file.
    func originalStreamRoute(_ id: String) async throws -> ControlResponse {
        let vault = try unlockedVault()
        let record = try vault.photo(matching: id)
        let (stream, first) = try await PhotoStream.open(vault, record.id)
        let body = ResponseBody { writer in
            defer { stream.stop() }
            var next = first
            while let b = next {
                try await writer.write(b)
                next = try await stream.next()
            }
            try await writer.finish(nil)
        }
        var r = ControlResponse.streaming(
            ContentType(rawValue: record.format)?.mimeType ?? "application/octet-stream", body)
        r.headers.append((.contentLength, String(record.originalSize)))
        return r
    }
}
