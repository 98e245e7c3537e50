import Foundation

/// The POSIX calls the relay needs, with explicit modes (files 0600, directories 0700, whatever
/// the umask), fsync, and bounded reads. Every failure names the path.
enum RelayFiles {
    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    static func ioError(_ what: String, _ path: String, _ code: Int32 = errno) -> RelayError {
        RelayError(.io, .storageFailed, "relay could not \(what) \(path): \(errorText(code))")
    }

    /// A failed open of a file the relay wrote: missing or replaced by a symlink/directory is
    /// damage (the deposit cannot be used); anything else (e.g. too many open files) may pass.
    static func openError(_ path: String, _ code: Int32 = errno) -> RelayError {
        switch code {
        case ENOENT, ELOOP, ENOTDIR, EISDIR:
            RelayError(.damaged, .storageFailed, "\(path) is missing or not a regular file (\(errorText(code)))")
        default:
            ioError("open", path, code)
        }
    }

    /// Creates a directory 0700, or tightens an existing one to 0700.
    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 {
            guard errno == EEXIST, isDirectory(path) else { throw ioError("create directory", path) }
        }
        guard chmod(path, 0o700) == 0 else { throw ioError("set permissions on", path) }
    }

    /// lstat: a symlink is reported as a symlink, never followed.
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Entries of a directory (without "." and ".."), sorted; empty if it cannot be read.
    static func list(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Removes a file or a whole tree; symlinks are removed, not followed. Missing is fine.
    static func removeTree(_ path: String) {
        guard exists(path) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Foundation.rename(from, to) == 0 else { throw ioError("move \(from) to", to) }
    }

    /// Makes a completed create/rename/unlink in `directory` durable.
    static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("flush directory", directory) }
    }

    /// Writes a new file (0600, must not exist) and flushes it.
    static func writeNew(_ path: String, _ bytes: [UInt8]) throws {
        let file = try RelayFile(creating: path)
        try file.write(bytes, at: 0)
        try file.sync()
    }

    /// Reads a small file whole. Refuses symlinks, non-regular files and files above `limit`, so
    /// damaged or planted files cannot make the relay allocate without bound.
    static func readBounded(_ path: String, limit: Int) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw openError(path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError("read the size of", path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw RelayError(.damaged, .storageFailed, "\(path) is not a regular file")
        }
        guard st.st_size <= off_t(limit) else {
            throw RelayError(
                .damaged, .storageFailed,
                "\(path) is \(ByteCount.text(Int64(st.st_size))), more than the \(ByteCount.text(Int64(limit))) such a file may have"
            )
        }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return Array(out.prefix(done))
    }

    /// Size of a regular file (not following symlinks); nil if it is missing or not regular.
    static func regularFileSize(_ path: String) -> Int64? {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }
}

/// An owned descriptor for positioned reads and writes. Closed by `close()` or on deinit.
final class RelayFile {
    let path: String
    private(set) var fd: Int32

    /// A new file, 0600; fails if the path exists (nothing is ever overwritten in place).
    init(creating path: String) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RelayFiles.ioError("create", path) }
        // The umask could only have narrowed 0600; fchmod makes the mode exact anyway.
        _ = fchmod(fd, 0o600)
    }

    init(reading path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw RelayFiles.openError(path) }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { _ = Foundation.close(fd) }
        fd = -1
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < buffer.count {
            let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw RelayFiles.ioError("write", path)
            }
            done += n
        }
    }

    func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw RelayFiles.ioError("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func size() throws -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RelayFiles.ioError("read the size of", path) }
        return Int64(st.st_size)
    }

    func sync() throws {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw RelayFiles.ioError("flush", path)
        }
    }
}
