import NIOCore
import NIOPosix

/// The pipeline of every peer connection, inbound or outbound: idle timeout, framing, then
/// an async channel of frames for the session code.
package enum PeerChannel {
    package typealias Async = NIOAsyncChannel<ByteBuffer, ByteBuffer>
    /// A peer silent for this long is gone (`--idle-timeout`; default 60 s). Waiting sides
    /// exchange PING/PONG every 20 s, and a receiver PINGs at least every 20 s while data
    /// flows, so a live peer is never silent that long; a cut link is noticed after it.
    /// The handshake must end within `limits.handshakeTimeout` and each frame arrive whole
    /// within `limits.frameTimeout` (`ConnectionLimits`).
    package static func configure(_ channel: any Channel, idleTimeout: TimeAmount, limits: ConnectionLimits)
        -> EventLoopFuture<Async>
    {
        channel.eventLoop.makeCompletedFuture {
            let ops = channel.pipeline.syncOperations
            let budget = FrameBudget(frameTimeout: limits.frameTimeout)
            try ops.addHandler(ReadWatch(budget: budget))
            try ops.addHandler(IdleStateHandler(readTimeout: idleTimeout))
            try ops.addHandler(CloseOnIdle())
            try ops.addHandler(ByteToMessageHandler(FrameDecoder(budget: budget)))
            try ops.addHandler(HandshakeGuard(budget: budget, timeout: limits.handshakeTimeout))
            return try Async(wrappingChannelSynchronously: channel)
        }
    }
}

/// Lets the sender hand its only inbound iterator (and the receive cipher) to the task that
/// reads results, after the handshake and decision were read on the session's task.
/// Exactly one task uses it at a time; hence @unchecked Sendable.
package final class InboundHandOff: @unchecked Sendable {
    package var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    package var reader: SecureReader

    package init(iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, reader: SecureReader) {
        self.iterator = iterator
        self.reader = reader
    }
}
