import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import LocafotoSession

/// The decoder the peer pipeline installs (`PeerChannel.configure`), tested as it runs: inside a
/// channel pipeline, fed whole, in pieces and one byte at a time.
@Suite struct FrameDecoderTests {
    static func frame(_ payload: [UInt8]) -> ByteBuffer {
        var b = ByteBuffer()
        b.writeInteger(UInt16(payload.count))
        b.writeBytes(payload)
        return b
    }

    static func budget(afterHandshake: Bool) -> FrameBudget {
        let b = FrameBudget(frameTimeout: .seconds(30))
        if afterHandshake { b.maxFrame = Int(UInt16.max) }
        return b
    }

    @Test("frames come out whole and in order however the stream is cut (byte by byte included)")
    func dripFed() throws {
        let payloads: [[UInt8]] = [
            [1], Array(repeating: 7, count: 300), Array(0..<255), Array(repeating: 9, count: 2_000),
        ]
        var stream = ByteBuffer()
        for p in payloads { stream.writeImmutableBuffer(Self.frame(p)) }
        let expected = payloads.map { ByteBuffer(bytes: $0) }
        // The verifier feeds the input whole, then byte by byte, then in random pieces, and
        // checks that the decoder leaves nothing behind.
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [(stream, expected)],
            decoderFactory: { FrameDecoder(budget: Self.budget(afterHandshake: true)) })
    }

    @Test("the largest frame (65,535 bytes) passes after the handshake")
    func largestFrame() throws {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(budget: Self.budget(afterHandshake: true))))
        let largest = [UInt8](repeating: 9, count: 65_535)
        var b = Self.frame(largest)
        b.writeImmutableBuffer(Self.frame([1]))
        try channel.writeInbound(b)
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: largest))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1]))
    }

    @Test("an empty frame is a protocol violation")
    func emptyFrame() throws {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(budget: Self.budget(afterHandshake: true))))
        var b = Self.frame([1, 2, 3])
        b.writeInteger(UInt16(0))
        #expect(throws: FramingViolation.self) { try channel.writeInbound(b) }
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1, 2, 3]))
    }

    @Test("before the handshake ends, a frame larger than a handshake message is refused from its length alone")
    func handshakeCap() throws {
        let budget = Self.budget(afterHandshake: false)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(budget: budget)))
        var b = ByteBuffer()
        b.writeInteger(UInt16(ConnectionLimits.maxHandshakeFrame + 1))
        #expect(throws: FramingViolation.self) { try channel.writeInbound(b) }

        let ok = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(budget: Self.budget(afterHandshake: false))))
        let largest = [UInt8](repeating: 1, count: ConnectionLimits.maxHandshakeFrame)
        try ok.writeInbound(Self.frame(largest))
        #expect(try ok.readInbound(as: ByteBuffer.self)?.readableBytes == largest.count)
    }

    @Test("a frame still incomplete a whole frame timeout after its first byte closes the connection")
    func trickledFrame() throws {
        let loop = EmbeddedEventLoop()
        let budget = Self.budget(afterHandshake: true)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(budget: budget)), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        budget.readOutstanding = true  // the session is waiting for the peer
        var b = ByteBuffer()
        b.writeInteger(UInt16(10))
        b.writeBytes([1, 2, 3])
        try channel.writeInbound(b)
        loop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(bytes: [4]))  // a byte more does not reset the clock
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test("a frame held back while the session is not reading (back-pressure) gets another period")
    func backPressure() throws {
        let loop = EmbeddedEventLoop()
        let budget = Self.budget(afterHandshake: true)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(budget: budget)), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        budget.readOutstanding = false
        var b = ByteBuffer()
        b.writeInteger(UInt16(4))
        b.writeBytes([1])
        try channel.writeInbound(b)
        loop.advanceTime(by: .seconds(31))
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(bytes: [2, 3, 4]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1, 2, 3, 4]))
        _ = try channel.finish()
    }
}
