import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Importing and exporting `.lfs` files (seed 001; `LFSFile` for the format).
///
/// Memory: libsodium's AES-256-GCM is one-shot, so an `.lfs` file is decrypted (and sealed) in
/// memory. `importLFS(at:)` holds one buffer of the file's size (decrypted in place, then
/// streamed into a normal `PhotoImport`, which re-encrypts it with ChaCha20-Poly1305 under a
/// fresh photo key); `exportLFS` one buffer of the photo's size (sealed in place). Both refuse
/// more than `LFSFile.maxFileSize` (2 GiB). The in-memory variants (`importLFS(_:fileName:)`,
/// `exportLFSData`) need about twice that.
extension Vault {
    // MARK: - Import

    /// Imports the `.lfs` file at `path`: reads the key name from its header, decrypts with the
    /// vault's key of that name, checks that the content is a supported image and stores it as a
    /// new photo with its own key (the shared key is not used for storage). The photo is named
    /// after the file without `.lfs` (plus the image's extension when that leaves none), and
    /// remembers the key it came from (`sourceKey(ofPhoto:)`, `SharedKeyInfo.photoCount`).
    ///
    /// Throws `unknownKey` (the message names the key and the command to import it),
    /// `malformedFile` (too short, bad header), `tooLarge` (over 2 GiB), `decryptionFailed`
    /// (tag: another key under that name, or an altered file), `unsupportedContent`, `locked`,
    /// `io`. The unknown-key check comes before the file is read past its header.
    /// `gate` (the classify hook) sees the decrypted photo and may refuse it; it is cancelled
    /// when the import fails before it got a verdict.
    public func importLFS(at path: String, gate: (any ImportGate)? = nil) throws -> PhotoRecord {
        do {
            return try importLFSFile(at: path, gate: gate)
        } catch {
            gate?.cancel()
            throw error
        }
    }

    private func importLFSFile(at path: String, gate: (any ImportGate)?) throws -> PhotoRecord {
        _ = try requireMasterKey()
        let file = try disk.open(path, O_RDONLY, what: "open")
        defer { file.close() }
        guard file.isRegularFile else { throw VaultError(.io, "\(path) is not a regular file") }
        let size = UInt64(try file.size())
        let what = "the .lfs file \(path)"
        try Self.checkLFSLength(size, what)
        let head = try file.read(count: LFSFile.headerLength, at: 0)
        let keyName = try Self.lfsKeyName(head, what)
        let shared = try sharedKeyForLFS(keyName)

        let count = Int(size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        defer {
            secureZero(buffer)
            buffer.deallocate()
        }
        let n = try file.read(into: buffer, at: 0)
        guard n == count, try file.size() == size else {
            throw VaultError(.io, "\(path) changed while it was being read; try again")
        }
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init)
        return try importOpenedLFS(buffer, shared: shared, fileName: name, what: what, gate: gate)
    }

    /// Imports an `.lfs` file held in memory (e.g. an upload); `fileName` is its name, if known.
    /// Same behaviour and errors as `importLFS(at:)`; needs about twice the file size in memory.
    public func importLFS(
        _ bytes: [UInt8], fileName: String? = nil, senderFingerprint: String? = nil, senderName: String? = nil
    ) throws -> PhotoRecord {
        _ = try requireMasterKey()
        let what = fileName.map { "the .lfs file \($0)" } ?? "the .lfs file"
        try Self.checkLFSLength(UInt64(bytes.count), what)
        let keyName = try Self.lfsKeyName(bytes.prefix(LFSFile.headerLength), what)
        let shared = try sharedKeyForLFS(keyName)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        defer {
            secureZero(buffer)
            buffer.deallocate()
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return try importOpenedLFS(
            buffer, shared: shared, fileName: fileName, what: what, senderFingerprint: senderFingerprint,
            senderName: senderName)
    }

    private static func checkLFSLength(_ size: UInt64, _ what: String) throws {
        do {
            try LFSFile.checkFileLength(size)
        } catch let e as FormatError where e.code == .tooLarge {
            throw VaultError(
                .tooLarge,
                "\(what) is \(size) bytes; Locafoto imports .lfs files of at most \(LFSFile.maxFileSize) bytes (2 GiB), because AES-GCM is decrypted in memory"
            )
        } catch let e as FormatError {
            throw VaultError(.malformedFile, "\(what) is not a valid .lfs file: \(e.message)")
        }
    }

    private static func lfsKeyName(_ head: some Collection<UInt8>, _ what: String) throws -> String {
        do {
            return try LFSFile.keyName(of: head)
        } catch let e as FormatError {
            throw VaultError(.malformedFile, "\(what) is not a valid .lfs file: \(e.message)")
        }
    }

    /// The key an `.lfs` header names, or `unknownKey` with the message that tells what to do.
    private func sharedKeyForLFS(_ keyName: String) throws -> (name: String, key: SecretBytes, fingerprint: String) {
        do {
            try Self.validateKeyName(keyName)
        } catch let e as VaultError {
            throw VaultError(
                .unknownKey,
                "this file needs the key \(Self.displayKeyName(keyName)), a name Locafoto cannot hold (\(e.message)); ask its sender to use another key name"
            )
        }
        return try unwrapSharedKey(
            named: keyName,
            missingMessage:
                "this file needs the key \(Self.displayKeyName(keyName)); import it with `locafoto key import \(Self.shellWord(keyName))`"
        )
    }

    /// Decrypts the whole file in `buffer` in place and imports the plaintext.
    private func importOpenedLFS(
        _ buffer: UnsafeMutableRawBufferPointer, shared: (name: String, key: SecretBytes, fingerprint: String),
        fileName: String?, what: String, senderFingerprint: String? = nil, senderName: String? = nil,
        gate: (any ImportGate)? = nil
    ) throws -> PhotoRecord {
        let range: Range<Int>
        do {
            range = try LFSFile.openInPlace(buffer, key: shared.key)
        } catch let e as FormatError where e.code == .tagMismatch {
            throw VaultError(
                .decryptionFailed,
                "\(what) does not decrypt with the key \(Self.displayKeyName(shared.name)) (fingerprint \(shared.fingerprint)): "
                    + "it was sealed with another key of the same name, or it was altered; check the fingerprint with its sender"
            )
        } catch let e as FormatError {
            throw VaultError(.malformedFile, "\(what) is not a valid .lfs file: \(e.message)")
        } catch let e as CryptoError where e.code == .unavailable {
            throw VaultError(.io, ".lfs files use AES-256-GCM, which needs a CPU with AES-NI; this one has none")
        }
        let plaintext = UnsafeRawBufferPointer(rebasing: buffer[range])
        guard let type = ContentType.sniff(plaintext.prefix(ContentType.sniffLength)) else {
            throw VaultError(
                .unsupportedContent,
                "\(what) decrypted, but its content is not a supported image (supported formats: \(ContentType.supportedFormatsList)); "
                    + "the type is recognised from the content, not the file name")
        }
        let importer = try beginImport(name: Self.photoName(fromLFSFileName: fileName, type: type))
        importer.gate = gate
        // Provenance first, so that a key deletion racing with a commit sees the photo; a row
        // without a committed photo is ignored (readers join with `photo`) and removed below.
        let source = PhotoSourceKeyRow(photoId: importer.id, keyName: shared.name, keyFingerprint: shared.fingerprint)
        do {
            try db.write { db in try source.insert(db) }
            var offset = 0
            while offset < plaintext.count {
                let n = min(Self.ioChunk, plaintext.count - offset)
                try importer.write(UnsafeRawBufferPointer(rebasing: plaintext[offset..<offset + n]))
                offset += n
            }
            return try importer.finish(senderFingerprint: senderFingerprint, senderName: senderName)
        } catch {
            importer.abort()
            _ = try? db.write { db in try PhotoSourceKeyRow.deleteOne(db, key: source.photoId) }
            throw VaultError.wrap(error, "could not import \(what)")
        }
    }

    /// The stored name of a photo imported from an `.lfs` file called `fileName`: without the
    /// `.lfs` extension (any case), and with the image's extension added when none is left
    /// ("IMG_1.jpg.lfs" → "IMG_1.jpg", "beach.lfs" → "beach.jpg"). nil when nothing is left.
    static func photoName(fromLFSFileName fileName: String?, type: ContentType) -> String? {
        guard var name = fileName else { return nil }
        if name.lowercased().hasSuffix("." + LFSFile.fileExtension) { name.removeLast(LFSFile.fileExtension.count + 1) }
        guard !name.isEmpty else { return nil }
        let dot = name.lastIndex(of: ".")
        if dot == nil || dot == name.startIndex || name.index(after: dot!) == name.endIndex {
            name += "." + type.fileExtension
        }
        return name
    }

    // MARK: - Export

    /// Seals photo `id` with the shared key `keyName` into a new `.lfs` file at `path` (mode
    /// 0600, fresh random nonce, header = the key's name as stored) and returns `path`. The
    /// file appears complete or not at all (written under a temporary name in the same
    /// directory, fsynced, then linked into place); an existing file is never replaced
    /// (`exists`). Throws `unknownKey`, `photoNotFound`/`ambiguousPhoto`, `tooLarge` (photo over
    /// `LFSFile.maxPlaintextSize`), `corrupt`, `locked`, `io`.
    @discardableResult
    public func exportLFS(_ id: String, keyName: String, to path: String) throws -> String {
        _ = try requireMasterKey()
        let row = try row(matching: id)
        try Self.checkLFSExportSize(row.record)
        let shared = try unwrapSharedKey(named: keyName)
        let header = try LFSFile.encodeHeader(keyName: shared.name)

        guard !path.isEmpty, !path.hasSuffix("/"), !disk.isDirectory(path) else {
            throw VaultError(.io, "\(path) is a directory; give the path of the .lfs file to write")
        }
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard disk.isDirectory(dir) else {
            throw VaultError(.io, "export directory \(dir) does not exist; create it first")
        }
        if disk.exists(path) {
            throw VaultError(.exists, "\(path) already exists; choose another name")
        }

        var data = try exportData(row.record.id, maxSize: Int64(LFSFile.maxPlaintextSize))
        defer { secureZero(&data) }
        let nonce = SecureRandom.bytes(LFSFile.nonceLength)
        let tag: [UInt8]
        do {
            tag = try data.withUnsafeMutableBytes {
                try AEAD.sealInPlace(LFSFile.algorithm, key: shared.key, nonce: nonce, buffer: $0)
            }
        } catch let e as CryptoError where e.code == .unavailable {
            throw VaultError(.io, ".lfs files use AES-256-GCM, which needs a CPU with AES-NI; this one has none")
        }

        let partial = (dir == "/" ? "" : dir) + "/.lfs-\(UUID().uuidString.lowercased()).partial"
        let out = try disk.open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600, what: "create")
        do {
            try out.setMode(0o600)
            try out.write(header)
            try out.write(data)
            try out.write(nonce + tag)
            try out.sync()
            out.close()
            if link(partial, path) != 0 {
                if errno == EEXIST { throw VaultError(.exists, "\(path) already exists; choose another name") }
                // File systems without hard links: check, then rename (a small race, as in `export`).
                guard !disk.exists(path) else {
                    throw VaultError(.exists, "\(path) already exists; choose another name")
                }
                try disk.rename(partial, path)
            }
            disk.unlinkIfPresent(partial)
            try? disk.syncDirectory(dir)
        } catch {
            out.close()
            disk.unlinkIfPresent(partial)
            throw error
        }
        return path
    }

    /// The `.lfs` file of photo `id` sealed with `keyName`, in memory (control API responses,
    /// tests). Refuses photos above `maxSize` (`tooLarge`). Same errors as `exportLFS`.
    public func exportLFSData(_ id: String, keyName: String, maxSize: Int64 = 64 << 20) throws -> [UInt8] {
        _ = try requireMasterKey()
        let row = try row(matching: id)
        try Self.checkLFSExportSize(row.record)
        let shared = try unwrapSharedKey(named: keyName)
        var data = try exportData(row.record.id, maxSize: min(maxSize, Int64(LFSFile.maxPlaintextSize)))
        defer { secureZero(&data) }
        do {
            return try LFSFile.seal(plaintext: data, keyName: shared.name, key: shared.key)
        } catch let e as CryptoError where e.code == .unavailable {
            throw VaultError(.io, ".lfs files use AES-256-GCM, which needs a CPU with AES-NI; this one has none")
        }
    }

    /// The file name `exportLFS` callers should default to: the export name plus `.lfs`.
    public static func lfsFileName(for record: PhotoRecord) -> String {
        exportFileName(for: record) + "." + LFSFile.fileExtension
    }

    private static func checkLFSExportSize(_ record: PhotoRecord) throws {
        guard UInt64(record.originalSize) <= LFSFile.maxPlaintextSize else {
            throw VaultError(
                .tooLarge,
                "photo \(record.id) is \(record.originalSize) bytes; an .lfs file holds at most \(LFSFile.maxPlaintextSize) bytes (2 GiB), because AES-GCM is sealed in memory"
            )
        }
    }
}
