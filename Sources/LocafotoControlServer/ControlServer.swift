import Foundation
import HTTPTypes
import Hummingbird
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoVault
import LocafotoWeb
import LocafotoWire
import Logging
import NIOCore

/// A routed request on the control socket: its path parameters, query and body (collected up
/// to `ControlServer.maxBody`; zeroed once the handler returns, since it may hold a passphrase).
package struct ControlRequest: Sendable {
    package var parameters: [String: String] = [:]
    package var query: [String: String] = [:]
    package var body: [UInt8] = []
    /// Whether the client asked for server-sent events (`Accept: text/event-stream`).
    package var wantsEventStream = false
    /// The `Cookie` header lines (the web app's session).
    package var cookieLines: [String] = []

    package var cookies: CookieJar { CookieJar(lines: cookieLines) }

    package struct CookieJar {
        package var lines: [String]
        package subscript(name: String) -> String? { cookieValue(name, in: lines) }
    }

    /// A path parameter (`:id` in the route's path), percent-decoded.
    package func parameter(_ name: String) throws -> String {
        guard let value = parameters[name], !value.isEmpty else {
            throw AgentError(.invalidRequest, "missing \(name) in the path")
        }
        return value
    }
}

/// An answer: JSON with a status, or a stream (the event stream).
package struct ControlResponse: Sendable {
    package var status: Int
    package var body: Data
    package var stream: ResponseBody?
    package var contentType = "application/json"
    /// Further header fields (the web app's `Set-Cookie`).
    package var headers: [(HTTPField.Name, String)] = []

    package init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }

    package static func json<T: Encodable>(_ value: T, status: Int = 200) -> ControlResponse {
        ControlResponse(status: status, body: (try? ControlJSON.encoder.encode(value)) ?? Data("{}".utf8))
    }

    package static func error(_ e: AgentError) -> ControlResponse {
        json(ErrorAnswer(code: e.code, message: e.message), status: e.code.httpStatus)
    }

    /// Bytes that are not JSON (a photo, a thumbnail), never cached.
    package static func bytes(_ bytes: [UInt8], contentType: String) -> ControlResponse {
        var r = ControlResponse(status: 200, body: Data(bytes))
        r.contentType = contentType
        return r
    }

    package static func streaming(_ contentType: String, _ body: ResponseBody) -> ControlResponse {
        var r = ControlResponse(status: 200, body: Data())
        r.stream = body
        r.contentType = contentType
        return r
    }
}

extension ControlResponse: ResponseGenerator {
    package func response(from request: Request, context: some RequestContext) throws -> Response { httpResponse }

    package var httpResponse: Response {
        var headers: HTTPFields = [.contentType: contentType]
        if stream != nil || contentType != "application/json" {
            // Each event is written as it happens: no proxy or client may hold it back. Photos
            // (decrypted in memory) must not be kept in any cache either.
            headers[.cacheControl] = "no-store"
        }
        for (name, value) in self.headers { headers.append(HTTPField(name: name, value: value)) }
        return Response(
            status: .init(code: status), headers: headers,
            body: stream ?? ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

package enum ControlJSON {
    package static let encoder = ControlCoding.encoder()
    /// One event per line (`GET /v1/events`).
    package static let lineEncoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        return e
    }()
    package static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()

    /// `body` as JSON of `type`; a body that is not one is the request's fault. A value its type
    /// refuses in our words (`RefusedValue`: a name outside a closed set, a selection of nothing)
    /// is answered in those words.
    package static func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        do {
            return try decoder.decode(T.self, from: Data(body))
        } catch DecodingError.dataCorrupted(let context) where context.underlyingError is RefusedValue {
            throw AgentError(.invalidRequest, "\(context.underlyingError!)")
        } catch {
            throw AgentError(.invalidRequest, "invalid request body: \(WireMessage.describe(error))")
        }
    }
}

/// The control API's request context: bodies up to `ControlServer.maxBody`.
package struct ControlContext: RequestContext {
    package var coreContext: CoreRequestContextStorage

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    package var maxUploadSize: Int { ControlServer.maxBody }
}

/// Every error leaves the control API in one shape, `{"error": {"code", "message"}}`, with
/// the status of its code (protocol/control-api.md "Errors"): the agent's own errors, the
/// vault's, malformed files, and the framework's (no such route, body too large).
package struct ControlErrorMiddleware: RouterMiddleware {
    package typealias Context = ControlContext

    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            return try ControlResponse.error(Self.agentError(error, request)).response(from: request, context: context)
        }
    }

    package static func agentError(_ error: any Error, _ request: Request? = nil) -> AgentError {
        switch error {
        case let e as AgentError: return e
        case let e as VaultError: return AgentError(e)
        case let e as FormatError: return AgentError(.invalidRequest, e.message, cause: e)
        // A value a request gave that its type refuses (a URL parameter outside its set).
        case let e as RefusedValue: return AgentError(.invalidRequest, e.description)
        // A filter name or quality out of range is the request's fault; an image libvips cannot
        // decode or encode is the photo's (or this libvips', for HEIC output).
        case let e as MediaError:
            return AgentError(e.code == .invalidOption ? .invalidRequest : .unsupported, e.message, cause: e)
        case let e as HTTPError where e.status == .notFound:
            let target = request.map { "\($0.method) \($0.uri.path)" } ?? "this path"
            return AgentError(
                .notFound, "no such API call: \(target); this agent speaks /v1/… (protocol/control-api.md)")
        case let e as HTTPError where e.status == .contentTooLarge:
            return AgentError(.invalidRequest, "request body larger than \(ControlServer.maxBody) bytes")
        case let e as HTTPError:
            return AgentError(.invalidRequest, e.body ?? "\(e.status)")
        default:
            return AgentError(.internalError, "\(error)", cause: error)
        }
    }
}

/// HTTP/1.1 + JSON on a Unix socket created 0600 (the process umask is 077 as well), served by
/// Hummingbird: `curl --unix-socket` works as is. The routes are in `ControlRoutes`.
package struct ControlServer: Sendable {
    package static let maxBody = 1 << 20

    package let path: String
    package let group: any EventLoopGroup

    package init(path: String, group: any EventLoopGroup) {
        self.path = path
        self.group = group
    }

    /// Checks the socket's folder and clears a socket left by an agent that died; refuses if an
    /// agent still answers there.
    package func prepare() throws {
        // The CLI refuses a socket in a folder others control; so does the agent, up front.
        try ControlSocketTrust.checkPath(path)
        try Self.clearStaleSocket(path)
    }

    package func application(_ router: Router<ControlContext>, logger: Logger) -> some ApplicationProtocol {
        let path = self.path
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)  // not a line per request
        return Application(
            router: router,
            configuration: .init(address: .unixDomainSocket(path: path), serverName: nil),
            onServerRunning: { _ in chmod(path, 0o600) },
            eventLoopGroupProvider: .shared(group),
            logger: quiet)
    }

    /// Removes a socket file left by an agent that died; refuses if an agent still answers.
    package static func clearStaleSocket(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        if ControlProbe.isAnswering(path) {
            throw AgentError(
                .conflict, "another agent is already running on \(path); stop it first (or use another --home)")
        }
        unlink(path)
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

/// `limit` and `offset` of a list request: lists page so that no answer grows with the vault
/// or the inbox.
package struct ListPage: Sendable {
    package var limit: Int?
    package var offset = 0

    package init() {}

    package init(_ query: [String: String]) throws {
        limit = try Self.count(query, "limit")
        offset = try Self.count(query, "offset") ?? 0
    }

    /// A count parameter: absent, or a whole number of 0 or more.
    package static func count(_ query: [String: String], _ name: String) throws -> Int? {
        guard let raw = query[name] else { return nil }
        guard let n = Int(raw), n >= 0 else {
            throw AgentError(.invalidRequest, "\(name) must be a whole number of 0 or more, not '\(raw)'")
        }
        return n
    }

    package func apply<T>(_ list: [T]) -> ArraySlice<T> {
        let start = min(offset, list.count)
        return list[start..<(start + min(list.count - start, limit ?? list.count))]
    }
}
