import NIOCore

/// Splits the TCP byte stream into frames: 16-bit big-endian length, then one Noise message
/// (protocol/framing.md). A zero length is a protocol violation; 65535 is the most a frame can
/// hold, so no frame can exceed Noise's limit. Before the handshake ends a frame may hold at
/// most `ConnectionLimits.maxHandshakeFrame` bytes, and every frame must arrive whole within
/// the budget's frame timeout of its first byte (a peer trickling a byte every few seconds
/// cannot hold a connection and its buffer for ever).
package struct FrameDecoder: ByteToMessageDecoder {
    package typealias InboundOut = ByteBuffer

    package let budget: FrameBudget

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) else {
            if buffer.readableBytes > 0 { frameStarted(context) }
            return .needMoreData
        }
        guard length > 0 else { throw FramingViolation(description: "peer sent an empty frame") }
        guard Int(length) <= budget.maxFrame else {
            throw FramingViolation(
                description:
                    "peer announced a frame of \(length) bytes before the handshake ended (at most \(budget.maxFrame))")
        }
        guard buffer.readableBytes >= 2 + Int(length) else {
            frameStarted(context)
            return .needMoreData
        }
        budget.partialSince = nil
        buffer.moveReaderIndex(forwardBy: 2)
        context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: Int(length))!))
        return .continue
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    private func frameStarted(_ context: ChannelHandlerContext) {
        guard budget.partialSince == nil else { return }
        let now = context.eventLoop.now
        budget.partialSince = now
        if budget.frameDeadline == nil {
            Self.check(budget, at: now + budget.frameTimeout, channel: context.channel, loop: context.eventLoop)
        }
    }

    /// At `deadline`: a frame begun a whole timeout ago and still incomplete closes the
    /// connection if the session was waiting for the peer; if the session had stopped reading
    /// (back-pressure), the frame gets another period. A later frame is checked at its own time.
    private static func check(
        _ budget: FrameBudget, at deadline: NIODeadline, channel: any Channel, loop: any EventLoop
    ) {
        budget.frameDeadline = loop.scheduleTask(deadline: deadline) {
            budget.frameDeadline = nil
            guard let since = budget.partialSince else { return }
            let due = since + budget.frameTimeout
            if due > loop.now {
                check(budget, at: due, channel: channel, loop: loop)
            } else if budget.readOutstanding {
                // Said to the session before the close, so it reports the deadline and not a
                // peer that closed the connection.
                let seconds = budget.frameTimeout.nanoseconds / 1_000_000_000
                channel.pipeline.fireErrorCaught(
                    FramingViolation(
                        description:
                            "a frame took longer than the frame timeout (\(seconds) s) to arrive; the connection was closed"
                    ))
                channel.close(promise: nil)
            } else {
                budget.partialSince = loop.now
                check(budget, at: budget.partialSince! + budget.frameTimeout, channel: channel, loop: loop)
            }
        }
    }
}

package struct FramingViolation: Error, CustomStringConvertible {
    package var description: String
}
/// Closes a connection that has been silent for too long (a peer that vanished without a FIN,
/// or one that stalls on purpose). Peers waiting on a decision keep the line alive with PING.
package final class CloseOnIdle: ChannelInboundHandler, Sendable {
    package typealias InboundIn = NIOAny

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
