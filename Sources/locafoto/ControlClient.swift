import Foundation

/// A minimal HTTP/1.1 client for the agent's control socket. One request per connection,
/// matching the server (`Connection: close`), so the response is everything until EOF.
struct ControlClient {
    let socketPath: String

    struct Response {
        var status: Int
        var body: Data
    }

    func get(_ path: String) throws -> Response {
        try request("GET", path, body: nil)
    }

    func post(_ path: String, json: [String: Any]? = nil) throws -> Response {
        try request("POST", path, body: try JSONSerialization.data(withJSONObject: json ?? [:]))
    }

    func request(_ method: String, _ path: String, body: Data?) throws -> Response {
        let fd = try connectSocket()
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: locafoto\r\nConnection: close\r\n"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        try writeAll(fd, Data(head.utf8))
        if let body { try writeAll(fd, body) }
        return try readResponse(fd)
    }

    /// Streams `fd`'s bytes as the request body (chunked), e.g. standard input for `import -`.
    func upload(_ path: String, from input: Int32) throws -> Response {
        let fd = try connectSocket()
        defer { close(fd) }
        try writeAll(fd, Data("POST \(path) HTTP/1.1\r\nHost: locafoto\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n".utf8))
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read standard input: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            do {
                try writeAll(fd, Data(String(n, radix: 16).utf8) + Data("\r\n".utf8) + Data(buffer[..<n]) + Data("\r\n".utf8))
            } catch {
                // The agent stopped reading (it refused the photo): its answer says why.
                secureZeroArray(&buffer)
                return try readResponse(fd)
            }
        }
        secureZeroArray(&buffer)
        try? writeAll(fd, Data("0\r\n\r\n".utf8))
        return try readResponse(fd)
    }

    private func connectSocket() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CLIError("cannot create a socket") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            close(fd)
            throw CLIError("control socket path is too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw CLIError("no agent is running for this home (nothing answers on \(socketPath)); start one with `locafoto agent`", exitCode: 69)
        }
        return fd
    }

    private func writeAll(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw CLIError("lost the connection to the agent: \(String(cString: strerror(errno)))")
                }
                done += n
            }
        }
    }

    private func readResponse(_ fd: Int32) throws -> Response {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("lost the connection to the agent")
            }
            if n == 0 { break }
            data.append(contentsOf: buffer[..<n])
            guard data.count < 64 << 20 else { throw CLIError("the agent's answer is too large") }
        }
        guard let sep = data.range(of: Data("\r\n\r\n".utf8)) else { throw CLIError("the agent sent an incomplete answer") }
        let head = String(decoding: data[..<sep.lowerBound], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw CLIError("the agent sent a malformed answer") }
        return Response(status: status, body: Data(data[sep.upperBound...]))
    }
}

func secureZeroArray(_ a: inout [UInt8]) {
    a.withUnsafeMutableBytes { raw in
        for i in raw.indices { raw[i] = 0 }
    }
}

/// A failure the CLI reports as one line on stderr with an exit code.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32

    init(_ message: String, exitCode: Int32 = 1) {
        description = message
        self.exitCode = exitCode
    }
}
