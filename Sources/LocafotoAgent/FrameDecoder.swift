import NIOCore

/// Splits the TCP byte stream into frames: 16-bit big-endian length, then one Noise message
/// (protocol/framing.md). A zero length is a protocol violation; 65535 is the most a frame can
/// hold, so no frame can exceed Noise's limit. Before the handshake ends a frame may hold at
/// most `ConnectionLimits.maxHandshakeFrame` bytes, and every frame must arrive whole within
/// the budget's frame timeout of its first byte (a peer trickling a byte every few seconds
/// cannot hold a connection and its buffer for ever).
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    let budget: FrameBudget

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) else {
            if buffer.readableBytes > 0 { armDeadline(context) }
            return .needMoreData
        }
        guard length > 0 else { throw FramingViolation(description: "peer sent an empty frame") }
        guard Int(length) <= budget.maxFrame else {
            throw FramingViolation(description: "peer announced a frame of \(length) bytes before the handshake ended (at most \(budget.maxFrame))")
        }
        guard buffer.readableBytes >= 2 + Int(length) else {
            armDeadline(context)
            return .needMoreData
        }
        budget.frameDeadline?.cancel()
        budget.frameDeadline = nil
        buffer.moveReaderIndex(forwardBy: 2)
        context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: Int(length))!))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    private func armDeadline(_ context: ChannelHandlerContext) {
        guard budget.frameDeadline == nil else { return }
        Self.arm(budget, channel: context.channel, loop: context.eventLoop)
    }

    /// At the deadline the connection closes if the session was waiting for the peer; if the
    /// session had stopped reading (back-pressure), the frame gets another period.
    private static func arm(_ budget: FrameBudget, channel: any Channel, loop: any EventLoop) {
        budget.frameDeadline = loop.scheduleTask(in: budget.frameTimeout) {
            if budget.readOutstanding {
                channel.close(promise: nil)
            } else {
                arm(budget, channel: channel, loop: loop)
            }
        }
    }
}

struct FramingViolation: Error, CustomStringConvertible {
    var description: String
}
/// Closes a connection that has been silent for too long (a peer that vanished without a FIN,
/// or one that stalls on purpose). Peers waiting on a decision keep the line alive with PING.
final class CloseOnIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
