import Foundation

/// How a layer words a failed file call, in its own error type (the vault's, the relay's): the
/// file layer knows the call, the path and errno; the layer knows what the file was for.
public protocol FileFailures: Sendable {
    /// `what` ("write", "create directory") on `path` failed with `errno`.
    func failed(_ what: String, _ path: String, errno: Int32) -> any Error
    /// A file this layer wrote is not as it left it: missing, replaced, shorter or larger.
    func damaged(_ path: String, _ message: String) -> any Error
    /// A file is larger than such a file may be (`readBounded`).
    func tooLarge(_ path: String, size: Int64, limit: Int) -> any Error
}

extension FileFailures {
    public func tooLarge(_ path: String, size: Int64, limit: Int) -> any Error {
        damaged(path, "\(path) is \(size) bytes, more than the \(limit) bytes such a file may have")
    }
}

/// The POSIX file calls the vault and the relay make, in one place: explicit modes (files 0600,
/// directories 0700, whatever the umask), close-on-exec, EINTR retried, fsync of files and of
/// the directories that name them, exclusive creation and bounded reads. Every failure names
/// the path and is worded by the layer's `FileFailures`.
public struct FileSystem: Sendable {
    public let failures: any FileFailures

    public init(failures: any FileFailures) {
        self.failures = failures
    }

    public static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// The layer's error for `what` on `path` failing with `code` (errno, read at the call).
    public func failed(_ what: String, _ path: String, _ code: Int32 = errno) -> any Error {
        failures.failed(what, path, errno: code)
    }

    /// `open(2)` with close-on-exec, retried on EINTR; `what` words the failure.
    public func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600, what: String = "open") throws -> OpenFile {
        while true {
            let fd = Foundation.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return OpenFile(fd: fd, path: path, files: self) }
            if errno == EINTR { continue }
            throw failed(what, path)
        }
    }

    /// A file this layer wrote, for reading (no symbolic link followed). Missing, or replaced
    /// by a link or a directory, is damage; anything else (too many open files) may pass.
    public func open(reading path: String) throws -> OpenFile {
        while true {
            let fd = Foundation.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 { return OpenFile(fd: fd, path: path, files: self) }
            // errno read at once: building an error may allocate and change it.
            let code = errno
            if code == EINTR { continue }
            guard [ENOENT, ELOOP, ENOTDIR, EISDIR].contains(code) else { throw failed("open", path, code) }
            throw failures.damaged(path, "\(path) is missing or not a regular file (\(Self.errorText(code)))")
        }
    }

    /// A new file, 0600, that must not exist (nothing is ever overwritten in place).
    public func create(_ path: String) throws -> OpenFile {
        let file = try open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, what: "create")
        // The umask could only have narrowed 0600; fchmod makes the mode exact anyway.
        try file.setMode(0o600)
        return file
    }

    /// Writes a new file (0600, must not exist) and flushes it.
    public func writeNew(_ path: String, _ bytes: [UInt8]) throws {
        let file = try create(path)
        try file.write(bytes, at: 0)
        try file.sync()
    }

    /// Creates a directory 0700 (forced, whatever the umask); returns false when it already
    /// existed, which `tightening` also sets to 0700. An existing link to a directory is taken
    /// for one (a vault in a linked folder) unless `followingLinks` is false (the relay's own).
    @discardableResult
    public func makeDirectory(_ path: String, tightening: Bool = false, followingLinks: Bool = true) throws -> Bool {
        let created = mkdir(path, 0o700) == 0
        guard created || (errno == EEXIST && isDirectory(path, followingLinks: followingLinks)) else {
            throw failed("create directory", path)
        }
        if created || tightening {
            guard chmod(path, 0o700) == 0 else { throw failed("set permissions on", path) }
        }
        return created
    }

    /// lstat: a symbolic link is itself, never followed.
    public func status(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    public func exists(_ path: String) -> Bool { status(path) != nil }

    /// A directory, or (`followingLinks`) a link to one.
    public func isDirectory(_ path: String, followingLinks: Bool = true) -> Bool {
        var st = stat()
        let found = followingLinks ? stat(path, &st) == 0 : lstat(path, &st) == 0
        return found && (st.st_mode & S_IFMT) == S_IFDIR
    }

    public func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// The size of a regular file (no link followed); nil if it is missing or not regular.
    public func regularFileSize(_ path: String) -> Int64? {
        guard let st = status(path), (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    public func rename(_ from: String, _ to: String) throws {
        guard Foundation.rename(from, to) == 0 else { throw failed("move \(from) to", to) }
    }

    /// Removes a file, ignoring "does not exist".
    public func unlinkIfPresent(_ path: String) {
        _ = unlink(path)
    }

    /// Removes a file or a whole tree; links are removed, not followed. Missing is fine.
    public func removeTree(_ path: String) {
        guard exists(path) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Makes a completed create, rename or unlink in `directory` durable.
    public func syncDirectory(_ directory: String) throws {
        let file = try open(directory, O_RDONLY | O_DIRECTORY, what: "open directory")
        try file.sync()
        file.close()
    }

    /// Entries of a directory (without "." and ".."), sorted; empty if it cannot be read.
    public func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A new, empty file beside `final` to write the whole of it before it is moved into place:
    /// `<folder>/.<name>.<12 random hex digits>.partial`, mode 0600, created exclusively
    /// (`O_EXCL`, no symbolic link followed). Why: the folder is the user's, and whatever
    /// already stands there — their own `.name.partial` included — must not be opened,
    /// truncated or removed. A failure names the folder and the reason, not the temporary name.
    public func createPartial(beside final: String) throws -> OpenFile {
        let slash = final.lastIndex(of: "/")
        let folder = slash.map { String(final[..<$0]) } ?? "."
        var name = slash.map { String(final[final.index(after: $0)...]) } ?? final
        if name.utf8.count > 200 { name = "export" }  // within NAME_MAX (255 bytes) with what is added
        var random = SystemRandomNumberGenerator()  // getrandom(2)
        let shown = folder.isEmpty ? "/" : folder
        for _ in 0..<8 {
            let suffix = String(random.next() & 0xFFFF_FFFF_FFFF, radix: 16)
            let path = folder + "/." + name + "." + suffix + ".partial"
            let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return OpenFile(fd: fd, path: path, files: self) }
            if errno == EEXIST || errno == EINTR { continue }
            throw failed("write in", shown)
        }
        throw failed("write in", shown, EEXIST)
    }

    /// Reads a small file whole. Refuses links, non-regular files and files above `limit`, so
    /// damaged or planted files cannot make the reader allocate without bound.
    public func readBounded(_ path: String, limit: Int) throws -> [UInt8] {
        let file = try open(reading: path)
        defer { file.close() }
        var st = stat()
        guard fstat(file.fd, &st) == 0 else { throw failed("read the size of", path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw failures.damaged(path, "\(path) is not a regular file") }
        guard st.st_size <= off_t(limit) else { throw failures.tooLarge(path, size: Int64(st.st_size), limit: limit) }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        let n = try out.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        return Array(out.prefix(n))
    }
}
