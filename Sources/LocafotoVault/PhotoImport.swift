import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoFormats
import LocafotoQuery

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sees a photo's plaintext as it is imported and decides, just before the commit, whether it
/// may be stored: the agent's classify hook (`agent --classify-hook`), given to every local
/// import path (files, standard input, `.lfs` files, bundles) through `PhotoImport.gate`.
public protocol ImportGate: AnyObject {
    /// The next plaintext bytes, in order.
    func feed(_ bytes: UnsafeRawBufferPointer)
    /// All bytes were fed: the tags to add, or a `VaultError` (`vetoed`) that refuses the photo.
    func verdict() throws -> [String]
    /// The import ended without a verdict (an error, an abort): stop whatever the gate runs.
    func cancel()
}

/// One in-progress streaming import. Plaintext is hashed and encrypted (ChaCha20-Poly1305,
/// streamed) into `tmp/<uuid>.part` as it arrives, so memory stays bounded by the chunk size
/// whatever the photo size. The first bytes are sniffed: anything but a supported image is
/// refused (`unsupportedContent`). Not thread-safe: use it from one task at a time.
///
/// After any error the import is over: its temporary file is removed and every further call
/// rethrows that error. If neither `finish` nor `abort` runs, `deinit` aborts.
public final class PhotoImport {
    private enum State {
        case open, finished
        case failed(VaultError)
    }

    public let id: String
    /// The name that will be stored (control characters removed).
    public let name: String?
    /// Plaintext bytes accepted so far.
    public private(set) var size: Int64 = 0
    /// The sniffed format, once enough bytes arrived.
    public private(set) var format: ContentType?
    /// Asked before the commit (see `ImportGate`); its tags are added to the photo.
    public var gate: (any ImportGate)?

    private let vault: Vault
    private let limit: Int64
    private let tempPath: String
    private var file: OpenFile?
    private var stream: ChaChaPolyStream?
    private let nonce: [UInt8]
    private let wrappedKey: [UInt8]
    private var hasher = ContentHash.hasher()
    private var head: [UInt8] = []
    /// Whether the header must decode as its format, and the check once the format is known.
    private let checkHeader: Bool
    private var header: ImageHeaderCheck?
    private var state = State.open
    /// Where plaintext is encrypted in place before it is written: as large as the largest
    /// write so far, at most `Vault.ioChunk` (a network upload writes what one read brought,
    /// a few KiB; a megabyte zeroed per upload made 300 parallel uploads cost 374 MiB).
    private var work = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    init(vault: Vault, master: SecretBytes, name: String?, maxSize: Int64, checkHeader: Bool = false) throws {
        self.vault = vault
        self.checkHeader = checkHeader
        id = vault.newPhotoID()
        self.name = Vault.storableName(name)
        limit = max(0, min(maxSize, Int64(LOCAHeader.maxOriginalSize)))
        let key = SecretBytes(randomCount: AEADAlgorithm.keyLength)
        nonce = SecureRandom.bytes(AEADAlgorithm.nonceLength)
        wrappedKey = KeyWrap.wrap(key, with: master, aad: Array(id.utf8))
        stream = try ChaChaPolyStream(.encrypt, key: key, nonce: nonce)
        tempPath = vault.tmpPath + "/\(UUID().uuidString.lowercased()).part"
        do {
            let f = try disk.open(tempPath, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600, what: "create")
            file = f
            // Placeholder header: the real one (with the final size) is written by `finish`.
            try f.write([UInt8](repeating: 0, count: LOCAHeader.length))
        } catch {
            file?.close()
            disk.unlinkIfPresent(tempPath)
            state = .failed(VaultError.wrap(error, "could not start the import"))
            throw error
        }
    }

    deinit {
        if case .open = state { abort() }
        releaseWork()
    }

    private func checkOpen() throws {
        switch state {
        case .open: return
        case .finished: throw VaultError(.io, "this import is already finished")
        case .failed(let e): throw e
        }
    }

    private func fail(_ error: any Error) -> VaultError {
        let e = VaultError.wrap(error, "the import failed")
        if case .open = state { discard() }
        state = .failed(e)
        return e
    }

    private func discard() {
        gate?.cancel()
        gate = nil
        file?.close()
        file = nil
        stream = nil
        disk.unlinkIfPresent(tempPath)
    }

    private func unsupported() -> VaultError {
        VaultError(
            .unsupportedContent,
            "\(name.map { "\"\($0)\"" } ?? "the data") is not a supported image (supported formats: "
                + "\(ContentType.supportedFormatsList)); the type is recognised from the content, not the file name")
    }

    /// Appends plaintext. Throws `unsupportedContent` as soon as the first bytes rule out every
    /// supported format and `tooLarge` when the total would exceed `maxSize`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkOpen()
        guard bytes.count > 0 else { return }
        do {
            guard Int64(bytes.count) <= limit - size else {
                throw VaultError(
                    .tooLarge,
                    "\(name.map { "\"\($0)\"" } ?? "the photo") is larger than the \(limit)-byte limit for this import")
            }
            var checked = 0  // bytes of this write the header check has seen
            if format == nil {
                checked = min(bytes.count, ContentType.sniffLength - head.count)
                head += bytes.prefix(checked)
                if head.count >= ContentType.sniffLength {
                    guard let t = ContentType.sniff(head) else { throw unsupported() }
                    format = t
                    try startHeaderCheck(t)
                }
            }
            // Fed in place: a copy out and back would copy the check's buffered fields on every write.
            if header?.verdict == .needMore, checked < bytes.count {
                header?.feed(UnsafeRawBufferPointer(rebasing: bytes[checked...]))
                if let verdict = header?.verdict { try headerVerdict(verdict) }
            }
            hasher.update(bytes)
            guard let file, let s = stream else { throw VaultError(.io, "the import is not writable") }
            growWork(to: bytes.count)
            var offset = 0
            while offset < bytes.count {
                let n = min(work.count, bytes.count - offset)
                let chunk = UnsafeMutableRawBufferPointer(rebasing: work[0..<n])
                chunk.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n]))
                s.process(chunk)
                try file.write(UnsafeRawBufferPointer(chunk))
                offset += n
            }
            size += Int64(bytes.count)
            gate?.feed(bytes)
        } catch {
            throw fail(error)
        }
    }

    /// The format is known from `head`: the header check (when asked for) starts with it.
    private func startHeaderCheck(_ format: ContentType) throws {
        guard checkHeader else { return }
        var h = ImageHeaderCheck(format: format)
        h.feed(head)
        header = h
        try headerVerdict(h.verdict)
    }

    private func headerVerdict(_ verdict: ImageHeaderCheck.Verdict) throws {
        guard case .invalid(let why) = verdict else { return }
        throw VaultError(
            .unsupportedContent,
            "\(name.map { "\"\($0)\"" } ?? "the data") begins like a \(format?.displayName ?? "photo") but is not one: \(why)"
        )
    }

    private func growWork(to count: Int) {
        let wanted = min(max(count, 4096), Vault.ioChunk)
        guard wanted > work.count else { return }
        releaseWork()
        work = UnsafeMutableRawBufferPointer.allocate(byteCount: wanted, alignment: 16)
    }

    private func releaseWork() {
        guard work.baseAddress != nil else { return }
        secureZero(work)
        work.deallocate()
        work = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Completes the import atomically: tag, final header, fsync, rename into `photos/` and
    /// catalog insert in one transaction. Requires the vault still unlocked.
    ///
    /// With `skipDuplicates`, content already in the vault (same BLAKE2b-256 content hash) is not
    /// stored again: the import is abandoned and `duplicate` names the photo that has it.
    public func finish(senderFingerprint: String? = nil, senderName: String? = nil, skipDuplicates: Bool = false) throws
        -> PhotoRecord
    {
        try checkOpen()
        do {
            if format == nil {
                guard let t = ContentType.sniff(head) else { throw unsupported() }
                format = t
                try startHeaderCheck(t)
            }
            if let h = header { try headerVerdict(h.verdictAtEnd) }
            _ = try vault.requireMasterKey()
            if skipDuplicates {
                var probe = hasher
                if let existing = try vault.photo(withContentHash: probe.finalize()) {
                    throw VaultError(
                        .duplicate, "already in the vault as \(existing.id.prefix(8)) (\(existing.name ?? "unnamed"))")
                }
            }
            // After the duplicate check (a duplicate needs no verdict), before anything commits.
            let tags = try gate?.verdict() ?? []
            gate = nil
            guard let file, let s = stream.take() else { throw VaultError(.io, "the import is not writable") }
            try file.write(s.finalize())
            let header = LOCAHeader(
                algorithm: .chacha20poly1305, nonce: nonce, originalSize: UInt64(size), timestamp: Vault.nowSeconds())
            try file.write(header.encoded(), at: 0)
            try file.sync()
            file.close()
            self.file = nil
            let now = Vault.now()
            let record = PhotoRecord(
                id: id, name: name, format: format!.rawValue, originalSize: size,
                encryptedSize: Int64(header.expectedFileLength()), contentHash: hasher.finalize(), captureDate: nil,
                importDate: now, width: nil, height: nil, tags: [], isFavorite: false, isHidden: false,
                senderFingerprint: senderFingerprint, senderName: senderName)
            let row = PhotoRow(
                record: record, modifiedDate: now, wrappedKey: wrappedKey, algorithm: .chacha20poly1305,
                filePath: Vault.relativePath(id))
            // Checked again where it commits: another import of the same bytes may have finished
            // since the check above (parallel uploads).
            var stored = try vault.commit(source: tempPath, row: row, unlessPresent: skipDuplicates)
            state = .finished
            if !tags.isEmpty {
                _ = try vault.addTags(tags, to: .ids([id]))
                stored.tags = Array(Set(stored.tags + tags)).sorted()
            }
            return stored
        } catch {
            throw fail(error)
        }
    }

    /// Abandons the import and removes its temporary file. Idempotent.
    public func abort() {
        if case .open = state {
            discard()
            state = .failed(VaultError(.io, "the import was aborted"))
        }
    }
}
