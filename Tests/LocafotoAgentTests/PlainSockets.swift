import Foundation
import Glibc
import Synchronization

/// Plain blocking TCP on 127.0.0.1 for tests that put something other than an agent at an
/// address: a port where nothing listens, or a listener in front of an agent.
enum PlainSockets {
    /// A TCP socket on 127.0.0.1, bound to `port` (0: any free port).
    static func bound(port: UInt16 = 0) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard rc == 0 else {
            close(fd)
            throw TestFailure("bind: \(String(cString: strerror(errno)))")
        }
        var length = size
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: addr.sin_port))
    }

    /// A connected socket to 127.0.0.1:`port`, or nil if the connection failed.
    static func connected(to port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}

/// A port on 127.0.0.1 where nothing listens: bound (so no one else takes it while the test
/// runs) but never listening, so a connection there is refused.
final class RefusingPort: Sendable {
    let port: UInt16
    private let fd: Int32

    init() throws {
        (fd, port) = try PlainSockets.bound()
    }

    deinit { close(fd) }
}

/// A peer that serves one connection (as an independent implementation may): a listener on
/// 127.0.0.1 that hands its first connection to an agent (forwarding bytes both ways) and
/// closes every later one at once, counting them all.
final class OneConnectionFront: Sendable {
    let port: UInt16
    private let fd: Int32
    private let count = Mutex(0)

    /// Connections accepted so far (the first one forwarded, the others closed).
    var accepted: Int { count.withLock { $0 } }

    init(forwardingTo upstream: Int) throws {
        (fd, port) = try PlainSockets.bound()
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw TestFailure("listen: \(String(cString: strerror(errno)))")
        }
        Thread.detachNewThread { [self] in acceptLoop(upstream: UInt16(upstream)) }
    }

    /// Stops accepting (the accept loop closes the listening socket as it ends). Call it once.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func acceptLoop(upstream: UInt16) {
        defer { close(fd) }
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // stopped
            }
            let n = count.withLock { c in
                c += 1
                return c
            }
            guard n == 1, let server = PlainSockets.connected(to: upstream) else {
                close(client)
                continue
            }
            let ends = Mutex(0)
            let pump: @Sendable (Int32, Int32) -> Void = { from, to in
                Self.copy(from: from, to: to)
                let both = ends.withLock { e in
                    e += 1
                    return e == 2
                }
                if both {
                    close(client)
                    close(server)
                }
            }
            Thread.detachNewThread { pump(client, server) }
            Thread.detachNewThread { pump(server, client) }
        }
    }

    /// Copies until `from` ends, then ends the write side of `to`.
    private static func copy(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        outer: while true {
            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            var sent = 0
            while sent < n {
                let w = buffer.withUnsafeBytes { Glibc.send(to, $0.baseAddress! + sent, n - sent, Int32(MSG_NOSIGNAL)) }
                if w < 0, errno == EINTR { continue }
                guard w > 0 else { break outer }
                sent += w
            }
        }
        shutdown(to, Int32(SHUT_WR))
    }
}
