import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles

/// Encrypted backup of a whole vault in one file, restorable on another machine with the
/// passphrase alone (protocol/formats.md "Vault backup").
///
///     "LOCABAK\0" (8) ‖ u32 BE header length ‖ header JSON ‖ secretstream header (24) ‖
///     records: u32 BE length ‖ secretstream message
///
/// The header carries the Argon2id parameters, salt and the wrapped master key (exactly as the
/// catalog stores them). The stream key is derived from the master key, so the passphrase opens
/// it; the header is the associated data of the first message, so it cannot be swapped. Inside:
/// a FILE record (JSON path + size) then DATA records for each file — the catalog snapshot and
/// every `.loca` file (photos and thumbnails, still encrypted under their own keys) — and an END
/// record with TAG_FINAL, so truncation is detected.
///
/// With the node identity (`backup --with-identity`) the header says `"version": 2,
/// "identity": true` and an `identity.json` FILE record follows the catalog: the file exactly
/// as the node stores it, encrypted like everything else in the stream (under the key derived
/// from the master key), so it needs no wrapping of its own. Backups without it stay version 1,
/// readable by earlier versions.
public enum VaultBackup {
    /// The name of the identity's FILE record (and of the node's identity file).
    public static let identityPath = "identity.json"
    /// identity.json is a small JSON file; a larger record is refused.
    static let maxIdentityBytes = 4096

    static let magic: [UInt8] = Array("LOCABAK".utf8) + [0]
    static let maxHeader = 64 << 10
    static let maxRecord = (1 << 20) + 64
    static let chunk = 1 << 20
    static let kdfContext = "LOCABAK1"

    enum Record: UInt8 {
        case file = 1
        case data = 2
        case end = 3
    }

    struct Header: Codable {
        var version: Int
        var created: Date
        var kdfAlgorithm: String
        var kdfSalt: Data
        var kdfOpsLimit: Int64
        var kdfMemLimit: Int64
        var wrappedMasterKey: Data
        var photos: Int
        /// Version 2: an identity.json record is present.
        var identity: Bool?
    }

    struct FileEntry: Codable {
        var path: String
        var size: Int64
    }

    public struct Summary: Codable, Sendable {
        public var path: String
        public var photos: Int
        public var files: Int
        public var bytes: Int64
        /// The node identity was written (backup) or restored (restore).
        public var identity: Bool?
    }
}

extension Vault {
    /// Writes an encrypted backup to `path` (refuses to overwrite). Requires the vault unlocked.
    /// `identity`: the node's identity.json bytes, to include (format version 2).
    public func writeBackup(to path: String, identity: [UInt8]? = nil) throws -> VaultBackup.Summary {
        if let identity, identity.isEmpty || identity.count > VaultBackup.maxIdentityBytes {
            throw VaultError(.invalidArgument, "the node identity file is empty or too large to back up")
        }
        let master = try requireMasterKey()
        guard !disk.exists(path) else {
            throw VaultError(.exists, "\(path) already exists; choose another backup file name")
        }
        let keyRow = try readCatalog { try VaultKeyRow.fetchOne($0) }
        guard let keyRow else { throw VaultError(.corrupt, "the vault catalog has no key record") }
        // A consistent snapshot of the catalog, taken with SQLite's backup API.
        let snapshot = tmpPath + "/backup-\(UUID().uuidString.lowercased()).sqlite"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { disk.unlinkIfPresent(snapshot + suffix) }
        }
        let files: [String]
        do {
            let target = try DatabaseQueue(path: snapshot)
            try db.backup(to: target)
            try target.close()
            files = try db.read { try String.fetchAll($0, sql: "SELECT filePath FROM photo ORDER BY filePath") }
        } catch {
            throw VaultError.wrap(error, "could not snapshot the vault catalog")
        }
        let thumbs = files.map { $0.replacingOccurrences(of: "photos/", with: "thumbs/") }.filter {
            disk.exists(directory + "/" + $0)
        }
        let header = VaultBackup.Header(
            version: identity == nil ? 1 : 2, created: Date(), kdfAlgorithm: keyRow.kdfAlgorithm,
            kdfSalt: keyRow.kdfSalt,
            kdfOpsLimit: keyRow.kdfOpsLimit, kdfMemLimit: keyRow.kdfMemLimit, wrappedMasterKey: keyRow.wrappedMasterKey,
            photos: files.count, identity: identity == nil ? nil : true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        let headerBytes = [UInt8](try encoder.encode(header))

        let out = try disk.createPartial(beside: path)
        let partial = out.path
        var committed = false
        defer {
            out.close()
            if !committed { disk.unlinkIfPresent(partial) }
        }
        let writer = try SecretStream.Writer(
            key: SecretStream.deriveKey(from: master, id: 1, context: VaultBackup.kdfContext))
        try out.write(VaultBackup.magic + be32(headerBytes.count) + headerBytes + writer.header)
        var first = true
        var bytes: Int64 = 0
        func record(_ type: VaultBackup.Record, _ payload: [UInt8], final: Bool = false) throws {
            let c = writer.push([type.rawValue] + payload, tag: final ? .final : .message, ad: first ? headerBytes : [])
            first = false
            try out.write(be32(c.count) + c)
        }
        var entries = [(rel: "catalog.sqlite", abs: snapshot)]
        entries += (files + thumbs).map { ($0, directory + "/" + $0) }
        var buffer = [UInt8](repeating: 0, count: VaultBackup.chunk)
        defer { secureZero(&buffer) }  // it held the identity's clear bytes
        if let identity {
            // From memory, not from a path: the caller read (and checked) the node's file.
            try record(
                .file,
                [UInt8](
                    try encoder.encode(
                        VaultBackup.FileEntry(path: VaultBackup.identityPath, size: Int64(identity.count)))))
            var plain = [VaultBackup.Record.data.rawValue] + identity
            defer { secureZero(&plain) }
            let c = writer.push(plain, tag: .message, ad: [])
            try out.write(be32(c.count) + c)
        }
        for entry in entries {
            let fd = try disk.open(entry.abs, O_RDONLY | O_CLOEXEC, what: "read")
            defer { fd.close() }
            let size = try fd.size()
            try record(.file, [UInt8](try encoder.encode(VaultBackup.FileEntry(path: entry.rel, size: Int64(size)))))
            var offset: UInt64 = 0
            while offset < size {
                let n = try buffer.withUnsafeMutableBytes { try fd.read(into: $0, at: offset) }
                guard n > 0 else { throw VaultError(.io, "\(entry.abs) shrank while it was being backed up") }
                try record(.data, Array(buffer[..<n]))
                offset += UInt64(n)
            }
            bytes += Int64(size)
        }
        let count = entries.count + (identity == nil ? 0 : 1)
        try record(.end, [UInt8](try encoder.encode(["files": count])), final: true)
        try out.sync()
        try disk.rename(partial, path)
        committed = true
        return VaultBackup.Summary(
            path: path, photos: files.count, files: count, bytes: bytes, identity: identity == nil ? nil : true)
    }

    /// Restores a backup into `directory` (which must not hold a vault). Everything is written
    /// to a sibling folder first and moved into place only once the whole stream verified.
    /// `identityPath`: where a node identity found in the backup goes (0600), moved there just
    /// before the vault; nil leaves it out. An existing, different file there is not replaced
    /// (`alreadyExists`, checked before anything is moved into place).
    public static func restoreBackup(
        from path: String, to directory: String, passphrase: SecretBytes, identityPath: String? = nil
    ) throws -> VaultBackup.Summary {
        try restoreBackup(from: path, to: directory, identityPath: identityPath) { header in
            let params = PasswordKDF.Parameters(
                opsLimit: UInt64(clamping: header.kdfOpsLimit), memLimit: UInt64(clamping: header.kdfMemLimit))
            let kek = try PasswordKDF.deriveKey(
                passphrase: passphrase, salt: [UInt8](header.kdfSalt), parameters: params)
            do {
                return try KeyWrap.unwrap([UInt8](header.wrappedMasterKey), with: kek, aad: masterKeyAAD)
            } catch {
                throw VaultError(.wrongPassphrase, "wrong passphrase for this backup")
            }
        }
    }

    /// The restore itself; `unlock` turns the checked header into the master key (Argon2id of
    /// the passphrase, then unwrap). Separate so the fuzz target can skip the 64 MiB Argon2id.
    static func restoreBackup(
        from path: String, to directory: String, identityPath: String? = nil,
        unlock: (VaultBackup.Header) throws -> SecretBytes
    ) throws -> VaultBackup.Summary {
        guard !exists(at: directory) else {
            throw VaultError(.alreadyExists, "a vault already exists in \(directory); restore into another folder")
        }
        let input = try disk.open(path, O_RDONLY | O_CLOEXEC, what: "read")
        defer { input.close() }
        var offset: UInt64 = 0
        func read(_ n: Int) throws -> [UInt8] {
            let b = try input.read(count: n, at: offset)
            guard b.count == n else {
                throw VaultError(.corrupt, "\(path) is truncated: not a complete Locafoto backup")
            }
            offset += UInt64(n)
            return b
        }
        guard try read(8) == VaultBackup.magic else {
            throw VaultError(.corrupt, "\(path) is not a Locafoto vault backup")
        }
        let headerLength = beInt(try read(4))
        guard headerLength > 0, headerLength <= VaultBackup.maxHeader else {
            throw VaultError(.corrupt, "\(path) has an invalid backup header")
        }
        let headerBytes = try read(headerLength)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let header = try? decoder.decode(VaultBackup.Header.self, from: Data(headerBytes)),
            header.version == 1 || (header.version == 2 && header.identity == true)
        else {
            throw VaultError(.corrupt, "\(path) has an unreadable or newer backup header")
        }
        let hasIdentity = header.version == 2
        let params = PasswordKDF.Parameters(
            opsLimit: UInt64(clamping: header.kdfOpsLimit), memLimit: UInt64(clamping: header.kdfMemLimit))
        guard header.kdfAlgorithm == VaultKeyRow.kdfAlgorithmName, params.isWithinBounds,
            header.kdfSalt.count == PasswordKDF.saltLength
        else {
            throw VaultError(.corrupt, "\(path) has invalid key-derivation settings")
        }
        let master = try unlock(header)
        let reader = try SecretStream.Reader(
            key: SecretStream.deriveKey(from: master, id: 1, context: VaultBackup.kdfContext),
            header: try read(SecretStream.headerLength))

        let target = URL(fileURLWithPath: directory).standardizedFileURL.path
        let staging = target + ".restoring-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(
            atPath: staging, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var done = false
        defer { if !done { try? FileManager.default.removeItem(atPath: staging) } }
        var first = true
        var current: (fd: OpenFile, remaining: Int64, path: String)?
        var files = 0
        var bytes: Int64 = 0
        var seen = Set<String>()
        var endSeen = false
        let total = try input.size()
        while !reader.finished {
            guard offset + 4 <= total else { throw VaultError(.corrupt, "\(path) is truncated: the backup ends early") }
            let n = beInt(try read(4))
            guard n >= SecretStream.overhead + 1, n <= VaultBackup.maxRecord + SecretStream.overhead else {
                throw VaultError(.corrupt, "\(path) has an invalid record length")
            }
            let message: [UInt8]
            do {
                message = try reader.pull(try read(n), ad: first ? headerBytes : []).message
            } catch let e as VaultError {
                throw e
            } catch {
                throw VaultError(.corrupt, "\(path) was altered or is damaged: the backup does not authenticate")
            }
            first = false
            guard let type = message.first.flatMap(VaultBackup.Record.init(rawValue:)) else {
                throw VaultError(.corrupt, "\(path) has an unknown record type")
            }
            let payload = Array(message.dropFirst())
            switch type {
            case .file:
                guard current == nil || current!.remaining == 0 else {
                    throw VaultError(.corrupt, "\(path): a file is incomplete")
                }
                current?.fd.close()
                guard let entry = try? decoder.decode(VaultBackup.FileEntry.self, from: Data(payload)),
                    Self.isBackupPath(entry.path)
                        || (hasIdentity && entry.path == VaultBackup.identityPath
                            && entry.size <= VaultBackup.maxIdentityBytes),
                    entry.size >= 0, seen.insert(entry.path).inserted
                else { throw VaultError(.corrupt, "\(path) names a file that does not belong in a vault") }
                let abs = staging + "/" + entry.path
                try FileManager.default.createDirectory(
                    atPath: (abs as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
                current = (
                    try disk.open(abs, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600, what: "create"),
                    entry.size, entry.path
                )
                files += 1
            case .data:
                guard let c = current, Int64(payload.count) <= c.remaining else {
                    throw VaultError(.corrupt, "\(path): data outside a file")
                }
                try c.fd.write(payload)
                current!.remaining -= Int64(payload.count)
                bytes += Int64(payload.count)
            case .end:
                guard reader.finished, current == nil || current!.remaining == 0 else {
                    throw VaultError(.corrupt, "\(path): the backup ends inside a file")
                }
                guard let counts = try? decoder.decode([String: Int].self, from: Data(payload)),
                    counts["files"] == files
                else {
                    throw VaultError(.corrupt, "\(path): the backup's file count does not match its contents")
                }
                endSeen = true
            }
            // The final tag may only sit on the END record: anything else is a cut-off stream.
            if reader.finished && !endSeen {
                throw VaultError(.corrupt, "\(path) is truncated: it ends before its END record")
            }
        }
        guard offset == total else { throw VaultError(.corrupt, "\(path) has data after the end of the backup") }
        current?.fd.close()
        guard seen.contains("catalog.sqlite") else { throw VaultError(.corrupt, "\(path) holds no catalog") }
        guard seen.contains(VaultBackup.identityPath) == hasIdentity else {
            throw VaultError(.corrupt, "\(path): its header and its contents disagree about the node identity")
        }
        // The restored catalog must open, and every photo it lists must have arrived.
        let photos: [String]
        do {
            let q = try DatabaseQueue(path: staging + "/catalog.sqlite")
            photos = try q.read { try String.fetchAll($0, sql: "SELECT filePath FROM photo") }
            try q.close()
        } catch {
            throw VaultError(.corrupt, "the catalog in \(path) cannot be read", cause: error)
        }
        let missing = photos.filter { !seen.contains($0) }
        guard missing.isEmpty else {
            throw VaultError(.corrupt, "\(path) lacks \(missing.count) photo file(s) its catalog lists")
        }
        guard photos.count == header.photos else {
            throw VaultError(
                .corrupt, "\(path): its header announces \(header.photos) photos, its catalog lists \(photos.count)")
        }
        try FileManager.default.createDirectory(
            atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        if FileManager.default.fileExists(atPath: target) {
            // An empty folder is fine to replace; anything else was refused above (exists(at:)).
            guard (try? FileManager.default.contentsOfDirectory(atPath: target))?.isEmpty == true else {
                throw VaultError(.alreadyExists, "\(target) is not empty; restore into an empty or new folder")
            }
            try FileManager.default.removeItem(atPath: target)
        }
        var identityRestored = false
        let stagedIdentity = staging + "/" + VaultBackup.identityPath
        if hasIdentity, let identityPath {
            // Before the vault: a crash in between leaves the identity and no vault, and a second
            // restore then finds the same identity there and goes on.
            if let existing = FileManager.default.contents(atPath: identityPath) {
                var e = [UInt8](existing)
                defer { secureZero(&e) }
                guard let staged = FileManager.default.contents(atPath: stagedIdentity),
                    constantTimeEquals(e, [UInt8](staged))
                else {
                    throw VaultError(
                        .alreadyExists,
                        "\(identityPath) holds another node identity; move it away to restore the backup's, or restore without the identity"
                    )
                }
            }
            try disk.rename(stagedIdentity, identityPath)
            identityRestored = true
        } else if hasIdentity {
            disk.unlinkIfPresent(stagedIdentity)
        }
        try disk.rename(staging, target)
        done = true
        return VaultBackup.Summary(
            path: target, photos: photos.count, files: files, bytes: bytes, identity: identityRestored ? true : nil)
    }

    /// Only the files a vault consists of may come out of a backup: no `..`, no absolute paths.
    static func isBackupPath(_ p: String) -> Bool {
        if p == "catalog.sqlite" { return true }
        let parts = p.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "photos" || parts[0] == "thumbs" else { return false }
        let hex = Set("0123456789abcdef")
        guard parts[1].count == 2, parts[1].allSatisfy({ hex.contains($0) }) else { return false }
        let name = parts[2]
        guard name.hasSuffix(".loca"), name.count == 36 + 5, name.hasPrefix(parts[1]) else { return false }
        return name.dropLast(5).allSatisfy { hex.contains($0) || $0 == "-" }
    }
}

private func be32(_ n: Int) -> [UInt8] {
    [UInt8(n >> 24 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
}

private func beInt(_ b: [UInt8]) -> Int {
    b.reduce(0) { $0 << 8 | Int($1) }
}
