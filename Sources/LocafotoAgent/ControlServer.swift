import Foundation
import LocafotoSession
import LocafotoVault
import NIOCore
import NIOHTTP1
import NIOPosix

/// A request on the control socket, body already collected (except streaming imports).
struct ControlRequest: Sendable {
    var method: HTTPMethod
    var path: [String]
    var query: [String: String]
    var body: [UInt8]
}

struct ControlResponse: Sendable {
    var status: Int
    var body: Data

    static func json<T: Encodable>(_ value: T, status: Int = 200) -> ControlResponse {
        ControlResponse(status: status, body: (try? ControlJSON.encoder.encode(value)) ?? Data("{}".utf8))
    }

    static func error(_ e: AgentError) -> ControlResponse {
        struct Body: Encodable {
            struct Inner: Encodable {
                var code: String
                var message: String
            }
            var error: Inner
        }
        return json(Body(error: .init(code: e.code.description, message: e.message)), status: e.code.httpStatus)
    }
}

enum ControlJSON {
    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        return e
    }()
    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()
}

/// A streamed request body: `/v1/import` hands photo bytes to the vault as they arrive, so
/// an import from standard input never needs the whole photo in memory or on disk in clear.
protocol ControlBodySink: AnyObject {
    func write(_ bytes: ByteBuffer) throws
    func finish() throws -> ControlResponse
    func abort()
}

/// HTTP/1.1 + JSON on a Unix socket created 0600 (the process umask is 077 as well).
/// One request per connection (`Connection: close`), which keeps the client trivial: `curl
/// --unix-socket` works as is.
struct ControlServer {
    static let maxBody = 1 << 20
    typealias Async = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    let path: String
    let group: any EventLoopGroup
    let route: @Sendable (ControlRequest) async -> ControlResponse
    let streamingRoute: @Sendable (ControlRequest) throws -> (any ControlBodySink)?
    let accepted = AcceptedConnections<HTTPServerRequestPart, HTTPServerResponsePart>()

    func bind() async throws -> NIOAsyncChannel<Async, Never> {
        // The CLI refuses a socket in a folder others control; so does the agent, up front.
        try ControlSocketTrust.checkPath(path)
        try Self.clearStaleSocket(path)
        let channel = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return accepted.hold(try Async(wrappingChannelSynchronously: channel))
                }
            }
        guard chmod(path, 0o600) == 0 else { throw AgentError(.io, "cannot restrict \(path) to mode 0600") }
        return channel
    }

    /// Removes a socket file left by an agent that died; refuses if an agent still answers.
    static func clearStaleSocket(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        if ControlProbe.isAnswering(path) {
            throw AgentError(.conflict, "another agent is already running on \(path); stop it first (or use another --home)")
        }
        unlink(path)
    }

    func serve(_ connection: Async) async {
        try? await connection.executeThenClose { inbound, _ in
            var head: HTTPRequestHead?
            var body = ByteBuffer()
            var sink: (any ControlBodySink)?
            var response: ControlResponse?
            // A streaming import refused part-way (e.g. not an image) keeps reading and dropping
            // the rest of the body, then answers: closing early would make the client's write fail
            // and lose the explanation.
            var refusal: AgentError?
            do {
                for try await part in inbound {
                    switch part {
                    case .head(let h):
                        head = h
                        sink = try streamingRoute(Self.request(h, body: []))
                    case .body(let b):
                        if refusal != nil { continue }
                        if let s = sink {
                            do {
                                try s.write(b)
                            } catch {
                                s.abort()
                                sink = nil
                                refusal = Self.agentError(error)
                            }
                        } else {
                            guard body.readableBytes + b.readableBytes <= Self.maxBody else {
                                throw AgentError(.invalidRequest, "request body larger than \(Self.maxBody) bytes")
                            }
                            var b = b
                            body.writeBuffer(&b)
                        }
                    case .end:
                        guard let h = head else { throw AgentError(.invalidRequest, "request without a head") }
                        if let refusal { throw refusal }
                        if let s = sink {
                            sink = nil
                            response = try s.finish()
                        } else {
                            var bytes = Array(body.readableBytesView)
                            response = await route(Self.request(h, body: bytes))
                            // Bodies may hold a passphrase (/v1/unlock): don't leave copies behind.
                            bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
                            body.withUnsafeMutableReadableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
                        }
                    }
                    if response != nil { break }
                }
            } catch {
                sink?.abort()
                response = .error(Self.agentError(error))
            }
            guard let response else {
                sink?.abort()
                return
            }
            try await Self.write(response, to: connection.channel)
        }
    }

    /// Writes the whole answer and returns once the last byte is in the kernel's socket buffer.
    /// `executeThenClose` closes the channel as soon as its body returns, and NIO fails writes
    /// still pending at close: a reply larger than the socket buffer went out cut short (and the
    /// CLI once showed a truncated list as an empty one). Waiting for the end's write promise
    /// makes the close come after every byte, whatever the size.
    static func write(_ response: ControlResponse, to channel: any Channel) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: "\(response.body.count)")
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status), headers: headers)
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body))), promise: nil)
        try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
    }

    /// Errors of streaming imports come from the vault; give them the same shape as routed ones.
    static func agentError(_ error: any Error) -> AgentError {
        switch error {
        case let e as AgentError: e
        case let e as VaultError: Agent.map(e)
        default: AgentError(.internalError, "\(error)")
        }
    }

    static func request(_ h: HTTPRequestHead, body: [UInt8]) -> ControlRequest {
        let parts = h.uri.split(separator: "?", maxSplits: 1)
        let path = (parts.first.map(String.init) ?? "/").split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        var query: [String: String] = [:]
        if parts.count > 1 {
            for kv in parts[1].split(separator: "&") {
                let p = kv.split(separator: "=", maxSplits: 1)
                let k = String(p[0]).removingPercentEncoding ?? String(p[0])
                query[k] = p.count > 1 ? (String(p[1]).removingPercentEncoding ?? String(p[1])) : ""
            }
        }
        return ControlRequest(method: h.method, path: path, query: query, body: body)
    }
}

/// Checks whether something accepts connections on a Unix socket path (blocking, quick).
public enum ControlProbe {
    public static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }
}

/// `limit` and `offset` of a list request: lists page so that no answer grows with the vault
/// or the inbox.
struct ListPage: Sendable {
    var limit: Int?
    var offset = 0

    init() {}

    init(_ query: [String: String]) throws {
        limit = try Self.count(query, "limit")
        offset = try Self.count(query, "offset") ?? 0
    }

    /// A count parameter: absent, or a whole number of 0 or more.
    static func count(_ query: [String: String], _ name: String) throws -> Int? {
        guard let raw = query[name] else { return nil }
        guard let n = Int(raw), n >= 0 else { throw AgentError(.invalidRequest, "\(name) must be a whole number of 0 or more, not '\(raw)'") }
        return n
    }

    func apply<T>(_ list: [T]) -> ArraySlice<T> {
        let start = min(offset, list.count)
        return list[start..<(start + min(list.count - start, limit ?? list.count))]
    }
}
