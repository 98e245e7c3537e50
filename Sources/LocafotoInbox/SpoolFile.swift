import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode

/// A file under the node's spool directory being written with positioned writes.
/// Created exclusively with mode 0600; removed unless `keep()` is called.
package final class SpoolFile {
    package let path: String
    private(set) var fd: Int32
    private var kept = false

    /// Where item `item` of offer `offer` is spooled while it arrives (and kept between sessions
    /// for a resume).
    package static func partPath(in directory: String, offer: String, item: Int) -> String {
        "\(directory)/\(offer)-\(item).part"
    }

    /// `truncate: false` reopens a partial file kept from an interrupted session.
    package init(path: String, truncate: Bool = true) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | (truncate ? O_TRUNC : 0) | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw AgentError(.io, "cannot create spool file \(path): \(String(cString: strerror(errno)))")
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw AgentError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    package func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    package var size: Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : -1
    }

    package func truncate(to length: Int64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw AgentError(.io, "cannot truncate \(path): \(String(cString: strerror(errno)))")
        }
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw AgentError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
            return n
        }
    }

    package func sync() throws {
        guard fsync(fd) == 0 else { throw AgentError(.io, "cannot flush \(path): \(String(cString: strerror(errno)))") }
    }

    /// Closes the descriptor and leaves the file for someone else (the vault adopts it).
    package func keep() {
        kept = true
        closeFD()
    }

    package func discard() {
        closeFD()
        if !kept { unlink(path) }
        kept = true
    }

    private func closeFD() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit {
        if !kept { discard() }
    }
}

/// Flushes a closed file's data to disk.
package func fsyncFile(_ path: String) throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw AgentError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw AgentError(.io, "cannot flush \(path): \(String(cString: strerror(errno)))") }
}
