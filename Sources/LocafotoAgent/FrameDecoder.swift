import NIOCore

/// Splits the TCP byte stream into frames: 16-bit big-endian length, then one Noise message
/// (protocol/framing.md). A zero length is a protocol violation; 65535 is the most a frame can
/// hold, so no frame can exceed Noise's limit.
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) else { return .needMoreData }
        guard length > 0 else { throw FramingViolation() }
        guard buffer.readableBytes >= 2 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 2)
        context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: Int(length))!))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

struct FramingViolation: Error, CustomStringConvertible {
    var description: String { "peer sent an empty frame" }
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
