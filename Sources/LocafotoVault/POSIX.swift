#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
import LocafotoCrypto
import LocafotoErrors

/// Thin, throwing wrappers over the POSIX calls the vault needs: explicit permissions, fsync,
/// atomic rename, positional writes. Every failure becomes `VaultError.io` naming the path.
enum POSIX {
    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    static func ioError(_ what: String, _ path: String, _ code: Int32 = errno) -> VaultError {
        VaultError(.io, "could not \(what) \(path)", cause: CauseText(errorText(code)))
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600, what: String = "open") throws
        -> FileDescriptor
    {
        while true {
            let fd = Glibc_open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return FileDescriptor(fd: fd, path: path) }
            if errno == EINTR { continue }
            throw ioError(what, path)
        }
    }

    /// Creates a directory with mode 0700 (forced, whatever the umask). Returns false when it
    /// already existed.
    @discardableResult
    static func makeDirectory(_ path: String) throws -> Bool {
        if mkdir(path, 0o700) == 0 {
            guard chmod(path, 0o700) == 0 else { throw ioError("set permissions on", path) }
            return true
        }
        if errno == EEXIST, isDirectory(path) { return false }
        throw ioError("create directory", path)
    }

    static func fileStatus(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & 0o170000) == 0o040000
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & 0o170000) == 0o100000
    }

    static func exists(_ path: String) -> Bool { fileStatus(path) != nil }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc_rename(from, to) == 0 else { throw ioError("move \(from) to", to) }
    }

    /// A new, empty file beside `final` to write the whole of it before it is moved into place:
    /// `<folder>/.<name>.<12 random hex digits>.partial`, mode 0600, created exclusively
    /// (`O_EXCL`, no symbolic link followed). Why: the folder is the user's, and whatever
    /// already stands there — their own `.name.partial` included — must not be opened,
    /// truncated or removed. A failure names the folder and the reason, not the temporary name.
    static func createPartial(beside final: String) throws -> FileDescriptor {
        let slash = final.lastIndex(of: "/")
        let folder = slash.map { String(final[..<$0]) } ?? "."
        var name = slash.map { String(final[final.index(after: $0)...]) } ?? final
        if name.utf8.count > 200 { name = "export" }  // within NAME_MAX (255 bytes) with what is added
        for _ in 0..<8 {
            let path = folder + "/." + name + "." + Hex.encode(SecureRandom.bytes(6)) + ".partial"
            let fd = Glibc_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return FileDescriptor(fd: fd, path: path) }
            if errno == EEXIST || errno == EINTR { continue }
            throw VaultError(.io, "could not write in \(folder.isEmpty ? "/" : folder)", cause: CauseText(errorText()))
        }
        throw VaultError(
            .io, "could not write in \(folder.isEmpty ? "/" : folder)", cause: CauseText("no free temporary name"))
    }

    /// Removes a file, ignoring "does not exist".
    static func unlinkIfPresent(_ path: String) {
        _ = unlink(path)
    }

    /// Makes a completed rename/create/unlink in `directory` durable.
    static func syncDirectory(_ directory: String) throws {
        let fd = try open(directory, O_RDONLY | O_DIRECTORY, what: "open directory")
        try fd.sync()
        fd.close()
    }

    /// Entries of a directory (without "." and ".."); empty if it cannot be read.
    static func listDirectory(_ path: String) -> [String] {
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
}

/// An owned file descriptor. Closed explicitly or on deinit.
final class FileDescriptor {
    private(set) var fd: Int32
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close() }

    func close() {
        if fd >= 0 {
            _ = Glibc_close(fd)
            fd = -1
        }
    }

    func size() throws -> UInt64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw POSIX.ioError("read the size of", path) }
        return UInt64(st.st_size)
    }

    var isRegularFile: Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & 0o170000) == 0o100000
    }

    var device: UInt64? {
        var st = stat()
        return fstat(fd, &st) == 0 ? UInt64(st.st_dev) : nil
    }

    func setMode(_ mode: mode_t) throws {
        guard fchmod(fd, mode) == 0 else { throw POSIX.ioError("set permissions on", path) }
    }

    /// Writes all of `buffer` at the current offset.
    func write(_ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc_write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIX.ioError("write", path)
            }
            offset += n
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes all of `bytes` at `offset` without moving the file offset.
    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw POSIX.ioError("write", path)
                }
                done += n
            }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIX.ioError("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `count` bytes at `offset`; a short file is `corrupt`.
    func read(count: Int, at offset: UInt64) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let n = try out.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        guard n == count else {
            throw VaultError(.corrupt, "\(path) ended early: expected \(count) bytes at offset \(offset), got \(n)")
        }
        return out
    }

    /// Reads up to `buffer.count` bytes at the current offset, stopping early only at end of file.
    func readSequential(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = Glibc_read(fd, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIX.ioError("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func sync() throws {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw POSIX.ioError("flush to disk", path)
        }
    }
}

// Unambiguous names for the libc functions that methods above shadow.
@inline(__always) private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func Glibc_rename(_ a: String, _ b: String) -> Int32 { rename(a, b) }
@inline(__always) private func Glibc_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
@inline(__always) private func Glibc_read(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int { read(fd, p, n) }

/// An fsync of a file, run on a thread of its own so that the caller goes on meanwhile (a
/// receiver goes on with the next photo); `wait` returns once it is done, or throws its error.
/// One serial queue for all of them: they go to the disk in the order asked.
final class BackgroundSync: @unchecked Sendable {
    private static let queue = DispatchQueue(label: "locafoto.vault.fsync", qos: .userInitiated)
    private let done = DispatchSemaphore(value: 0)
    /// Written on `queue` before `done` is signalled, read only after waiting for it.
    private var failure: VaultError?

    init(path: String) {
        Self.queue.async { [self] in
            do {
                let fd = try POSIX.open(path, O_RDONLY, what: "open the received file")
                defer { fd.close() }
                try fd.sync()
            } catch {
                failure =
                    error as? VaultError ?? VaultError(.io, "could not flush \(path) to disk", cause: error)
            }
            done.signal()
        }
    }

    func wait() throws {
        done.wait()
        done.signal()  // a second wait returns at once
        if let failure { throw failure }
    }
}
