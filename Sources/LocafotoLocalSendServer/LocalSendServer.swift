import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import LocafotoCrypto
import LocafotoLocalSend
import Logging
import NIOCore
import NIOSSL

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
    /// apps show none), and any is taken: LocalSend's are self-signed, and what counts is its
    /// hash, compared with what the sender says it is.
    func tlsConfiguration() throws -> TLSChannelConfiguration {
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
        return TLSChannelConfiguration(tlsConfiguration: tls) { _, promise in promise.succeed(.certificateVerified) }
    }

    package func application(
        host: String, port: Int, group: any EventLoopGroup, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        return Application(
            router: router(),
            server: try .tls(.http1(), configuration: tlsConfiguration()),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: onServerRunning,
            eventLoopGroupProvider: .shared(group),
            logger: quiet)
    }

    func router() -> Router<LocalSendContext> {
        let router = Router(context: LocalSendContext.self)
        let device = self.device
        let reception = self.reception
        let api = router.group(RouterPath(Self.basePath))
        api.get("info") { _, _ in Self.respond(.json(device)) }
        api.post("register") { request, _ in
            // Nothing is kept of who registers (a flood costs an answer each); the answer is ours.
            let body = try await Self.collect(request, limit: 64 << 10)
            guard (try? LocalSendJSON.device(body)) != nil else {
                return Self.respond(.refusal(400, "the body is not a LocalSend device"))
            }
            return Self.respond(.json(device))
        }
        api.post("prepare-upload") { request, context in
            let caller = await context.caller()
            let body = try await Self.collect(request, limit: await reception.maxBodyBytes)
            let pin = request.uri.queryParameters["pin"].map(String.init)
            return Self.respond(await reception.prepare(body, from: caller, pin: pin))
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

    /// A JSON body, refused above `limit` before it is all read.
    static func collect(_ request: Request, limit: Int) async throws -> [UInt8] {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        return Array(buffer.readableBytesView)
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
