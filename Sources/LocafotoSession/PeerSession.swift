import LocafotoFormats
import LocafotoNoise
import LocafotoWire
import NIOCore
import Synchronization

/// An authenticated session after the handshake: the peer, the channel and both directions.
/// The relay sessions pass it around whole. One task reads and one task writes at a time
/// (a sender reads results on a second task while it streams); hence @unchecked Sendable.
package final class PeerSession: @unchecked Sendable {
    package let peer: PeerIdentity
    package let channel: any Channel
    package var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    package var reader: SecureReader
    package var writer: SecureWriter
    /// Transport frames taken from the channel so far, and the connection's count of frames
    /// decoded (`FrameBudget.transportFrames`, once `watchBacklog` found it).
    private var framesRead = 0
    private var budget: FrameBudget?
    /// A message read ahead (while a receiver waited for its user's decision), returned first by
    /// `next`; `.some(nil)`: the peer had closed.
    private var readAhead: WireMessage??

    package init(
        peer: PeerIdentity, channel: any Channel, iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        reader: SecureReader, writer: SecureWriter
    ) {
        self.peer = peer
        self.channel = channel
        self.iterator = iterator
        self.reader = reader
        self.writer = writer
    }

    package func send(_ message: WireMessage) async throws { try await writer.send(message) }

    /// The next message; nil when the peer closed the connection.
    package func next() async throws -> WireMessage? {
        if let m = readAhead {
            readAhead = nil
            return m
        }
        guard let frame = try await iterator.next() else { return nil }
        framesRead += 1
        return try reader.open(frame)
    }

    /// Makes `m` the next message `next` returns.
    package func unread(_ m: WireMessage?) { readAhead = .some(m) }

    /// Finds the connection's frame count, for `hasBacklog`.
    package func watchBacklog() async {
        budget = try? await channel.pipeline.handler(type: HandshakeGuard.self).map(\.budget).get()
    }

    /// Whether frames from the peer have arrived that this session has not read yet: the peer is
    /// ahead, so a receiver can let verified photos wait for one commit with the next ones.
    /// False when unknown (`watchBacklog` not called).
    package var hasBacklog: Bool {
        guard let budget else { return false }
        return budget.transportFrames.load(ordering: .relaxed) > framesRead
    }

    /// The next message that is not PING/PONG (a PING is answered).
    package func nextSkippingPings() async throws -> WireMessage? {
        while let m = try await next() {
            switch m {
            case .ping: try await send(.pong)
            case .pong: continue
            default: return m
            }
        }
        return nil
    }
}
