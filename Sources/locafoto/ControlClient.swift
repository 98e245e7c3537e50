import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoControlServer
import LocafotoErrors
import LocafotoNode
import NIOCore
import NIOHTTP1
import NIOPosix

/// The CLI's HTTP/1.1 client for the agent's control socket, on SwiftNIO's HTTP codec (one
/// request per connection, as the server answers). An answer is returned only when it arrived
/// whole: an answer cut short, malformed or larger than `maxAnswer` is an error that says so,
/// never an empty result.
struct ControlClient {
    let socketPath: String
    /// Big lists page (`list`, `inbox`), so no single answer should come near this.
    static let maxAnswer = 512 << 20

    struct Response {
        var status: Int
        var body: Data
    }

    func get(_ path: String) throws -> Response {
        try request("GET", path, body: nil)
    }

    func request(_ method: String, _ path: String, body: Data?) throws -> Response {
        let (channel, answer) = try connect()
        defer { channel.close(promise: nil) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "locafoto")
        headers.add(name: "Connection", value: "close")
        var buffer: ByteBuffer?
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(body.count)")
            buffer = channel.allocator.buffer(bytes: body)
        }
        channel.write(
            HTTPClientRequestPart.head(
                HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: headers)),
            promise: nil)
        if let buffer { channel.write(HTTPClientRequestPart.body(.byteBuffer(buffer)), promise: nil) }
        // A failed write means the agent went away; its answer (or the lack of one) says more.
        _ = try? channel.writeAndFlush(HTTPClientRequestPart.end(nil)).wait()
        return try wait(answer)
    }

    /// Streams `input` as the request body (chunked), e.g. standard input for `import -`.
    /// Each piece is written before the next is read, so memory stays at one piece.
    func upload(_ path: String, from input: Int32) throws -> Response {
        let (channel, answer) = try connect()
        defer { channel.close(promise: nil) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "locafoto")
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "Transfer-Encoding", value: "chunked")
        channel.write(
            HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)),
            promise: nil)
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        defer { secureZeroArray(&piece) }
        // An early answer (the agent refused the photo) ends the upload.
        let answered = AnsweredFlag()
        answer.whenComplete { _ in answered.set() }
        while !answered.isSet {
            let n = piece.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read standard input: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            var buffer = channel.allocator.buffer(capacity: n)
            buffer.writeBytes(piece[..<n])
            do {
                try channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(buffer))).wait()
            } catch {
                // The agent stopped reading (it refused the photo): its answer says why.
                break
            }
        }
        _ = try? channel.writeAndFlush(HTTPClientRequestPart.end(nil)).wait()
        return try wait(answer)
    }

    /// `GET path` whose successful (200) answer goes straight to `fd` as it arrives (`export ID -`):
    /// never whole in memory, never in a file. Any other answer is collected and returned (the
    /// agent's error). An answer cut short is an error saying how much arrived; what was written
    /// stays written (a reader of the pipe sees the failure in the exit status).
    func download(_ path: String, to fd: Int32) throws -> Response {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: Response.self)
        let channel: any Channel
        do {
            channel = try connect(loop: loop) { AnswerCollector(promise: promise, limit: 1 << 20, streamingTo: fd) }
        } catch {
            promise.fail(error)
            throw error
        }
        defer { channel.close(promise: nil) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "locafoto")
        headers.add(name: "Connection", value: "close")
        channel.write(
            HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)),
            promise: nil)
        _ = try? channel.writeAndFlush(HTTPClientRequestPart.end(nil)).wait()
        return try wait(promise.futureResult)
    }

    private func wait(_ answer: EventLoopFuture<Response>) throws -> Response {
        do {
            return try answer.wait()
        } catch let e as CLIError {
            throw e
        } catch {
            throw CLIError(
                "could not read the agent's answer (\(error)); nothing was shown. Is the agent healthy? See its log")
        }
    }

    /// Connects after checking that the socket and the process behind it belong to this user.
    private func connect() throws -> (any Channel, EventLoopFuture<Response>) {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: Response.self)
        do {
            let channel = try connect(loop: loop) { AnswerCollector(promise: promise, limit: Self.maxAnswer) }
            return (channel, promise.futureResult)
        } catch {
            promise.fail(error)  // never answered: no connection
            throw error
        }
    }

    /// `GET /v1/events`: returns once the agent has subscribed this reader (its `ready` event
    /// arrived), so that what the caller does next cannot be missed.
    func events(kinds: [String] = []) throws -> EventReader {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let reader = EventReader()
        let channel = try connect(loop: loop) { EventLineSplitter(reader: reader) }
        reader.channel = channel
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "locafoto")
        headers.add(name: "Accept", value: "application/x-ndjson")
        let query = kinds.isEmpty ? "" : "?kinds=" + kinds.joined(separator: ",")
        channel.write(
            HTTPClientRequestPart.head(
                HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/events" + query, headers: headers)),
            promise: nil)
        _ = try? channel.writeAndFlush(HTTPClientRequestPart.end(nil)).wait()
        guard let first = try reader.next(), first.kind == .ready else {
            throw CLIError("the agent's event stream did not start; is the agent the same version as this CLI?")
        }
        return reader
    }

    private func connect(loop: any EventLoop, handler: @escaping @Sendable () -> any ChannelInboundHandler & Sendable)
        throws -> any Channel
    {
        do {
            try ControlSocketTrust.checkPath(socketPath)
        } catch let e as AgentError {
            throw CLIError(e.message, code: .refused)
        }
        let fd = try connectSocket()
        do {
            try ControlSocketTrust.checkPeer(fd, path: socketPath)
        } catch let e as AgentError {
            close(fd)
            throw CLIError(e.message, code: .refused)
        }
        do {
            return try ClientBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(handler())
                    }
                }
                .withConnectedSocket(fd).wait()
        } catch {
            close(fd)
            throw CLIError("cannot talk to the agent on \(socketPath): \(error)")
        }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw CLIError(
                "no agent is running for this home (nothing answers on \(socketPath)); start one with `locafoto agent`",
                code: .unavailable)
        }
        return fd
    }
}

private final class AnsweredFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Gathers one HTTP answer; fails the promise if the connection ends before the answer does.
/// With `fd` (`ControlClient.download`), a 200 answer's body is written there piece by piece
/// instead (blocking the event loop while it writes, which is the back-pressure: nothing more is
/// read meanwhile) and must arrive whole; any other answer (an error) is collected as usual.
private final class AnswerCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<ControlClient.Response>
    private let limit: Int
    private let fd: Int32?
    private var status: Int?
    private var expected: Int?
    private var body = Data()
    private var written = 0
    private var done = false

    init(promise: EventLoopPromise<ControlClient.Response>, limit: Int, streamingTo fd: Int32? = nil) {
        self.promise = promise
        self.limit = limit
        self.fd = fd
    }

    /// The body goes to `fd`: a successful download.
    private var streaming: Bool { fd != nil && status == 200 }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            expected = head.headers.first(name: "Content-Length").flatMap(Int.init)
            if !streaming, let expected, expected > limit {
                fail(context, "the agent's answer is \(expected) bytes, over the CLI's limit of \(limit)")
            }
        case .body(let buffer):
            if let fd, streaming {
                guard Self.writeAll(buffer, to: fd) else {
                    return fail(context, "cannot write the photo: \(String(cString: strerror(errno)))")
                }
                written += buffer.readableBytes
                return
            }
            guard body.count + buffer.readableBytes <= limit else {
                return fail(context, "the agent's answer is over the CLI's limit of \(limit) bytes")
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            if streaming, let expected, expected != written {
                return fail(context, "the photo was cut short: \(written) of \(expected) bytes arrived")
            }
            done = true
            promise.succeed(.init(status: status ?? 0, body: body))
            context.close(promise: nil)
        }
    }

    private static func writeAll(_ buffer: ByteBuffer, to fd: Int32) -> Bool {
        buffer.withUnsafeReadableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let arrived = streaming ? written : body.count
        fail(
            context,
            "the agent's answer was cut short or malformed after \(arrived) bytes\(expected.map { " of \($0)" } ?? "") (\(error))"
        )
    }

    func channelInactive(context: ChannelHandlerContext) {
        let what = streaming ? "the photo" : "the agent's answer"
        fail(
            context,
            status == nil
                ? "the agent closed the connection without answering"
                : "\(what) was cut short: \(streaming ? written : body.count) bytes\(expected.map { " of \($0)" } ?? "") arrived"
        )
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ message: String) {
        guard !done else { return }
        done = true
        // A download that failed part-way wrote part of a photo: an I/O failure, said as such.
        promise.fail(
            fd != nil
                ? CLIError(message, code: .io)
                : CLIError("\(message); nothing was shown. Try again; if it persists, see the agent's log"))
        context.close(promise: nil)
    }
}

func secureZeroArray(_ a: inout [UInt8]) {
    a.withUnsafeMutableBytes { raw in
        for i in raw.indices { raw[i] = 0 }
    }
}

/// A failure the CLI finds itself (or an agent's error answer), reported as one line on
/// stderr; its code gives the exit status (`ErrorCode`, the one table).
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var code: ErrorCode
    /// The agent's JSON error was already printed (`--json`).
    var printedJSON = false

    init(_ message: String, code: ErrorCode = .failed) {
        description = message
        self.code = code
    }

    var exitCode: Int32 { code.exitStatus }
}
