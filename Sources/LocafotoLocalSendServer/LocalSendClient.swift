import Foundation
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoNode
import LocafotoSession
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// HTTPS requests to a LocalSend device, one connection each (as the apps make them), over
/// swift-nio's HTTP/1 codec and swift-nio-ssl: the node shows its own certificate (the apps'
/// servers ask for one and name the sender by it), and the device's certificate must hash to
/// the fingerprint it is known by — LocalSend's certificates are self-signed, so that hash is
/// the only thing that says who answers. Not async-http-client: it has no hook to pin a
/// certificate by its hash.
struct LocalSendClient: Sendable {
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
        /// The SHA-256 of the certificate the device showed (uppercase hex).
        var certificate: String
    }

    /// What a request carries.
    enum Body: Sendable {
        case json([UInt8])
        /// `length` bytes, asked for piece by piece (nil: no more); `sent` is told each piece.
        case stream(length: Int64, next: @Sendable () async throws -> ByteBuffer?)
    }

    let group: any EventLoopGroup
    let tls: NIOSSLContext
    var connectTimeout: TimeAmount = .seconds(10)

    /// - Parameters: `certificate`: the node's own, shown to the device.
    init(group: any EventLoopGroup, certificate: TLSCertificate) throws {
        self.group = group
        let key = try certificate.privateKeyDER.withUnsafeBytes { raw in
            var copy = Array(raw)
            defer { secureZero(&copy) }
            return try NIOSSLPrivateKey(bytes: copy, format: .der)
        }
        var c = TLSConfiguration.makeClientConfiguration()
        c.certificateChain = [.certificate(try NIOSSLCertificate(bytes: certificate.der, format: .der))]
        c.privateKey = .privateKey(key)
        c.minimumTLSVersion = .tlsv12
        // Replaced by the pinning callback of each connection; hostnames mean nothing here.
        c.certificateVerification = .noHostnameVerification
        c.shutdownTimeout = .milliseconds(100)
        tls = try NIOSSLContext(configuration: c)
    }

    /// POSTs (or GETs, without a body) `path` to `host:port` and reads the answer, at most
    /// `maxAnswerBytes` of it. `pinned`: the fingerprint the device's certificate must have; nil
    /// learns it (the answer says which it was). `answerTimeout`: how long the device may take to
    /// answer once the request is written (nil: as long as it likes, e.g. while its user
    /// decides); the TLS handshake gets `connectTimeout`. `sent`: told the bytes of each piece
    /// written. Cancelling the task closes the connection.
    func request(
        host: String, port: Int, path: String, body: Body?, pinned: String?, maxAnswerBytes: Int = 64 << 10,
        answerTimeout: TimeAmount? = nil, sent: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> Answer {
        let seen = NIOLockedValueBox<String?>(nil)
        let (tls, handshakeTimeout) = (self.tls, connectTimeout)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        let handshake: EventLoopFuture<Void>
        do {
            (channel, handshake) = try await ClientBootstrap(group: group)
                .connectTimeout(connectTimeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: nil) {
                            certificates, promise in
                            guard let leaf = certificates.first, let der = try? leaf.toDERBytes() else {
                                return promise.succeed(.failed)
                            }
                            let fingerprint = TLSCertificate.fingerprint(of: der)
                            seen.withLockedValue { $0 = fingerprint }
                            promise.succeed(pinned == nil || pinned == fingerprint ? .certificateVerified : .failed)
                        }
                        let waiter = TLSHandshakeWaiter(channel.eventLoop.makePromise(), timeout: handshakeTimeout)
                        try channel.pipeline.syncOperations.addHandlers(handler, waiter)
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return (
                            try NIOAsyncChannel(wrappingChannelSynchronously: channel), waiter.done.futureResult
                        )
                    }
                }
        } catch {
            throw AgentError(
                .peerUnavailable, Self.failure(error, at: Self.address(host, port), connecting: true), cause: error)
        }
        let timedOut = NIOLockedValueBox(false)
        let shookHands = NIOLockedValueBox(false)
        let connection = channel.channel
        do {
            return try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    // Nothing is written before the handshake is over: swift-nio-ssl holds writes
                    // made before then and encrypts them all at once, a whole photo in memory twice.
                    try await handshake.get()
                    shookHands.withLockedValue { $0 = true }
                    // A device may answer before it has read the whole body (a refusal) and close:
                    // its answer is still read, and tells more than the broken write.
                    var writeError: (any Error)?
                    do {
                        try await Self.write(
                            body, path: path, host: host, port: port, to: outbound, on: connection.eventLoop,
                            sent: sent)
                    } catch let e as AgentError {
                        throw e
                    } catch is CancellationError {
                        throw CancellationError()
                    } catch {
                        writeError = error
                    }
                    let deadline = answerTimeout.map { limit in
                        connection.eventLoop.scheduleTask(in: limit) {
                            timedOut.withLockedValue { $0 = true }
                            connection.close(promise: nil)
                        }
                    }
                    defer { deadline?.cancel() }
                    var status: Int?
                    var answer: [UInt8] = []
                    do {
                        for try await part in inbound {
                            switch part {
                            case .head(let h): status = Int(h.status.code)
                            case .body(let b):
                                guard answer.count + b.readableBytes <= maxAnswerBytes else {
                                    throw AgentError(
                                        .invalidRequest, "the device's answer is over \(maxAnswerBytes) bytes")
                                }
                                answer += b.readableBytesView
                            case .end:
                                guard let status else {
                                    throw AgentError(.invalidRequest, "the device answered no status")
                                }
                                return Answer(
                                    status: status, body: answer, certificate: seen.withLockedValue { $0 } ?? "")
                            }
                        }
                    } catch let e as AgentError {
                        throw e
                    } catch {
                        throw writeError ?? error
                    }
                    if let status, writeError != nil {
                        return Answer(status: status, body: answer, certificate: seen.withLockedValue { $0 } ?? "")
                    }
                    if let writeError { throw writeError }
                    if timedOut.withLockedValue({ $0 }), let answerTimeout {
                        throw AgentError(
                            .peerUnavailable,
                            "the LocalSend device at \(host):\(port) did not answer within \(answerTimeout.nanoseconds / 1_000_000_000) s"
                        )
                    }
                    throw AgentError(.peerUnavailable, "the device closed the connection before it answered")
                }
            } onCancel: {
                connection.close(promise: nil)
            }
        } catch let e as AgentError {
            throw e
        } catch {
            if Task.isCancelled { throw CancellationError() }
            if let pinned, let shown = seen.withLockedValue({ $0 }), shown != pinned {
                throw AgentError(
                    .identityMismatch,
                    "the LocalSend device at \(host):\(port) showed certificate \(shown.prefix(16))…, not \(pinned.prefix(16))… as it is known by; not sending",
                    cause: error)
            }
            throw AgentError(
                .peerUnavailable,
                Self.failure(
                    error, at: Self.address(host, port), connecting: false,
                    inHandshake: !shookHands.withLockedValue { $0 }), cause: error)
        }
    }

    /// The request: its head, then its body (streamed piece by piece), then its end.
    ///
    /// A piece is handed to the event loop and written there later; the writer learns that the
    /// connection is full only once the loop has written what came before. So after each piece
    /// the loop is waited for: without that, a fast disk queued hundreds of pieces (plaintext in
    /// the loop's tasks, ciphertext in the socket's pending writes; 70 MiB for a 1 GiB file).
    private static func write(
        _ body: Body?, path: String, host: String, port: Int,
        to outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>, on loop: any EventLoop,
        sent: @Sendable (Int) -> Void
    ) async throws {
        var head = HTTPRequestHead(version: .http1_1, method: body == nil ? .GET : .POST, uri: path)
        head.headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        head.headers.add(name: "Connection", value: "close")
        switch body {
        case .json(let bytes):
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: "\(bytes.count)")
            try await outbound.write(.head(head))
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: bytes))))
        case .stream(let length, let next):
            head.headers.add(name: "Content-Type", value: "application/octet-stream")
            head.headers.add(name: "Content-Length", value: "\(length)")
            try await outbound.write(.head(head))
            var written: Int64 = 0
            while let piece = try await next() {
                written += Int64(piece.readableBytes)
                guard written <= length else { throw AgentError(.conflict, "the file grew while it was sent") }
                try await outbound.write(.body(.byteBuffer(piece)))
                try await loop.submit {}.get()
                sent(piece.readableBytes)
            }
            guard written == length else { throw AgentError(.conflict, "the file shrank while it was sent") }
        case nil:
            try await outbound.write(.head(head))
        }
        try await outbound.write(.end(nil))
    }

    static func address(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// A failed request in a person's words: what happened at `at`, and what to do, never TLS's
    /// or NIO's text (a BoringSSL error names the build machine's paths).
    static func failure(_ error: any Error, at: String, connecting: Bool, inHandshake: Bool = true) -> String {
        let device = "the LocalSend device at \(at)"
        if inHandshake, let tls = TLSFailure(error) {
            switch tls {
            case .plainHTTP:
                return
                    "\(device) speaks plain HTTP (encryption is off in its app); turn Encryption on there and send again"
            case .closedInHandshake:
                return
                    "\(device) closed the connection during the TLS handshake; is it a LocalSend device, with Encryption on?"
            case .refused:
                return
                    "\(device) refused the TLS handshake (it may not take this node's certificate); send again, and check the device"
            }
        }
        if let timeout = error as? HandshakeTimeout {
            return
                "\(device) took the connection but did not finish the TLS handshake within \(timeout.limit.nanoseconds / 1_000_000_000) s; is LocalSend open on it?"
        }
        if let net = NetworkFailure(error) {
            return connecting ? "cannot reach \(device): \(net.connecting)" : net.during(device)
        }
        // TLS ended under an open connection (no close_notify: the app was killed, say).
        if !inHandshake, error is NIOSSLError { return NetworkFailure.closed.during(device) }
        return connecting ? "cannot reach \(device)" : "the connection to \(device) failed"
    }
}

/// The ways a TLS handshake with a LocalSend device fails that a person can act on.
enum TLSFailure {
    /// The device answered in plain HTTP: its app has encryption off.
    case plainHTTP
    /// The connection closed before the handshake ended.
    case closedInHandshake
    /// The device refused ours (an alert), or sent what is not TLS.
    case refused

    init?(_ error: any Error) {
        let stack: String
        switch error {
        case NIOSSLError.uncleanShutdown:
            self = .closedInHandshake
            return
        case NIOSSLError.handshakeFailed(let e): stack = "\(e)"
        case let e as BoringSSLError: stack = "\(e)"
        case is NIOSSLError: stack = ""
        default: return nil
        }
        // An HTTP answer to a ClientHello is read as a TLS record of a version that does not exist.
        self = stack.contains("WRONG_VERSION_NUMBER") || stack.contains("HTTP_REQUEST") ? .plainHTTP : .refused
    }
}

/// Completes `done` once the TLS handshake is over, or fails it when the connection ends first
/// or the handshake takes longer than `timeout` (then the connection is closed: a device that
/// takes the TCP connection and never answers in TLS, e.g. a suspended app, does not hang a send).
private final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let done: EventLoopPromise<Void>
    let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(_ done: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.done = done
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let (done, channel, timeout) = (self.done, context.channel, self.timeout)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            done.fail(HandshakeTimeout(limit: timeout))
            channel.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let e = event as? TLSUserEvent, case .handshakeCompleted = e {
            timer?.cancel()
            done.succeed(())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)  // a second completion of a promise is ignored
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        done.fail(ChannelError.ioOnClosedChannel)
    }
}

/// The device took the connection but did not finish the TLS handshake in time.
struct HandshakeTimeout: Error, CustomStringConvertible {
    let limit: TimeAmount
    var description: String { "no TLS handshake within \(limit.nanoseconds / 1_000_000_000) s" }
}
