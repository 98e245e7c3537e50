import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import NIOCore
import Synchronization

/// Photos uploaded for sending (`POST /v1/uploads`, then `POST /v1/send` with `uploads`): a
/// browser can give file contents but not paths. They are held in this process's memory, never
/// written to disk, and sent from there like photos taken from the vault (such a transfer
/// resumes while the agent runs, not after a restart). Each upload is used by one send; one
/// that is not sent within `lifetime` is dropped.
final class UploadStore: Sendable {
    static let lifetime: Duration = .seconds(30 * 60)
    /// All uploads waiting to be sent, together.
    static let maxTotalBytes: Int64 = 1 << 30

    private struct Upload {
        var item: PreparedItem
        var at: ContinuousClock.Instant
    }

    private let waiting = Mutex<[String: Upload]>([:])

    /// Bytes held, after dropping what has waited too long.
    fileprivate func heldBytes() -> Int64 {
        waiting.withLock { w in
            w = w.filter { $0.value.at + Self.lifetime > .now }
            return w.values.reduce(0) { $0 + $1.item.size }
        }
    }

    /// A sink for one upload named `name` (the browser's file name; only its last component
    /// is kept, cleaned like a file name from disk).
    func begin(name: String, maxSize: Int64) throws -> UploadSink {
        let limit = min(maxSize, Int64(Media.maxInputBytes))
        let room = Self.maxTotalBytes - heldBytes()
        guard room > 0 else {
            throw AgentError(.conflict, "\(Self.maxTotalBytes >> 20) MiB of uploads already wait to be sent; send or drop them first")
        }
        return UploadSink(store: self, name: name, limit: min(limit, room), perItem: limit)
    }

    fileprivate func add(_ item: PreparedItem) {
        waiting.withLock { $0[item.id] = Upload(item: item, at: .now) }
    }

    /// Takes the uploads named by `ids` out of the store (all or none).
    func take(_ ids: [String]) throws -> [PreparedItem] {
        try waiting.withLock { w in
            w = w.filter { $0.value.at + Self.lifetime > .now }
            if let missing = ids.first(where: { w[$0] == nil }) {
                throw AgentError(.notFound, "no upload \(missing) (uploads wait \(Self.lifetime.components.seconds / 60) minutes to be sent, once)")
            }
            return ids.map { w.removeValue(forKey: $0)!.item }
        }
    }

    /// Uploads taken for a send that did not start go back.
    func putBack(_ items: [PreparedItem], ids: [String]) {
        waiting.withLock { w in
            for (id, item) in zip(ids, items) { w[id] = Upload(item: item, at: .now) }
        }
    }
}

/// One upload as its bytes arrive: bounded, then sniffed (images only) and hashed.
final class UploadSink: BodySink, @unchecked Sendable {
    private let store: UploadStore
    private let name: String
    private let limit: Int64
    private let perItem: Int64
    // One request's body: written by that request's handler only, in order.
    private var bytes: [UInt8] = []

    fileprivate init(store: UploadStore, name: String, limit: Int64, perItem: Int64) {
        self.store = store
        self.name = name
        self.limit = limit
        self.perItem = perItem
    }

    func write(_ piece: ByteBuffer) throws {
        guard Int64(bytes.count + piece.readableBytes) <= limit else {
            bytes = []
            throw limit < perItem
                ? AgentError(.conflict, "too many uploads wait to be sent (\(UploadStore.maxTotalBytes >> 20) MiB in all); send them first")
                : AgentError(.invalidRequest, "an upload is at most \(perItem >> 20) MiB")
        }
        bytes.append(contentsOf: piece.readableBytesView)
    }

    func finish() throws -> ControlResponse {
        guard let type = ContentType.sniff(Array(bytes.prefix(64))) else {
            bytes = []
            throw AgentError(.unsupported, "\(name.isEmpty ? "the upload" : name) is not a supported image (JPEG, PNG, HEIC/HEIF, AVIF, WebP, GIF, TIFF)")
        }
        let base = (name as NSString).lastPathComponent
        let clean = String(String(base.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f && $0 != "\\" }.map(Character.init)).prefix(200))
        let item = PreparedItem(
            id: UUID().uuidString.lowercased(), path: "upload:\(clean)",
            name: clean.isEmpty || clean == "." || clean == ".." ? "photo.\(type.fileExtension)" : clean,
            kind: type.rawValue, size: Int64(bytes.count), hash: ContentHash.of(bytes), stamp: nil, data: bytes,
            originalSize: Int64(bytes.count))
        bytes = []
        store.add(item)
        struct Out: Encodable { var id: String; var name: String; var kind: String; var size: Int64 }
        return .json(Out(id: item.id, name: item.name, kind: item.kind, size: item.size), status: 201)
    }

    func abort() {
        bytes = []
    }
}
