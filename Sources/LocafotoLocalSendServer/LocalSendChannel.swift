import HTTPTypes
import HummingbirdCore
import LocafotoSession
import Logging
import NIOCore
import NIOHTTPTypes
import NIOSSL
import NIOTLS

/// What LocalSend's port lets the LAN hold, modelled on the peer port's (`ConnectionLimits`):
/// without them, 1,500 idle or half-handshaken connections stayed open for good and, at the
/// open-files limit, locked the agent out (protocol/localsend.md "Limits").
package struct LocalSendPortLimits: Sendable {
    /// Connections open at once, and from one IP address.
    package var connections: ConnectionLimits
    /// Time from a connection's start, or an answer's end, to the next request's head
    /// (`HTTPDeadlines`).
    package var idleTimeout: TimeAmount = .seconds(30)
    /// Time a request's body may go without a byte while the node is reading it.
    package var bodyStallTimeout: TimeAmount = .seconds(30)
    /// Time a JSON request (any but an upload) may take from its head to its body's end.
    package var jsonRequestTimeout: TimeAmount = .seconds(60)
    /// JSON bodies (prepare-upload, register) read at once, in bytes, over every connection.
    package var bodyBudgetBytes = 48 << 20
    /// Uploads running at once (one session runs at a time: this is also the session's
    /// share); more wait for a turn without being read.
    package var parallelUploads = 8

    package init() {
        connections = ConnectionLimits()
        // A phone opens a few connections (one per running upload, `parallelUploads`); a desktop
        // app a few more. The handshake deadline is the peer port's: 10 s.
        connections.maxConnections = 128
        connections.maxPerAddress = 24
    }
}

/// Every connection to LocalSend's port: admitted by the port's gate (counted until it closes,
/// refused over the caps), TLS that must end its handshake in time, then HTTP/1.1 whose
/// request bodies must keep arriving. The base is Hummingbird's HTTP/1 channel.
struct LocalSendChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let tls: NIOSSLContext
    let gate: ConnectionGate
    let limits: LocalSendPortLimits
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "?"
        if let (refusal, log) = gate.admit(address) {
            if let log {
                self.logger.notice("LocalSend port: \(Self.say(refusal)); \(log) refused since the last note")
            }
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.inputClosed)
        }
        let gate = self.gate
        channel.closeFuture.whenComplete { _ in gate.release(address) }
        return channel.eventLoop.makeCompletedFuture {
            let ops = channel.pipeline.syncOperations
            try ops.addHandler(SenderGoneWatch(eventLoop: channel.eventLoop))
            // Any certificate is taken: LocalSend's are self-signed, and what names the sender
            // is its hash (`LocalSendContext.caller`), compared with the one it claims.
            try ops.addHandler(
                NIOSSLServerHandler(context: tls) { _, promise in promise.succeed(.certificateVerified) })
            try ops.addHandler(TLSHandshakeDeadline(timeout: limits.connections.handshakeTimeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    static func say(_ refusal: ConnectionCount.Refusal) -> String {
        switch refusal {
        case .full(let n): "\(n) connections are open, the most it takes"
        case .address(let a, let n): "\(a) already has \(n) connections open, the most one address may have"
        }
    }
}

/// Closes a connection whose TLS handshake has not completed `timeout` after it opened: a
/// client that connects and says nothing, or stops half-way, holds no descriptor for long.
final class TLSHandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            disarm()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}

/// The HTTP deadlines of a connection, by what it is doing:
/// - idle (from its start, and from the end of each answer) until a request's head has come:
///   `idle`, however the head trickles in (a byte at a time resets nothing);
/// - reading a request's body: `stall` without a byte, counted only while the node asks for
///   bytes (an upload waiting for its turn, or a slow disk, holds reads back: not the sender's
///   doing);
/// - answering (the request read, the node deciding or the user choosing): none, however long;
/// - and a JSON request (any but an upload) must arrive whole within `whole` of its head, so
///   that a body trickled a byte at a time cannot hold its share of the body budget.
/// A request answered before its body was read (a refusal) leaves the connection idle: what
/// is left of its body is read and dropped under the idle deadline.
/// Hummingbird's own idle timeout is off: it also closed a request whose body the node held
/// back for longer than it.
final class HTTPDeadlines: ChannelDuplexHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart

    private enum Phase { case idle, reading, answering }

    private let idle: TimeAmount
    private let stall: TimeAmount
    private let whole: TimeAmount
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?
    private var wholeTimer: Scheduled<Void>?

    init(idle: TimeAmount, stall: TimeAmount, whole: TimeAmount) {
        self.idle = idle
        self.stall = stall
        self.whole = whole
    }

    func handlerAdded(context: ChannelHandlerContext) { arm(idle, context) }

    func handlerRemoved(context: ChannelHandlerContext) { disarmAll() }

    func channelInactive(context: ChannelHandlerContext) {
        disarmAll()
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if phase == .reading, timer == nil { arm(stall, context) }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            phase = .reading
            disarm()
            if !(head.path ?? "").contains("/upload") {
                let channel = context.channel
                wholeTimer = context.eventLoop.scheduleTask(in: whole) { channel.close(promise: nil) }
            }
        case .body where phase == .reading:
            disarm()  // bytes came: the stall clock starts again at the next read
        case .end where phase == .reading:
            phase = .answering
            disarm()
            wholeTimer?.cancel()
            wholeTimer = nil
        case .body, .end:
            break  // the rest of a request already answered: the idle deadline runs on
        }
        context.fireChannelRead(data)
    }

    /// What was asked for came; until the next `read`, the node holds back.
    func channelReadComplete(context: ChannelHandlerContext) {
        if phase == .reading { disarm() }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // Answered (an answer before the body was read ends the request too).
            phase = .idle
            wholeTimer?.cancel()
            wholeTimer = nil
            arm(idle, context)
        }
        context.write(data, promise: promise)
    }

    private func disarmAll() {
        disarm()
        wholeTimer?.cancel()
        wholeTimer = nil
    }

    private func arm(_ after: TimeAmount, _ context: ChannelHandlerContext) {
        disarm()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: after) { channel.close(promise: nil) }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}

/// Tells when the sender's side of a connection is gone (its FIN, or the connection closed):
/// a prepare-upload waiting for the user is withdrawn then (`LocalSendReception.prepare`),
/// since the apps give up waiting by closing the connection and have no session id to cancel
/// with. It sits first in the pipeline, where TCP's end is seen whatever TLS does with it.
final class SenderGoneWatch: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    let gone: EventLoopPromise<Void>

    init(eventLoop: any EventLoop) { gone = eventLoop.makePromise() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { gone.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        gone.succeed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { gone.succeed() }
}
