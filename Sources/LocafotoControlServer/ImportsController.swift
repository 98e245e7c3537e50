import Foundation
import Hummingbird
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import Logging
import NIOCore
import Synchronization

/// A local import of files and folders, run by the agent; its progress and end are events
/// (`import.progress`, `import.finished`) that the CLI follows.
/// Duplicates (same content hash) and unsupported files are skipped with a reason; each photo is
/// committed on its own, so an interruption keeps what was done.
package final class ImportJob: Sendable {
    package struct Options: Sendable, Codable {
        package var recursive = true
        /// Remove each source file after its import committed (not for skipped files).
        package var removeOriginals = false
        package var skipDuplicates = true
        /// Applied to each photo on the way in: only the filtered photo (a JPEG) is stored.
        package var filter: PhotoFilter?
    }

    // The shapes the control API shows (shared with the CLI and the tests).
    package typealias Entry = ImportSnapshot.Entry
    package typealias Snapshot = ImportSnapshot

    package let id = UUID().uuidString.lowercased()
    private let state: Mutex<Snapshot>

    package init(startedAt: Date) {
        state = Mutex(Snapshot(id: id, state: "scanning", startedAt: startedAt))
    }

    package var current: Snapshot { state.withLock { $0 } }
    @discardableResult
    package func update<T>(_ change: (inout Snapshot) -> T) -> T { state.withLock { change(&$0) } }

    /// Regular files named by `paths`, folders expanded (recursively unless told otherwise),
    /// in a stable order. Hidden files inside folders and symbolic links to folders are skipped.
    package static func expand(_ paths: [String], recursive: Bool) -> (files: [String], skipped: [Entry]) {
        var files: [String] = []
        var skipped: [Entry] = []
        let fm = FileManager.default
        for p in paths {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: p, isDirectory: &isDir) else {
                skipped.append(
                    Entry(path: p, reason: "no such file or folder", code: .notFound))
                continue
            }
            guard isDir.boolValue else {
                files.append(p)
                continue
            }
            let base = URL(fileURLWithPath: p)
            let keys: [URLResourceKey] = [.isRegularFileKey, .isDirectoryKey]
            var options: FileManager.DirectoryEnumerationOptions = [.skipsHiddenFiles]
            if !recursive { options.insert(.skipsSubdirectoryDescendants) }
            guard let e = fm.enumerator(at: base, includingPropertiesForKeys: keys, options: options) else {
                skipped.append(Entry(path: p, reason: "cannot read the folder", code: .io))
                continue
            }
            var found: [String] = []
            for case let url as URL in e
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                found.append(url.path)
            }
            files += found.sorted()
        }
        return (files, skipped)
    }
}

/// `/v1/import` (one photo streamed in), `/v1/imports` (files and folders by path, a job that
/// runs on its own thread) and `/v1/imports/:id`: local imports into the vault, each judged by
/// the classify hook when there is one.
package final class ImportsController: Sendable {
    let vaults: VaultUse
    let events: EventHub
    package let hook: ClassifyHook?
    let clock: any AgentClock
    let logger: Logger
    private let jobs = Mutex<[String: ImportJob]>([:])

    package init(
        vaults: VaultUse, events: EventHub, hook: ClassifyHook?, clock: any AgentClock,
        logger: Logger
    ) {
        self.vaults = vaults
        self.events = events
        self.hook = hook
        self.clock = clock
        self.logger = logger
    }

    /// `filePaths`: the calls that read files by path, for the control socket only.
    package func addRoutes(to t: inout RouteTable, filePaths: Bool) {
        t.streamingPost("/v1/import") { [self] r in
            let name = r.query["name"].flatMap { $0.isEmpty ? nil : $0 }
            let vault = try vaults.unlocked()
            if let f = r.query["filter"], !f.isEmpty {
                // Filtered on the way in; the hook judges the photo as it will be stored.
                return FilteredStreamImport(
                    vault: vault, name: name, filter: try PhotoFilter.named(f), hook: hook, activity: vaults.activity)
            }
            let importer = try vault.beginImport(name: name)
            // `import -` (and `capture`, which pipes into it) is a local import: the hook decides.
            do {
                importer.gate = try hook?.start()
            } catch {
                importer.abort()
                throw error
            }
            return StreamImport(importer, activity: vaults.activity)
        }
        guard filePaths else { return }
        t.post("/v1/imports") { [self] r in
            let b = try ControlJSON.decode(ImportRequest.self, r.body)
            var options = ImportJob.Options()
            options.recursive = b.recursive ?? true
            options.removeOriginals = b.removeOriginals ?? false
            options.skipDuplicates = b.skipDuplicates ?? true
            options.filter = try b.filter.map { try PhotoFilter.named($0) }
            return .json(try startImport(paths: b.paths, options: options).current, status: 202)
        }
        t.get("/v1/imports/:id") { [self] r in
            let id = try r.parameter("id")
            guard let job = job(id) else { throw AgentError(.notFound, "no import \(id)") }
            return .json(job.current)
        }
    }

    package func startImport(paths: [String], options: ImportJob.Options) throws -> ImportJob {
        let vault = try vaults.unlocked()
        guard !paths.isEmpty else { throw AgentError(.invalidRequest, "name at least one file or folder to import") }
        let job = ImportJob(startedAt: clock.date)
        jobs.withLock { [clock] jobs in
            let cutoff = clock.date.addingTimeInterval(-3600)
            jobs = jobs.filter { $0.value.current.finishedAt.map { $0 > cutoff } ?? true }
            jobs[job.id] = job
        }
        vaults.activity.begin()  // no auto-lock in the middle of an import
        Thread.detachNewThread { [self] in
            // Blocking file I/O and hashing: on a thread of its own, not the concurrency pool.
            runImport(job, vault: vault, paths: paths.map(NodeHome.absolute), options: options, hook: hook)
            vaults.activity.end()
        }
        return job
    }

    package func job(_ id: String) -> ImportJob? { jobs.withLock { $0[id] } }

    private func runImport(
        _ job: ImportJob, vault: Vault, paths: [String], options: ImportJob.Options, hook: ClassifyHook?
    ) {
        let (files, missing) = ImportJob.expand(paths, recursive: options.recursive)
        job.update {
            $0.found = files.count
            $0.skipped = missing
            $0.state = "importing"
        }
        for path in files {
            var entry = ImportJob.Entry(path: path)
            var size: Int64 = 0
            do {
                let (record, tags) = try importOne(path, vault: vault, options: options, hook: hook)
                entry.photo = record.id
                entry.tags = tags.isEmpty ? nil : tags
                size = record.originalSize
                if options.removeOriginals, unlink(path) != 0 {
                    entry.reason =
                        "imported, but the original could not be removed: \(String(cString: strerror(errno)))"
                }
            } catch let e as VaultError {
                entry.reason =
                    e.code == .unsupportedContent
                    ? "not a supported image (\(ContentType.supportedFormatsList))" : e.message
                entry.code = ControlErrorMiddleware.agentError(e).code
            } catch {
                let e = ControlErrorMiddleware.agentError(error)
                entry.reason = e.message
                entry.code = e.code
            }
            let done = entry
            let now = job.update { s -> ImportJob.Snapshot in
                s.processed += 1
                s.bytes += size
                if done.photo != nil { s.imported.append(done) } else { s.skipped.append(done) }
                return s
            }
            events.progress(key: job.id, bytes: now.bytes) {
                .importProgress(
                    job: job.id, found: now.found, processed: now.processed,
                    name: (path as NSString).lastPathComponent, progress: $0)
            }
        }
        let end = job.update { s -> ImportJob.Snapshot in
            s.state = "done"
            s.finishedAt = clock.date
            s.message = "\(s.imported.count) imported, \(s.skipped.count) skipped"
            return s
        }
        events.forget(job.id)
        events.publish(
            .importFinished(
                job: job.id, state: end.state, found: end.found, processed: end.processed, bytes: end.bytes,
                message: end.message))
        logger.info("import: \(end.message ?? "")")
    }

    /// Streams one file into the vault; with a classify hook, the same bytes go to the hook,
    /// whose verdict decides whether the import commits (`PhotoImport.gate`).
    private func importOne(_ path: String, vault: Vault, options: ImportJob.Options, hook: ClassifyHook?) throws -> (
        PhotoRecord, [String]
    ) {
        // A .lfs file is decrypted with the vault's key of the name in its header; its photo
        // then goes through the same checks (sniffing, the hook) as any import.
        if path.lowercased().hasSuffix(".\(LFSFile.fileExtension)") {
            // Stored as sealed, never decrypted here: a filter would need the plaintext.
            guard options.filter == nil else {
                throw AgentError(
                    .invalidRequest,
                    "a .lfs file is imported as it is sealed; --filter does not apply (import it, then `locafoto filter`)"
                )
            }
            let record = try vault.importLFS(at: path, gate: try hook?.start())
            return (record, record.tags)
        }
        let reader = try PhotoFileReader(path: path)
        defer { reader.close() }
        guard UInt64(reader.size) <= LOCAHeader.maxOriginalSize else {
            throw AgentError(.invalidRequest, "larger than the 4 GiB limit")
        }
        let fileName = (path as NSString).lastPathComponent
        if let filter = options.filter {
            return try importFiltered(
                reader, name: fileName, filter: filter, vault: vault, options: options, hook: hook)
        }
        let importer = try vault.beginImport(name: fileName)
        do {
            importer.gate = try hook?.start()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try importer.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            let record = try importer.finish(skipDuplicates: options.skipDuplicates)
            return (record, record.tags)
        } catch {
            importer.abort()
            throw error
        }
    }

    /// `import --filter`: the file is read into memory (at most 256 MiB), filtered there, and
    /// the filtered photo is what the classify hook sees and the vault stores.
    private func importFiltered(
        _ reader: PhotoFileReader, name: String, filter: PhotoFilter, vault: Vault, options: ImportJob.Options,
        hook: ClassifyHook?
    ) throws -> (PhotoRecord, [String]) {
        guard reader.size <= Int64(FiltersController.maxProcessedBytes) else {
            throw AgentError(
                .invalidRequest, "larger than the \(FiltersController.maxProcessedBytes >> 20) MiB a filter takes")
        }
        var plain: [UInt8] = []
        defer { secureZero(&plain) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if n == 0 { break }
            plain += buffer[..<n]
            guard plain.count <= FiltersController.maxProcessedBytes else {
                throw AgentError(.invalidRequest, "the file grew while it was read")
            }
        }
        secureZero(&buffer)
        let out = try plain.withUnsafeBytes {
            try Media.render($0, type: nil, filter: filter, options: RenderOptions())
        }
        let importer = try vault.beginImport(
            name: FiltersController.derivedName(name, tag: filter.rawValue, extension: "jpg"))
        do {
            importer.gate = try hook?.start()  // the hook judges the photo as it will be stored
            try importer.write(out)
            let record = try importer.finish(skipDuplicates: options.skipDuplicates)
            return (record, record.tags)
        } catch {
            importer.abort()
            throw error
        }
    }
}

/// Feeds an HTTP request body into a vault import.
final class StreamImport: BodySink {
    let importer: PhotoImport
    let activity: VaultActivity

    init(_ importer: PhotoImport, activity: VaultActivity) {
        self.importer = importer
        self.activity = activity
    }

    func write(_ bytes: ByteBuffer) throws {
        // A photo streamed in for a long time (a slow pipe) is use: no auto-lock under it.
        activity.touch()
        try bytes.withUnsafeReadableBytes { try importer.write($0) }
    }

    func finish() throws -> ControlResponse {
        .json(try importer.finish(), status: 201)
    }

    func abort() {
        importer.abort()
    }
}

/// `POST /v1/import?filter=NAME`: the body is gathered in memory (at most 256 MiB; never on
/// disk), filtered, and only the filtered photo goes into the vault.
final class FilteredStreamImport: BodySink {
    let vault: Vault
    let name: String?
    let filter: PhotoFilter
    package let hook: ClassifyHook?
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
