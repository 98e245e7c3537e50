import Foundation
import GRDB
import LocafotoCrypto
import LocafotoErrors
import LocafotoFiles
import LocafotoFormats
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local encrypted photo vault: a directory holding an SQLite catalog and one LOCA file per
/// photo, each under its own random key.
///
///     <dir>/                       0700
///       catalog.sqlite (+ -wal, -shm)  0600  GRDB DatabaseQueue (WAL); the `vaultKey` row holds
///                                         the wrapped master key, Argon2id salt and parameters
///       vault.lock                 0600  flock: shared while open, exclusive for the open-time sweep
///       photos/<2 hex>/<id>.loca   0600  LOCA files (ChaCha20-Poly1305 when written here)
///       tmp/                       0700  in-progress writes (same file system: atomic rename)
///
/// Keys: a random 256-bit master key is wrapped (`KeyWrap`, XChaCha20-Poly1305, aad
/// "locafoto vault master key v1") under Argon2id(passphrase, 16-byte salt). Each photo has a
/// random 256-bit key wrapped under the master key with the photo ID as associated data.
///
/// Every photo operation (listing included) requires the vault to be unlocked.
/// Thread-safe: the unlocked master key lives behind a `Mutex`; the catalog is one `DatabaseQueue` (one
/// connection, WAL), because the decrypted mirror of the sealed catalog lives in its TEMP tables.
public final class Vault: Sendable {
    /// Test seams: closures the vault calls at fixed points, to inject failures without mocks.
    public struct Hooks: Sendable {
        /// Called inside the catalog write transaction after the photo file was renamed into
        /// `photos/` and before the row is inserted and committed. Throwing aborts the commit:
        /// the vault then removes the renamed file and rethrows.
        public var beforeCatalogCommit: (@Sendable (_ photoID: String) throws -> Void)?
        /// Supplies the IDs of new photos instead of random UUIDs (tests: to force shared ID
        /// prefixes). Must return distinct lowercase UUID strings.
        public var makePhotoID: (@Sendable () -> String)?
        /// The clock of failed-unlock limiting (UnlockThrottle.swift): tests move it instead of sleeping.
        public var now: @Sendable () -> Date
        /// Called just before every Argon2id derivation of `unlock` and `unlockAlbum` (tests count them).
        public var beforeKeyDerivation: (@Sendable () -> Void)?
        /// Called after a photo deletion committed and before its files are unlinked. Throwing
        /// skips the unlinking, as a crash there would (the next open-time sweep removes the files).
        public var afterDeleteCommit: (@Sendable (_ photoIDs: [String]) throws -> Void)?
        /// Called after a transaction that added photos committed, with their IDs (tests: to see
        /// a receiver's group commits).
        public var afterCatalogCommit: (@Sendable (_ photoIDs: [String]) -> Void)?
        /// Called inside the transaction of a passphrase change (vault or private album), after
        /// the new wrapped key was written and before the commit. Throwing rolls the change back,
        /// as a crash there would: the old passphrase must still work.
        public var beforePassphraseCommit: (@Sendable () throws -> Void)?
        /// Called inside the transaction that seals what an older version stored in clear (at
        /// the first unlock after the upgrade), before the commit. Throwing rolls it back.
        public var beforeSealCommit: (@Sendable () throws -> Void)? = nil

        public init(
            beforeCatalogCommit: (@Sendable (_ photoID: String) throws -> Void)? = nil,
            makePhotoID: (@Sendable () -> String)? = nil,
            now: @escaping @Sendable () -> Date = { Date() },
            beforeKeyDerivation: (@Sendable () -> Void)? = nil,
            afterDeleteCommit: (@Sendable (_ photoIDs: [String]) throws -> Void)? = nil,
            afterCatalogCommit: (@Sendable (_ photoIDs: [String]) -> Void)? = nil,
            beforePassphraseCommit: (@Sendable () throws -> Void)? = nil
        ) {
            self.beforeCatalogCommit = beforeCatalogCommit
            self.makePhotoID = makePhotoID
            self.now = now
            self.beforeKeyDerivation = beforeKeyDerivation
            self.afterDeleteCommit = afterDeleteCommit
            self.afterCatalogCommit = afterCatalogCommit
            self.beforePassphraseCommit = beforePassphraseCommit
        }
    }

    /// What `open` cleaned up after an earlier crash.
    public struct Recovery: Sendable, Equatable {
        /// Files removed from `tmp/` (interrupted imports and receptions).
        public var removedTemporaryFiles: [String] = []
        /// `photos/**.loca` files without a catalog row (crash between rename and commit), relative paths.
        public var removedOrphanPhotos: [String] = []
        /// `thumbs/**.loca` files whose photo has no catalog row (crash after a deletion committed).
        public var removedOrphanThumbnails: [String] = []
        /// True when another open instance of the vault prevented the sweep.
        public var skipped = false
    }

    static let masterKeyAAD = Array("locafoto vault master key v1".utf8)
    static let ioChunk = 1 << 20

    /// The vault directory as given (without trailing slash).
    public let directory: String
    /// Where in-progress files live. A peer transfer should spool here (same file system as
    /// `photos/`, so `adoptReceived` renames instead of copying). Swept on open.
    public var spoolDirectory: String { tmpPath }
    /// What this `open` swept.
    public let recovery: Recovery

    let catalogPath: String
    let photosPath: String
    let tmpPath: String
    let db: DatabaseQueue
    /// The sealed catalog's keys while unlocked (CatalogSeal.swift).
    let keyRing: CatalogKeyRing
    private let lockFD: Int32
    private let masterKey = Mutex<SecretBytes?>(nil)
    /// Album keys of the private albums unlocked in this instance, by album ID (PrivateAlbums.swift).
    let unlockedAlbums = Mutex<[String: SecretBytes]>([:])
    private let hookStore = Mutex(Hooks())

    /// Test seams (see `Hooks`).
    public var hooks: Hooks {
        get { hookStore.withLock { $0 } }
        set { hookStore.withLock { $0 = newValue } }
    }

    private init(directory: String, db: DatabaseQueue, keyRing: CatalogKeyRing, lockFD: Int32, recovery: Recovery) {
        self.keyRing = keyRing
        self.directory = directory
        catalogPath = Self.catalogPath(directory)
        photosPath = directory + "/photos"
        tmpPath = directory + "/tmp"
        self.db = db
        self.lockFD = lockFD
        self.recovery = recovery
    }

    deinit {
        _ = close(lockFD)
    }

    private static func normalise(_ directory: String) -> String {
        var d = directory
        while d.count > 1 && d.hasSuffix("/") { d.removeLast() }
        return d.isEmpty ? "." : d
    }

    private static func catalogPath(_ directory: String) -> String { directory + "/catalog.sqlite" }

    // MARK: - Creating, opening, unlocking

    /// True when `directory` holds a vault catalog.
    public static func exists(at directory: String) -> Bool {
        disk.isRegularFile(catalogPath(normalise(directory)))
    }

    /// Creates a vault (the directory too, if needed) and returns it unlocked.
    /// Refuses with `alreadyExists` when there is a vault at `directory`.
    public static func create(
        at directory: String, passphrase: SecretBytes, kdf: PasswordKDF.Parameters = .moderate
    ) throws -> Vault {
        let dir = normalise(directory)
        guard !exists(at: dir) else {
            throw VaultError(
                .alreadyExists,
                "a vault already exists at \(dir); open it with your passphrase, or choose another directory")
        }
        guard kdf.isWithinBounds else {
            throw VaultError(.io, "Argon2id parameters are out of bounds (ops \(kdf.opsLimit), memory \(kdf.memLimit))")
        }
        try disk.makeDirectory(dir)
        guard chmod(dir, 0o700) == 0 else { throw disk.failed("set permissions on", dir) }
        try disk.makeDirectory(dir + "/photos")
        try disk.makeDirectory(dir + "/tmp")

        let master = SecretBytes(randomCount: 32)
        let salt = SecureRandom.bytes(PasswordKDF.saltLength)
        let kek = try deriveKEK(passphrase, salt: salt, kdf, what: "the vault key from the passphrase")
        let wrapped = KeyWrap.wrap(master, with: kek, aad: masterKeyAAD)
        let keyRow = VaultKeyRow(
            wrappedMasterKey: Data(wrapped), kdfAlgorithm: VaultKeyRow.kdfAlgorithmName, kdfSalt: Data(salt),
            kdfOpsLimit: Int64(kdf.opsLimit), kdfMemLimit: Int64(kdf.memLimit), createdDate: Date())

        // Build the catalog under tmp/ and link it into place: a vault exists completely or not at all.
        let tmpCatalog = dir + "/tmp/catalog-\(UUID().uuidString.lowercased()).sqlite"
        defer {
            disk.unlinkIfPresent(tmpCatalog)
            disk.unlinkIfPresent(tmpCatalog + "-journal")
        }
        do {
            try disk.open(tmpCatalog, O_RDWR | O_CREAT | O_EXCL, mode: 0o600, what: "create").close()
            let queue = try DatabaseQueue(path: tmpCatalog, configuration: Catalog.configuration())
            try Catalog.migrator.migrate(queue)
            try queue.write { db in try keyRow.insert(db) }
            try queue.close()
            let fd = try disk.open(tmpCatalog, O_RDWR)
            try fd.sync()
            fd.close()
        } catch {
            throw VaultError.wrap(error, "could not create the vault catalog in \(dir)")
        }
        if link(tmpCatalog, catalogPath(dir)) != 0 {
            if errno == EEXIST {
                throw VaultError(.alreadyExists, "a vault was created at \(dir) at the same time; open it instead")
            }
            throw disk.failed("create", catalogPath(dir))
        }
        try disk.syncDirectory(dir)

        let vault = try open(at: dir)
        try vault.openCatalog(master: master)
        vault.masterKey.withLock { $0 = master }
        return vault
    }

    /// Opens the vault at `directory`, locked. Sweeps what an earlier crash left behind
    /// (`tmp/` files, photo files without a catalog row) unless another instance has it open.
    public static func open(at directory: String) throws -> Vault {
        let dir = normalise(directory)
        guard exists(at: dir) else {
            throw VaultError(.notFound, "no vault at \(dir); run `locafoto vault init` to create one")
        }
        try disk.makeDirectory(dir + "/photos")
        try disk.makeDirectory(dir + "/tmp")
        let lock = try disk.open(dir + "/vault.lock", O_RDWR | O_CREAT, mode: 0o600)
        let queue: DatabaseQueue
        let ring = CatalogKeyRing()
        do {
            queue = try DatabaseQueue(path: catalogPath(dir), configuration: Catalog.configuration(keyRing: ring))
            let migrator = Catalog.migrator
            if try queue.read({ try migrator.hasBeenSuperseded($0) }) {
                throw VaultError(
                    .corrupt, "the vault at \(dir) was written by a newer version of Locafoto; update Locafoto")
            }
            try migrator.migrate(queue)
            guard try queue.read({ try VaultKeyRow.fetchOne($0) }) != nil else {
                throw VaultError(
                    .corrupt, "the vault catalog at \(dir) has no key record; restore it from a backup")
            }
        } catch let e as VaultError {
            throw e
        } catch {
            throw VaultError(.corrupt, "the vault catalog \(catalogPath(dir)) cannot be read", cause: error)
        }

        var recovery = Recovery()
        let fd = lock.fd
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            recovery = try sweep(dir, queue)
        } else {
            recovery.skipped = true
        }
        guard flock(fd, LOCK_SH) == 0 else { throw disk.failed("lock", dir + "/vault.lock") }
        // The Vault owns the descriptor from here on.
        let owned = dup(fd)
        guard owned >= 0 else { throw disk.failed("lock", dir + "/vault.lock") }
        lock.close()  // flock locks belong to the open file description, shared by the dup
        return Vault(directory: dir, db: queue, keyRing: ring, lockFD: owned, recovery: recovery)
    }

    /// Removes tmp/ files and photo files that no catalog row references. Runs only with the
    /// exclusive lock, i.e. when no other instance could be in the middle of a write.
    private static func sweep(_ dir: String, _ queue: DatabaseQueue) throws -> Recovery {
        var r = Recovery()
        for name in disk.list(dir + "/tmp") {
            let path = dir + "/tmp/" + name
            if disk.isRegularFile(path), unlink(path) == 0 { r.removedTemporaryFiles.append(name) }
        }
        let known: Set<String>
        do {
            known = try queue.read { try String.fetchSet($0, sql: "SELECT filePath FROM photo") }
        } catch {
            throw VaultError(.corrupt, "the vault catalog cannot be read", cause: error)
        }
        for sub in disk.list(dir + "/photos") where disk.isDirectory(dir + "/photos/" + sub) {
            var removed = false
            for name in disk.list(dir + "/photos/" + sub) where name.hasSuffix(".loca") {
                let rel = "photos/\(sub)/\(name)"
                if !known.contains(rel), unlink(dir + "/" + rel) == 0 {
                    r.removedOrphanPhotos.append(rel)
                    removed = true
                }
            }
            if removed { try? disk.syncDirectory(dir + "/photos/" + sub) }
        }
        // Thumbnails are `thumbs/<2 hex>/<photo id>.loca`: orphaned when their photo's row is gone.
        for sub in disk.list(dir + "/thumbs") where disk.isDirectory(dir + "/thumbs/" + sub) {
            var removed = false
            for name in disk.list(dir + "/thumbs/" + sub) where name.hasSuffix(".loca") {
                let rel = "thumbs/\(sub)/\(name)"
                if !known.contains(relativePath(String(name.dropLast(5)))), unlink(dir + "/" + rel) == 0 {
                    r.removedOrphanThumbnails.append(rel)
                    removed = true
                }
            }
            if removed { try? disk.syncDirectory(dir + "/thumbs/" + sub) }
        }
        if !r.removedTemporaryFiles.isEmpty { try? disk.syncDirectory(dir + "/tmp") }
        return r
    }

    /// Derives the passphrase key (Argon2id, slow by design) and unwraps the master key.
    public func unlock(passphrase: SecretBytes) throws {
        let (master, _) = try checkVaultPassphrase(passphrase)
        if isUnlocked { return }
        try openCatalog(master: master)
        masterKey.withLock { $0 = master }
    }

    /// The vault key record, checked: (record, its Argon2id parameters).
    func vaultKeyRecord() throws -> (row: VaultKeyRow, params: PasswordKDF.Parameters) {
        let row: VaultKeyRow
        do {
            guard let r = try db.read({ try VaultKeyRow.fetchOne($0) }) else {
                throw VaultError(.corrupt, "the vault catalog has no key record; restore it from a backup")
            }
            row = r
        } catch {
            throw VaultError.wrap(error, "could not read the vault key record")
        }
        let params = PasswordKDF.Parameters(
            opsLimit: UInt64(clamping: row.kdfOpsLimit), memLimit: UInt64(clamping: row.kdfMemLimit))
        guard row.kdfAlgorithm == VaultKeyRow.kdfAlgorithmName, params.isWithinBounds,
            row.kdfSalt.count == PasswordKDF.saltLength
        else {
            throw VaultError(
                .corrupt, "the vault key record has invalid key-derivation settings; restore it from a backup")
        }
        return (row, params)
    }

    /// Checks the vault passphrase under the unlock throttle (`unlock`, `changePassphrase`):
    /// the master key and the record it was unwrapped from.
    func checkVaultPassphrase(_ passphrase: SecretBytes) throws -> (master: SecretBytes, row: VaultKeyRow) {
        let (row, params) = try vaultKeyRecord()
        // Refused while throttled (no Argon2id); otherwise counted as a failure until it succeeds.
        try beginUnlockAttempt(.vault)
        var outcome = UnlockOutcome.inconclusive
        defer { endUnlockAttempt(.vault, outcome) }
        let kek = try deriveKEK(
            passphrase, salt: [UInt8](row.kdfSalt), params, what: "the vault key from the passphrase")
        let master: SecretBytes
        do {
            master = try KeyWrap.unwrap([UInt8](row.wrappedMasterKey), with: kek, aad: Self.masterKeyAAD)
        } catch {
            outcome = .wrongPassphrase
            throw VaultError(.wrongPassphrase, "wrong passphrase for the vault at \(directory); try again")
        }
        guard master.count == 32 else {
            throw VaultError(.corrupt, "the vault master key has the wrong length; restore the catalog from a backup")
        }
        outcome = .success
        return (master, row)
    }

    /// Forgets the master key (its memory is zeroed when the last in-flight operation using it ends).
    public func lock() {
        masterKey.withLock { $0 = nil }
        unlockedAlbums.withLock { $0.removeAll() }  // private albums lock with the vault
        closeCatalog()
    }

    public var isUnlocked: Bool { masterKey.withLock { $0 != nil } }

    func requireMasterKey() throws -> SecretBytes {
        guard let key = masterKey.withLock({ $0 }) else {
            throw VaultError(.locked, "the vault is locked; unlock it with your passphrase first")
        }
        return key
    }

    // MARK: - Catalog queries

    /// All photos (hidden ones too, but not those of locked private albums), newest import first.
    /// `photos(matching:)` sorts, filters and pages.
    public func photos() throws -> [PhotoRecord] {
        _ = try requireMasterKey()
        let visible = Self.visibilitySQL(unlockedAlbumIDs())
        return try readCatalog { db in
            try PhotoRow.fetchAll(
                db, sql: "\(PhotoRow.select) WHERE \(visible.sql) ORDER BY photo.importDate DESC, photo.seq DESC",
                arguments: StatementArguments(visible.arguments)
            ).map(\.record)
        }
    }

    /// The photo whose ID is `idOrPrefix` or starts with it (at least 4 characters).
    public func photo(matching idOrPrefix: String) throws -> PhotoRecord {
        try row(matching: idOrPrefix).record
    }

    /// The most recently imported photo with this content hash, if any (photos of locked private
    /// albums are not considered).
    public func photo(withContentHash hash: [UInt8]) throws -> PhotoRecord? {
        _ = try requireMasterKey()
        let visible = Self.visibilitySQL(unlockedAlbumIDs())
        return try readCatalog { db in try Self.photo(withContentHash: hash, visible, db) }
    }

    static func photo(
        withContentHash hash: [UInt8], _ visible: (sql: String, arguments: [any DatabaseValueConvertible]),
        _ db: Database
    ) throws -> PhotoRecord? {
        try PhotoRow.fetchOne(
            cached:
                "\(PhotoRow.select) WHERE photo.contentHash = ? AND \(visible.sql) ORDER BY photo.importDate DESC, photo.seq DESC LIMIT 1",
            db, arguments: StatementArguments([Data(hash)]) + StatementArguments(visible.arguments))?.record
    }

    func row(matching idOrPrefix: String) throws -> PhotoRow {
        _ = try requireMasterKey()
        let q = idOrPrefix.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard q.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == 0x2D }) else {
            throw VaultError(.photoNotFound, "\"\(idOrPrefix)\" is not a photo ID; run `locafoto list` to see them")
        }
        guard q.count >= 4 else {
            throw VaultError(
                .photoNotFound, "photo ID prefix \"\(q)\" is too short: give at least 4 characters of the ID")
        }
        let (count, rows) = try readCatalog { db in
            // IDs are lowercase hex and dashes, all below "g": a range scan of the primary key.
            // Cached: the indexer, exports and the web app's views look photos up one by one.
            let count =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM clearPhoto WHERE id >= ? AND id < ?"),
                    arguments: [q, q + "g"]) ?? 0
            let rows = try PhotoRow.fetchAll(
                db.cachedStatement(
                    sql: "\(PhotoRow.select) WHERE photo.id >= ? AND photo.id < ? ORDER BY photo.id LIMIT 10"),
                arguments: [q, q + "g"])
            return (count, rows)
        }
        switch count {
        case 0:
            throw VaultError(
                .photoNotFound,
                "no photo with ID \(q.count < 36 ? "starting with " : "")\(q); run `locafoto list` to see them")
        case 1:
            try requireVisible(rows[0])  // albumLocked for a photo of a locked private album
            return rows[0]
        default:
            // Names of photos in locked private albums are not shown.
            let list = rows.map { r in
                r.record.name.flatMap { isVisible(r) ? "\(r.record.id) (\($0))" : nil } ?? r.record.id
            }
            throw VaultError(
                .ambiguousPhoto,
                "photo ID prefix \(q) matches \(count) photos: \(list.joined(separator: ", "))\(count > rows.count ? ", ..." : ""); give more characters"
            )
        }
    }

    func readCatalog<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try db.read(body)
        } catch {
            throw VaultError.wrap(error, "could not read the vault catalog")
        }
    }

    // MARK: - Writing photos

    /// Starts a streaming import (files, stdin, HTTP bodies). The first bytes written decide the
    /// format; `maxSize` (capped at 4 GiB) bounds the plaintext size.
    /// With `checkHeader`, the content must also decode as the format its first bytes claim
    /// (`ImageHeaderCheck`), not merely begin with its signature.
    public func beginImport(name: String?, maxSize: Int64 = 1 << 32, checkHeader: Bool = false) throws -> PhotoImport {
        let master = try requireMasterKey()
        return try PhotoImport(vault: self, master: master, name: name, maxSize: maxSize, checkHeader: checkHeader)
    }

    /// Imports a file, read in 1 MiB chunks; the stored name is the last path component.
    public func importFile(at path: String) throws -> PhotoRecord {
        _ = try requireMasterKey()
        let file = try disk.open(path, O_RDONLY, what: "open")
        guard file.isRegularFile else { throw VaultError(.io, "\(path) is not a regular file") }
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init)
        let size = UInt64(try file.size())
        if size > LOCAHeader.maxOriginalSize {
            throw VaultError(.tooLarge, "\(path) is \(size) bytes; the vault stores photos of at most 4 GiB")
        }
        let importer = try beginImport(name: name)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.ioChunk, alignment: 16)
        defer { buffer.deallocate() }
        do {
            while true {
                let n = try file.readSequential(into: buffer)
                if n == 0 { break }
                try importer.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            }
            return try importer.finish()
        } catch {
            importer.abort()
            throw error
        }
    }

    /// Adopts an already-encrypted, already-verified ciphertext file (a photo received from a
    /// peer). `spoolPath` holds 64 placeholder bytes, the ciphertext and the 16-byte tag. The
    /// vault writes the LOCA header into the first 64 bytes, fsyncs, moves the file into
    /// `photos/` (a copy through `tmp/` when `spoolPath` is on another file system) and commits
    /// the row with `photoKey` wrapped under the master key. The ciphertext is not re-read.
    ///
    /// On success the spool file is consumed. On failure it may already have been moved and
    /// removed; the caller removes `spoolPath` if it still exists.
    public func adoptReceived(
        spoolPath: String, photoKey: SecretBytes, algorithm: AEADAlgorithm, nonce: [UInt8],
        originalSize: Int64, contentHash: [UInt8], format: ContentType, name: String?,
        captureDate: Date?, width: Int?, height: Int?, senderFingerprint: String?, senderName: String?
    ) throws -> PhotoRecord {
        let photo = try prepareReceived(
            spoolPath: spoolPath, photoKey: photoKey, algorithm: algorithm, nonce: nonce, originalSize: originalSize,
            contentHash: contentHash, format: format, name: name, captureDate: captureDate, width: width,
            height: height,
            senderFingerprint: senderFingerprint, senderName: senderName)
        return try commitReceived([photo])[0]
    }

    /// The first half of `adoptReceived`: checks the spool file, writes its LOCA header, has it
    /// fsynced on a thread of its own (`BackgroundSync`; `commitReceived` waits for it), and
    /// wraps the photo key. Why not fsync here: a receiver prepares each photo as it ends,
    /// between the pieces of the next; an fsync in line stalled the transfer ~1 ms a photo
    /// (~10 % of the wall time of a camera roll). Nothing enters the catalog until `commitReceived`,
    /// which takes many such photos in one transaction (a receiver's group commit). On failure
    /// the caller removes `spoolPath`; a prepared photo that is never committed is removed with
    /// `discardReceived`.
    public func prepareReceived(
        spoolPath: String, photoKey: SecretBytes, algorithm: AEADAlgorithm, nonce: [UInt8],
        originalSize: Int64, contentHash: [UInt8], format: ContentType, name: String?,
        captureDate: Date?, width: Int?, height: Int?, senderFingerprint: String?, senderName: String?
    ) throws -> ReceivedPhoto {
        let master = try requireMasterKey()
        guard photoKey.count == AEADAlgorithm.keyLength else {
            throw VaultError(.corrupt, "received photo key is \(photoKey.count) bytes, expected 32")
        }
        guard nonce.count == AEADAlgorithm.nonceLength else {
            throw VaultError(.corrupt, "received nonce is \(nonce.count) bytes, expected 12")
        }
        guard contentHash.count == 32 else {
            throw VaultError(.corrupt, "received content hash is \(contentHash.count) bytes, expected 32")
        }
        guard originalSize >= 0 else { throw VaultError(.corrupt, "received photo has a negative size") }
        guard UInt64(originalSize) <= LOCAHeader.maxOriginalSize else {
            throw VaultError(.tooLarge, "received photo is \(originalSize) bytes; the vault stores at most 4 GiB")
        }
        let header = LOCAHeader(
            algorithm: algorithm, nonce: nonce, originalSize: UInt64(originalSize), timestamp: Self.nowSeconds())
        let expected = header.expectedFileLength()

        let spool = try disk.open(spoolPath, O_RDWR | O_NOFOLLOW, what: "open the received file")
        guard spool.isRegularFile else { throw VaultError(.io, "\(spoolPath) is not a regular file") }
        let size = UInt64(try spool.size())
        guard size == expected else {
            throw VaultError(
                .corrupt,
                "received file \(spoolPath) is \(size) bytes; \(expected) expected for a \(originalSize)-byte photo")
        }
        try spool.setMode(0o600)
        try spool.write(header.encoded(), at: 0)

        var source = spoolPath
        var copied = false
        let tmpDevice = try disk.open(tmpPath, O_RDONLY | O_DIRECTORY).device
        if spool.device != tmpDevice {
            source = tmpPath + "/\(UUID().uuidString.lowercased()).part"
            try copy(spool, size: size, to: source)  // fsyncs the copy
            copied = true
        }
        spool.close()
        let durable = copied ? nil : BackgroundSync(path: source)

        let id = newPhotoID()
        let now = Self.now()
        let record = PhotoRecord(
            id: id, name: Self.storableName(name), format: format.rawValue, originalSize: originalSize,
            encryptedSize: Int64(expected),
            contentHash: contentHash, captureDate: captureDate.map(Self.truncated), importDate: now, width: width,
            height: height, tags: [], isFavorite: false, isHidden: false, senderFingerprint: senderFingerprint,
            senderName: senderName)
        let row = PhotoRow(
            record: record, modifiedDate: now,
            wrappedKey: KeyWrap.wrap(photoKey, with: master, aad: Array(id.utf8)), algorithm: algorithm,
            filePath: Self.relativePath(id))
        if copied { disk.unlinkIfPresent(spoolPath) }
        return ReceivedPhoto(source: source, row: row, durable: durable)
    }

    /// Moves prepared photos into `photos/` and inserts their rows in one catalog transaction:
    /// one commit (and one fsync of each photo folder) for the whole batch. All or nothing: on
    /// failure no file or row of the batch remains. Returns the records in the order given.
    public func commitReceived(_ photos: [ReceivedPhoto]) throws -> [PhotoRecord] {
        do {
            // Durable before the catalog names them (fsynced since prepareReceived).
            for p in photos { try p.durable?.wait() }
        } catch {
            for p in photos { disk.unlinkIfPresent(p.source) }
            throw error
        }
        return try commit(photos.map { ($0.source, $0.row) })
    }

    /// Removes a prepared photo that will not be committed (its session failed).
    public func discardReceived(_ photo: ReceivedPhoto) {
        disk.unlinkIfPresent(photo.source)
    }

    private func copy(_ from: OpenFile, size: UInt64, to path: String) throws {
        let out = try disk.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600, what: "create")
        do {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.ioChunk, alignment: 16)
            defer { buffer.deallocate() }
            var offset: UInt64 = 0
            while offset < size {
                let n = try from.read(into: buffer, at: offset)
                guard n > 0 else { throw VaultError(.io, "\(from.path) shrank while it was being copied") }
                try out.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                offset += UInt64(n)
            }
            try out.sync()
            out.close()
        } catch {
            out.close()
            disk.unlinkIfPresent(path)
            throw error
        }
    }

    func newPhotoID() -> String {
        hooks.makePhotoID?() ?? UUID().uuidString.lowercased()
    }

    static func relativePath(_ id: String) -> String { "photos/\(id.prefix(2))/\(id).loca" }

    /// Moves a complete, fsynced LOCA file into `photos/` and inserts its row, in one catalog
    /// write transaction. On any failure nothing remains: neither file nor row.
    /// With `unlessPresent`, a photo whose content the vault already shows is refused
    /// (`duplicate`) in the same write transaction that would insert it: two imports of the same
    /// bytes finishing at once (parallel LocalSend uploads) store it once.
    func commit(source: String, row: PhotoRow, unlessPresent: Bool = false) throws -> PhotoRecord {
        try commit([(source, row)], unlessPresent: unlessPresent)[0]
    }

    /// The batch form of `commit(source:row:)`: every file is renamed and every row inserted in
    /// one write transaction, each photo folder fsynced once, the rows read back with one query.
    func commit(_ entries: [(source: String, row: PhotoRow)], unlessPresent: Bool = false) throws -> [PhotoRecord] {
        guard !entries.isEmpty else { return [] }
        let visible = unlessPresent ? Self.visibilitySQL(unlockedAlbumIDs()) : nil
        let folders = entries.map { photosPath + "/" + String($0.row.record.id.prefix(2)) }
        var distinct: [String] = []
        for f in folders where !distinct.contains(f) { distinct.append(f) }
        var renamed = 0  // entries moved into photos/, in order
        do {
            var created = false
            for f in distinct where try disk.makeDirectory(f) { created = true }
            if created { try disk.syncDirectory(photosPath) }
            let hook = hooks.beforeCatalogCommit
            let records = try db.write { db -> [PhotoRecord] in
                if let visible {
                    for e in entries {
                        if let existing = try Self.photo(withContentHash: e.row.record.contentHash, visible, db) {
                            throw VaultError(
                                .duplicate,
                                "already in the vault as \(existing.id.prefix(8)) (\(existing.name ?? "unnamed"))")
                        }
                    }
                }
                for e in entries {
                    try disk.rename(e.source, directory + "/" + e.row.filePath)
                    renamed += 1
                }
                for f in distinct { try disk.syncDirectory(f) }
                for e in entries {
                    try hook?(e.row.record.id)
                    try e.row.insert(db, keyRing: keyRing)
                }
                let ids = entries.map(\.row.record.id)
                var stored: [String: PhotoRecord] = [:]
                try Self.forEachChunk(ids) { chunk, marks in
                    for row in try PhotoRow.fetchAll(
                        db, sql: "\(PhotoRow.select) WHERE photo.id IN (\(marks))", arguments: StatementArguments(chunk)
                    ) {
                        stored[row.record.id] = row.record
                    }
                }
                return try ids.map { id in
                    guard let record = stored[id] else {
                        throw VaultError(.io, "the photo row vanished during its own insert")
                    }
                    return record
                }
            }
            hooks.afterCatalogCommit?(records.map(\.id))
            return records
        } catch {
            for e in entries.prefix(renamed) { disk.unlinkIfPresent(directory + "/" + e.row.filePath) }
            for f in distinct where folders.prefix(renamed).contains(f) { try? disk.syncDirectory(f) }
            for e in entries.dropFirst(renamed) { disk.unlinkIfPresent(e.source) }
            throw VaultError.wrap(
                error,
                entries.count == 1
                    ? "could not add the photo to the vault catalog"
                    : "could not add \(entries.count) photos to the vault catalog")
        }
    }

    // MARK: - Reading photos

    /// Writes the decrypted photo into `toDirectory` and returns the path written. The file name
    /// is `exportFileName(for:)`. The plaintext goes to a new file of a unique name
    /// (`disk.createPartial`, `<dir>/.<name>.<random>.partial`) first and is moved into place
    /// only once the tag verified; on failure that file is removed
    /// (`corrupt` for a damaged or altered photo). An existing file is never replaced unless
    /// `overwrite` is true (`exists`).
    public func export(_ id: String, toDirectory: String, overwrite: Bool = false) throws -> String {
        let master = try requireMasterKey()
        let row = try row(matching: id)
        let dir = Self.normalise(toDirectory)
        guard disk.isDirectory(dir) else {
            throw VaultError(.io, "export directory \(dir) does not exist; create it first")
        }
        let name = Self.exportFileName(for: row.record)
        let final = dir + "/" + name
        if !overwrite && disk.exists(final) {
            throw VaultError(.exists, "\(final) already exists; choose another directory or allow overwriting")
        }
        let out = try disk.createPartial(beside: final)
        let partial = out.path
        do {
            try decrypt(row, master: master) { chunk in try out.write(chunk) }
            try out.sync()
            out.close()
        } catch {
            out.close()
            disk.unlinkIfPresent(partial)
            throw error
        }
        do {
            if overwrite {
                try disk.rename(partial, final)
            } else if link(partial, final) == 0 {
                disk.unlinkIfPresent(partial)
            } else if errno == EEXIST {
                throw VaultError(.exists, "\(final) already exists; choose another directory or allow overwriting")
            } else {
                // File systems without hard links: check, then rename (a small race, documented).
                guard !disk.exists(final) else {
                    throw VaultError(.exists, "\(final) already exists; choose another directory or allow overwriting")
                }
                try disk.rename(partial, final)
            }
            try? disk.syncDirectory(dir)
        } catch {
            disk.unlinkIfPresent(partial)
            throw error
        }
        return final
    }

    /// The decrypted photo in memory, for tests and small control-API responses.
    /// Refuses photos above `maxSize` (`tooLarge`).
    public func exportData(_ id: String, maxSize: Int64 = 64 << 20) throws -> [UInt8] {
        let master = try requireMasterKey()
        let row = try row(matching: id)
        guard row.record.originalSize <= maxSize else {
            throw VaultError(
                .tooLarge,
                "photo \(row.record.id) is \(row.record.originalSize) bytes, above the \(maxSize)-byte limit for in-memory reads; export it to a file instead"
            )
        }
        var out: [UInt8] = []
        out.reserveCapacity(Int(row.record.originalSize))
        try decrypt(row, master: master) { out.append(contentsOf: $0) }
        return out
    }

    /// Streams the decrypted photo to `sink` in chunks of at most 1 MiB, only after the whole
    /// file verified: a first pass checks the tag and content hash, a second decrypts into
    /// `sink` (checking again; should the file change in between, the second pass throws
    /// `corrupt` after some chunks were delivered). Costs two reads of the file.
    public func streamPhoto(_ id: String, to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let master = try requireMasterKey()
        let row = try row(matching: id)
        try decrypt(row, master: master) { _ in }
        try decrypt(row, master: master, sink)
    }

    /// A stored photo's encrypted file and key, for sending it to a peer as is.
    public struct EncryptedFile: Sendable {
        public let record: PhotoRecord
        /// Absolute or directory-relative path of the LOCA file (header ‖ ciphertext ‖ tag).
        public let path: String
        public let header: LOCAHeader
        /// The photo key (zeroed when released).
        public let photoKey: SecretBytes
    }

    /// The photo's LOCA file and unwrapped key. The header and length are checked; the tag is not.
    public func encryptedFile(_ id: String) throws -> EncryptedFile {
        let master = try requireMasterKey()
        let row = try row(matching: id)
        let key = try unwrapPhotoKey(row, master: master)
        let path = directory + "/" + row.filePath
        let file = try openChecked(row, path: path)
        file.fd.close()
        return EncryptedFile(record: row.record, path: path, header: file.header, photoKey: key)
    }

    func unwrapPhotoKey(_ row: PhotoRow, master: SecretBytes) throws -> SecretBytes {
        // Under the master key, or under its private album's key (albumLocked when not unlocked).
        let (kek, aad) = try photoKeyWrapping(row, master: master)
        do {
            let key = try KeyWrap.unwrap(row.wrappedKey, with: kek, aad: aad)
            guard key.count == AEADAlgorithm.keyLength else { throw VaultError(.corrupt, "") }
            return key
        } catch {
            throw VaultError(
                .corrupt, "the key of photo \(row.record.id) cannot be unwrapped: the catalog row is damaged")
        }
    }

    private func openChecked(_ row: PhotoRow, path: String) throws -> (fd: OpenFile, header: LOCAHeader) {
        let id = row.record.id
        guard disk.exists(path) else {
            throw VaultError(.corrupt, "the file of photo \(id) is missing (\(row.filePath))")
        }
        let fd = try disk.open(path, O_RDONLY | O_NOFOLLOW)
        let header: LOCAHeader
        do {
            let size = UInt64(try fd.size())
            header = try LOCAHeader(decoding: fd.read(count: min(Int(size), LOCAHeader.length), at: 0))
            try header.checkFileLength(size)
        } catch let e as FormatError {
            throw VaultError(.corrupt, "the file of photo \(id) is damaged: \(e.message)")
        }
        guard header.originalSize == UInt64(row.record.originalSize), header.algorithm.rawValue == row.algorithm else {
            throw VaultError(.corrupt, "the file of photo \(id) does not match its catalog entry (size or algorithm)")
        }
        return (fd, header)
    }

    /// Decrypts the photo into `sink`. ChaCha20-Poly1305 files are streamed in 1 MiB chunks:
    /// the chunks are unauthenticated until this returns, so callers must discard them on throw.
    /// AES-256-GCM files (not written by this vault; libsodium has no incremental AES-GCM) are
    /// opened one-shot in memory, at most 4 GiB, and `sink` sees only verified bytes.
    private func decrypt(
        _ row: PhotoRow, master: SecretBytes, _ sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let id = row.record.id
        let key = try unwrapPhotoKey(row, master: master)
        let (fd, header) = try openChecked(row, path: directory + "/" + row.filePath)
        defer { fd.close() }
        let size = header.originalSize
        let tag = try fd.read(count: LOCAHeader.tagLength, at: UInt64(LOCAHeader.length) + size)
        var hasher = ContentHash.hasher()
        let altered = VaultError(
            .corrupt, "photo \(id) failed authentication: its file is damaged or was altered; restore it from a backup")

        switch header.algorithm {
        case .chacha20poly1305:
            let stream = try ChaChaPolyStream(.decrypt, key: key, nonce: header.nonce)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.ioChunk, alignment: 16)
            defer {
                secureZero(buffer)
                buffer.deallocate()
            }
            var offset: UInt64 = 0
            while offset < size {
                let want = Int(min(UInt64(buffer.count), size - offset))
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
                let n = try fd.read(into: chunk, at: UInt64(LOCAHeader.length) + offset)
                guard n == want else { throw VaultError(.corrupt, "the file of photo \(id) ended early") }
                stream.process(chunk)
                hasher.update(UnsafeRawBufferPointer(chunk))
                try sink(UnsafeRawBufferPointer(chunk))
                offset += UInt64(n)
            }
            do { try stream.verify(tag: tag) } catch { throw altered }
        case .aes256gcm:
            guard header.algorithm.isAvailable else {
                throw VaultError(.io, "photo \(id) uses AES-256-GCM, which needs a CPU with AES-NI; this one has none")
            }
            let ciphertext = try fd.read(count: Int(size), at: UInt64(LOCAHeader.length))
            var plaintext: [UInt8]
            do {
                plaintext = try AEAD.open(.aes256gcm, key: key, nonce: header.nonce, ciphertext: ciphertext, tag: tag)
            } catch {
                throw altered
            }
            defer { secureZero(&plaintext) }
            hasher.update(plaintext)
            guard constantTimeEquals(hasher.finalize(), row.record.contentHash) else {
                throw VaultError(
                    .corrupt, "photo \(id) does not match its recorded content hash; the catalog is damaged")
            }
            try plaintext.withUnsafeBytes { try sink($0) }
            return
        }
        guard constantTimeEquals(hasher.finalize(), row.record.contentHash) else {
            throw VaultError(.corrupt, "photo \(id) does not match its recorded content hash; the catalog is damaged")
        }
    }

    // MARK: - Names and times

    /// The file name an export uses: the stored name made safe — no path separators, no
    /// leading dots, no control or bidirectional-formatting characters, at most 200 bytes — and
    /// ending in an extension of the format the content was recognised as, never a sender's
    /// other one (`holiday.html` of JPEG bytes exports as `holiday.jpg`, `IMG_1.jpg.exe` as
    /// `IMG_1.jpg`). The result is checked again after it was shortened: never hidden, never a
    /// name Windows reserves (`CON.jpg` becomes `_CON.jpg`), `<id>.<ext>` when nothing usable is
    /// left.
    public static func exportFileName(for record: PhotoRecord) -> String {
        var scalars = String.UnicodeScalarView()
        for s in (record.name ?? "").unicodeScalars {
            switch s.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                continue
            default:
                scalars.append(s == "/" || s == "\\" ? "_" : s)
            }
        }
        guard let type = record.contentType else {
            guard let safe = safeStem(String(scalars), maxBytes: 199) else { return record.id }
            return isReservedOnWindows(safe) ? "_" + safe : safe
        }
        // Leading dots go first: `.hidden` is a name, not an extension.
        var stem = String(String(scalars).trimmingCharacters(in: .whitespaces).drop { $0 == "." })
        // The sender's extension goes unless it names this format; then the stem may already
        // end in one of its extensions (`IMG_1.jpg.exe`).
        var ext = type.fileExtension
        if let dot = stem.lastIndex(of: "."), Self.looksLikeExtension(stem[stem.index(after: dot)...]) {
            let given = String(stem[stem.index(after: dot)...])
            stem = String(stem[..<dot])
            if type.fileExtensions.contains(given.lowercased()) { ext = given }
        }
        if let dot = stem.lastIndex(of: "."), type.fileExtensions.contains(stem[stem.index(after: dot)...].lowercased())
        {
            ext = String(stem[stem.index(after: dot)...])
            stem = String(stem[..<dot])
        }
        guard var safe = safeStem(stem, maxBytes: 200 - ext.utf8.count - 1) else { return "\(record.id).\(ext)" }
        if Self.isReservedOnWindows(safe) { safe = "_" + safe }
        return safe + "." + ext
    }

    /// A name's stem made safe, then shortened to `maxBytes` by Unicode scalars (a grapheme of
    /// a thousand combining marks is cut, not dropped whole), then made safe again: no leading
    /// dot or surrounding space, no trailing dot. nil when nothing is left.
    static func safeStem(_ stem: String, maxBytes: Int) -> String? {
        func trimmed(_ s: String) -> String {
            var s = s.trimmingCharacters(in: .whitespaces)
            while s.hasPrefix(".") || s.hasSuffix(".") {
                s = String(s.drop { $0 == "." }.reversed().drop { $0 == "." }.reversed())
                    .trimmingCharacters(in: .whitespaces)
            }
            return s
        }
        var scalars = Array(trimmed(stem).unicodeScalars)
        var bytes = scalars.reduce(0) { $0 + $1.utf8.count }
        while bytes > maxBytes, let last = scalars.popLast() { bytes -= last.utf8.count }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars)
        let safe = trimmed(String(out))
        // A stem of combining marks alone would have nothing to stand on: not a name.
        guard let first = safe.unicodeScalars.first, first.properties.generalCategory != .nonspacingMark,
            first.properties.generalCategory != .enclosingMark, first.properties.generalCategory != .spacingMark
        else { return nil }
        return safe
    }

    /// 1 to 10 ASCII letters and digits, one letter at least: what a file name's extension looks
    /// like (`2025.03.01` ends in a number, not an extension).
    static func looksLikeExtension(_ s: Substring) -> Bool {
        (1...10).contains(s.count) && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            && s.contains { $0.isLetter }
    }

    /// Device names Windows reserves whatever extensions follow them (a USB stick formatted FAT):
    /// `NUL.tar.jpg` is NUL too.
    static func isReservedOnWindows(_ name: String) -> Bool {
        let device = name.split(separator: ".", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        return reservedOnWindows.contains(device.trimmingCharacters(in: .whitespaces))
    }

    static let reservedOnWindows: Set<String> = Set(["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]).union(
        ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"].flatMap { ["COM\($0)", "LPT\($0)"] })

    /// Names are stored as given except for control characters (a NUL would also cut the
    /// SQLite text short) and surrounding whitespace; at most 1024 UTF-8 bytes; empty → nil.
    static func storableName(_ name: String?) -> String? {
        guard let name else { return nil }
        var scalars = String.UnicodeScalarView()
        for s in name.unicodeScalars where s.properties.generalCategory != .control { scalars.append(s) }
        var n = String(scalars).trimmingCharacters(in: .whitespaces)
        while n.utf8.count > 1024 { n.removeLast() }
        return n.isEmpty ? nil : n
    }

    static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }

    /// Millisecond precision: what the catalog's DATETIME text stores.
    static func now() -> Date { truncated(Date()) }

    static func truncated(_ d: Date) -> Date {
        Date(timeIntervalSince1970: (d.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}
