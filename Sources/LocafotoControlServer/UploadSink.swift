import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoSending
import LocafotoTransfers
import NIOCore

extension UploadStore {
    /// A sink for one upload named `name` (the browser's file name; only its last component
    /// is kept, cleaned like a file name from disk).
    package func begin(name: String, maxSize: Int64) -> UploadSink {
        UploadSink(store: self, name: name, perItem: min(maxSize, Int64(Media.maxInputBytes)))
    }
}

/// One upload as its bytes arrive: bounded, then sniffed (images only) and hashed.
package final class UploadSink: BodySink, @unchecked Sendable {
    private let store: UploadStore
    private let name: String
    private let perItem: Int64
    // One request's body: written by that request's handler only, in order.
    private var bytes: [UInt8] = []

    init(store: UploadStore, name: String, perItem: Int64) {
        self.store = store
        self.name = name
        self.perItem = perItem
    }

    package func write(_ piece: ByteBuffer) throws {
        let n = Int64(piece.readableBytes)
        guard Int64(bytes.count) + n <= perItem else {
            abort()
            throw AgentError(.invalidRequest, "an upload is at most \(perItem >> 20) MiB")
        }
        guard store.reserve(n) else {
            abort()
            throw AgentError(
                .conflict,
                "\(store.maxTotalBytes >> 20) MiB of uploads already wait to be sent; send them first (or wait \(UploadStore.lifetime.components.seconds / 60) minutes)"
            )
        }
        bytes.append(contentsOf: piece.readableBytesView)
    }

    package func finish() throws -> ControlResponse {
        guard let type = ContentType.sniff(Array(bytes.prefix(64))) else {
            abort()
            throw AgentError(
                .unsupported,
                "\(name.isEmpty ? "the upload" : name) is not a supported image (JPEG, PNG, HEIC/HEIF, AVIF, WebP, GIF, TIFF)"
            )
        }
        let base = (name as NSString).lastPathComponent
        let clean = String(
            String(
                base.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f && $0 != "\\" }.map(Character.init)
            ).prefix(200))
        let item = PreparedItem(
            id: UUID().uuidString.lowercased(), path: "upload:\(clean)",
            name: clean.isEmpty || clean == "." || clean == ".." ? "photo.\(type.fileExtension)" : clean,
            kind: type.rawValue, size: Int64(bytes.count), hash: ContentHash.of(bytes), stamp: nil, data: bytes,
            originalSize: Int64(bytes.count))
        let arrived = Int64(bytes.count)
        bytes = []
        store.add(item, arrived: arrived)
        return .json(UploadedPhoto(id: item.id, name: item.name, kind: item.kind, bytes: item.size), status: 201)
    }

    package func abort() {
        store.release(Int64(bytes.count))
        bytes = []
    }
}
