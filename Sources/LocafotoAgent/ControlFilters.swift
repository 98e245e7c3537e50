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
