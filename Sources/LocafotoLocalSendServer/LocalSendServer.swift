import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LocafotoCrypto
import LocafotoLocalSend
import LocafotoNode
import LocafotoSession
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// LocalSend's HTTPS API (protocol v2) for this node, served by Hummingbird over swift-nio-ssl:
/// the node's certificate (`LocalSendIdentity`), a client certificate asked for and read (the
/// apps since 1.18 show theirs; it is what names the sender), and the routes a receiver needs.
package struct LocalSendServer: Sendable {
    package static let basePath = "/api/localsend/v2"

    /// What this node says of itself (`/info`, the answer to `/register`, announcements).
    package let device: LocalSendDevice
    package let reception: LocalSendReception
    let certificate: TLSCertificate

    package init(alias: String, certificate: TLSCertificate, port: Int, reception: LocalSendReception) {
        self.certificate = certificate
        self.reception = reception
        device = Self.describe(alias: alias, certificate: certificate, port: port)
    }

    /// The node as it describes itself to LocalSend devices.
    package static func describe(alias: String, certificate: TLSCertificate, port: Int) -> LocalSendDevice {
        LocalSendDevice(
            alias: alias, version: "2.1", deviceModel: "Locafoto", deviceType: .desktop,
            fingerprint: certificate.fingerprint, port: port, protocol: "https", download: false, announce: nil)
    }

    /// TLS with the node's certificate; a client certificate is asked for, not required (older
    /// apps show none), and any is taken (`LocalSendChannel`): LocalSend's are self-signed, and
    /// what counts is its hash, compared with what the sender says it is.
    func tlsContext() throws -> NIOSSLContext {
        let key = try certificate.privateKeyDER.withUnsafeBytes { raw in
            var copy = Array(raw)
            defer { secureZero(&copy) }
            return try NIOSSLPrivateKey(bytes: copy, format: .der)
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: certificate.der, format: .der))],
            privateKey: .privateKey(key))
        tls.certificateVerification = .optionalVerification
        tls.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: tls)
    }

    /// The HTTPS server: every connection through the port's gate and deadlines
    /// (`LocalSendChannel`), Hummingbird's HTTP/1 with the port's HTTP deadlines inside.
    package func application(
        host: String, port: Int, group: any EventLoopGroup, gate: ConnectionGate, logger: Logger,
        registered: @escaping @Sendable (LocalSendDevice, _ address: String) -> Void = { _, _ in },
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        // Hummingbird's own lines are a library's words ("Waiting on child channel:
        // CancellationError()" at every stop); what matters of them this node says itself.
        var quiet = logger
        quiet.logLevel = .critical
        let tls = try tlsContext()
        let limits = reception.portLimits
        let server = HTTPServerBuilder { responder in
            let (idle, stall, whole) = (limits.idleTimeout, limits.bodyStallTimeout, limits.jsonRequestTimeout)
            // Hummingbird's idle timeout stays off: `HTTPDeadlines` knows when the node itself
            // holds a request's body back.
            let http = HTTP1Channel(
                responder: responder,
                configuration: .init(additionalChannelHandlers: [HTTPDeadlines(idle: idle, stall: stall, whole: whole)])
            )
            return LocalSendChannel(base: http, tls: tls, gate: gate, limits: limits, logger: logger)
        }
        return Application(
            router: router(registered: registered),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: onServerRunning,
            eventLoopGroupProvider: .shared(group),
            logger: quiet)
    }

    /// - Parameter registered: told each device that registers (from the address it came from).
    func router(registered: @escaping @Sendable (LocalSendDevice, String) -> Void = { _, _ in })
        -> Router<LocalSendContext>
    {
        let router = Router(context: LocalSendContext.self)
        let device = self.device
        let reception = self.reception
        let bodies = reception.bodies
        // The apps before protocol v2 (and clients that still ask first) read the device here;
        // v2's fields are a superset of v1's, so the same answer serves both.
        router.get(RouterPath(Self.v1InfoPath)) { _, _ in Self.respond(.json(device)) }
        let api = router.group(RouterPath(Self.basePath))
        api.get("info") { _, _ in Self.respond(.json(device)) }
        api.post("register") { request, context in
            // Nothing is written of who registers (a flood costs an answer each): the device is
            // heard, in memory and bounded, as a datagram would make it; the answer is ours.
            let body: [UInt8]
            switch try await Self.collect(request, limit: 64 << 10, budget: bodies) {
            case .refused(let answer): return Self.respond(answer)
            case .read(let bytes): body = bytes
            }
            guard let them = try? LocalSendJSON.device(body) else {
                return Self.respond(.refusal(400, "the body is not a LocalSend device"))
            }
            if them.fingerprint != device.fingerprint, let address = context.channel.remoteAddress?.ipAddress {
                registered(them, address)
            }
            return Self.respond(.json(device))
        }
        api.post("prepare-upload") { request, context in
            let caller = await context.caller()
            let body: [UInt8]
            switch try await Self.collect(request, limit: await reception.maxBodyBytes, budget: bodies) {
            case .refused(let answer): return Self.respond(answer)
            case .read(let bytes): body = bytes
            }
            let pin = request.uri.queryParameters["pin"].map(String.init)
            let gone = context.senderGone()
            return Self.respond(await reception.prepare(body, from: caller, pin: pin, senderGone: gone))
        }
        api.post("upload") { request, context in
            let caller = await context.caller()
            let q = request.uri.queryParameters
            return Self.respond(
                await reception.upload(
                    sessionID: q["sessionId"].map(String.init), fileID: q["fileId"].map(String.init),
                    token: q["token"].map(String.init), from: caller, body: request.body))
        }
        api.post("cancel") { request, context in
            let caller = await context.caller()
            let sessionID = request.uri.queryParameters["sessionId"].map(String.init)
            return Self.respond(await reception.cancel(sessionID: sessionID, from: caller))
        }
        return router
    }

    static let v1InfoPath = "/api/localsend/v1/info"

    enum Collected {
        case read([UInt8])
        case refused(LocalSendAnswer)
    }

    /// A JSON body, refused above `limit` before it is all read, and at once while the port's
    /// bodies hold their whole budget (`BodyBudget`): what it may hold is reserved first, from
    /// its Content-Length when it says one, and given back once it is read.
    static func collect(_ request: Request, limit: Int, budget: BodyBudget) async throws -> Collected {
        let length = request.headers[.contentLength].flatMap { Int($0) }
        if let length, length > limit {
            return .refused(.refusal(413, "the body is \(length) bytes; at most \(limit) are read"))
        }
        let reserved = min(length ?? limit, limit)
        guard budget.take(reserved) else {
            return .refused(.refusal(503, "this node is reading too many requests at once; try again in a moment"))
        }
        defer { budget.give(reserved) }
        var request = request
        let buffer = try await request.collectBody(upTo: reserved)
        return .read(Array(buffer.readableBytesView))
    }

    static func respond(_ answer: LocalSendAnswer) -> Response {
        var headers = HTTPFields()
        if !answer.body.isEmpty { headers[.contentType] = "application/json" }
        return Response(
            status: .init(code: answer.status), headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

/// A request's context: the connection it came on, for the caller's address and certificate.
package struct LocalSendContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// JSON bodies are bounded by each route (`LocalSendServer.collect`); uploads stream.
    package var maxUploadSize: Int { 64 << 20 }

    /// Returns once the caller's side of the connection is gone (`SenderGoneWatch`), or the
    /// task is cancelled (an event loop future alone would not end with it).
    func senderGone() -> @Sendable () async -> Void {
        let channel = self.channel
        return {
            let future =
                (try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.handler(type: SenderGoneWatch.self).gone.futureResult
                }.get()) ?? channel.closeFuture
            let done = Mutex(false)
            let woken = Waiters()
            future.whenComplete { _ in
                done.withLock { $0 = true }
                woken.wakeAll()
            }
            await woken.wait { done.withLock { $0 } }
        }
    }

    /// The caller's address and the SHA-256 of the certificate it showed (read from the TLS
    /// handler, on the connection's event loop).
    func caller() async -> LocalSendCaller {
        let channel = self.channel
        let address = channel.remoteAddress?.ipAddress ?? "?"
        let der: [UInt8]? =
            try? await channel.eventLoop.submit { () -> [UInt8]? in
                let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
                return try tls.peerCertificate?.toDERBytes()
            }.get()
        return LocalSendCaller(address: address, certificate: der.map { TLSCertificate.fingerprint(of: $0) })
    }
}
