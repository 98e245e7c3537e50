import Foundation

/// An owned file descriptor for positioned and sequential reads and writes, EINTR retried.
/// Closed by `close()` or on deinit.
public final class OpenFile {
    public private(set) var fd: Int32
    public let path: String
    private let files: FileSystem

    init(fd: Int32, path: String, files: FileSystem) {
        self.fd = fd
        self.path = path
        self.files = files
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { _ = Foundation.close(fd) }
        fd = -1
    }

    public func size() throws -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw files.failed("read the size of", path) }
        return Int64(st.st_size)
    }

    public var isRegularFile: Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    public var device: UInt64? {
        var st = stat()
        return fstat(fd, &st) == 0 ? UInt64(st.st_dev) : nil
    }

    public func setMode(_ mode: mode_t) throws {
        guard fchmod(fd, mode) == 0 else { throw files.failed("set permissions on", path) }
    }

    /// Writes all of `buffer` at the current offset.
    public func write(_ buffer: UnsafeRawBufferPointer) throws {
        let n = try repeated("write", buffer.count) { done in
            Foundation.write(fd, buffer.baseAddress! + done, buffer.count - done)
        }
        guard n == buffer.count else { throw files.failed("write", path, ENOSPC) }
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes all of `buffer` at `offset` without moving the file offset.
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: some BinaryInteger) throws {
        let n = try repeated("write", buffer.count) { done in
            pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        }
        guard n == buffer.count else { throw files.failed("write", path, ENOSPC) }
    }

    public func write(_ bytes: [UInt8], at offset: some BinaryInteger) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: some BinaryInteger) throws -> Int {
        try repeated("read", buffer.count) { done in
            pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        }
    }

    /// Reads exactly `count` bytes at `offset`; a shorter file is damaged.
    public func read(count: Int, at offset: some BinaryInteger) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let n = try out.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        guard n == count else {
            throw files.failures.damaged(
                path, "\(path) ended early: expected \(count) bytes at offset \(offset), got \(n)")
        }
        return out
    }

    /// Reads up to `buffer.count` bytes at the current offset, stopping early only at end of file.
    public func readSequential(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try repeated("read", buffer.count) { done in
            Foundation.read(fd, buffer.baseAddress! + done, buffer.count - done)
        }
    }

    public func sync() throws {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw files.failed("flush to disk", path)
        }
    }

    /// Calls `step` with the bytes done so far until `count` are done or it returns 0 (end of
    /// file, which a write never returns for bytes it was given); EINTR is retried, any other failure thrown as `what` on the path.
    private func repeated(_ what: String, _ count: Int, _ step: (Int) -> Int) throws -> Int {
        var done = 0
        while done < count {
            let n = step(done)
            if n < 0 {
                if errno == EINTR { continue }
                throw files.failed(what, path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
