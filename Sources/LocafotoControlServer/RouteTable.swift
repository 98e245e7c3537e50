import Foundation
import HTTPTypes
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoNode
import NIOCore

/// Registers handlers on the router: collects the body (bounded), decodes path parameters
/// and the query, and zeroes the body once the handler has answered.
package struct RouteTable {
    package let router: Router<ControlContext>

    package init(router: Router<ControlContext>) { self.router = router }
    package typealias Handler = @Sendable (ControlRequest) async throws -> ControlResponse

    package mutating func get(_ path: RouterPath, _ handler: @escaping Handler) { add(.get, path, handler) }
    package mutating func post(_ path: RouterPath, _ handler: @escaping Handler) { add(.post, path, handler) }
    package mutating func put(_ path: RouterPath, _ handler: @escaping Handler) { add(.put, path, handler) }

    package mutating func add(_ method: HTTPRequest.Method, _ path: RouterPath, _ handler: @escaping Handler) {
        router.on(path, method: method) { request, context -> ControlResponse in
            var request = request
            var r = RouteTable.request(request, context)
            if method != .get {
                var buffer = try await request.collectBody(upTo: ControlServer.maxBody)
                r.body = Array(buffer.readableBytesView)
                // Bodies may hold a passphrase (/v1/unlock): don't leave copies behind.
                buffer.withUnsafeMutableReadableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
            }
            defer { secureZero(&r.body) }
            return try await handler(r)
        }
    }

    /// A request whose body goes to `sink` as it arrives (`locafoto import -`): a photo from
    /// standard input is never whole in memory or on disk in clear.
    package mutating func streamingPost(
        _ path: RouterPath, _ open: @escaping @Sendable (ControlRequest) throws -> any BodySink
    ) {
        router.on(path, method: .post) { request, context -> ControlResponse in
            let sink = try open(RouteTable.request(request, context))
            // A photo refused part-way (not an image, say) keeps reading and dropping the rest
            // of the body, then answers: closing early would make the client's write fail and
            // lose the explanation.
            var refusal: AgentError?
            do {
                for try await piece in request.body where refusal == nil {
                    do {
                        try sink.write(piece)
                    } catch {
                        sink.abort()
                        refusal = ControlErrorMiddleware.agentError(error)
                    }
                }
            } catch {
                if refusal == nil { sink.abort() }
                throw error
            }
            if let refusal { throw refusal }
            do {
                return try sink.finish()
            } catch {
                sink.abort()
                throw error
            }
        }
    }

    package static func request(_ request: Request, _ context: ControlContext) -> ControlRequest {
        var r = ControlRequest()
        for (k, v) in context.parameters {
            r.parameters[String(k)] = String(v).removingPercentEncoding ?? String(v)
        }
        for (k, v) in request.uri.queryParameters {
            r.query[String(k).removingPercentEncoding ?? String(k)] = String(v)
        }
        r.wantsEventStream = request.headers[.accept]?.contains("text/event-stream") ?? false
        r.cookieLines = request.headers[values: .cookie]
        return r
    }
}

/// Where a streamed request body goes, piece by piece (`RouteTable.streamingPost`).
package protocol BodySink {
    func write(_ bytes: ByteBuffer) throws
    func finish() throws -> ControlResponse
    func abort()
}
