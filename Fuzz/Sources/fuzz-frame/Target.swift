// Frames on TCP (protocol/framing.md): the session layer's FrameDecoder (SwiftNIO, what sessions use)
// and LocafotoWire's FrameParser, fed the same byte stream split into fuzzer-chosen pieces.
// Properties: both agree with a reference reading of the stream (same frames, same refusal of
// an empty frame), never return a frame of 0 or more than 65535 bytes, and re-framing the
// frames gives back the bytes they came from.
import FuzzSupport
import LocafotoWire
import NIOCore
import NIOEmbedded

@testable import LocafotoSession

/// The reference: frames in the whole stream, and whether an empty frame stops it.
func reference(_ s: [UInt8]) -> (frames: [[UInt8]], emptyFrame: Bool) {
    var frames: [[UInt8]] = []
    var i = 0
    while s.count - i >= 2 {
        let n = Int(s[i]) << 8 | Int(s[i + 1])
        if n == 0 { return (frames, true) }
        guard s.count - i - 2 >= n else { break }
        frames.append(Array(s[(i + 2)..<(i + 2 + n)]))
        i += 2 + n
    }
    return (frames, false)
}

func pieces(_ stream: [UInt8], sizes: [Int]) -> [ArraySlice<UInt8>] {
    var out: [ArraySlice<UInt8>] = []
    var i = 0
    var k = 0
    while i < stream.count {
        // At most 256 pieces (the last takes the rest): 1-byte pieces of a whole stream are slow
        // through a channel pipeline and add nothing after the first few hundred boundaries.
        let n = k == 255 ? stream.count - i : min(sizes[k % sizes.count], stream.count - i)
        out.append(stream[i..<(i + n)])
        i += n
        k += 1
    }
    return out
}

func fuzz(_ input: [UInt8]) {
    var r = FuzzReader(input)
    // Piece sizes 1...4096 (TCP delivers any split), then the stream.
    let sizes = (0..<4).map { _ in r.u16() % 4096 + 1 }
    let stream = r.rest()
    let expected = reference(stream)
    for f in expected.frames { check(!f.isEmpty && f.count <= WireProtocol.maxFrameLength, "frame length") }
    let reframed = expected.frames.flatMap { try! Framing.frame($0) }
    check(Array(stream.prefix(reframed.count)) == reframed, "Framing.frame does not give back the framed bytes")

    // LocafotoWire.FrameParser
    var parser = FrameParser()
    var parsed: [[UInt8]] = []
    var parserRefused = false
    feed: for piece in pieces(stream, sizes: sizes) {
        parser.append(piece)
        while true {
            do {
                guard let frame = try parser.next() else { break }
                parsed.append(frame)
            } catch {
                checkError(error, isOneOf: [WireError.self], "FrameParser.next")
                parserRefused = true
                break feed
            }
        }
    }
    check(parsed == expected.frames, "FrameParser frames differ from the reference")
    check(parserRefused == expected.emptyFrame, "FrameParser refusal differs from the reference")

    // LocafotoSession.FrameDecoder inside a channel pipeline, as the agent installs it.
    // After the handshake (frames up to 65,535 bytes): the reference reads that far too. The
    // pre-handshake cap is checked below.
    let budget = FrameBudget(frameTimeout: .seconds(30))
    budget.maxFrame = Int(UInt16.max)
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(budget: budget)))
    var decoded: [[UInt8]] = []
    var decoderRefused = false
    func drain() {
        while let b = try? channel.readInbound(as: ByteBuffer.self) { decoded.append(Array(b.readableBytesView)) }
    }
    for piece in pieces(stream, sizes: sizes) {
        do {
            try channel.writeInbound(channel.allocator.buffer(bytes: piece))
        } catch {
            checkError(error, isOneOf: [FramingViolation.self], "FrameDecoder")
            decoderRefused = true
        }
        drain()
        if decoderRefused { break }
    }
    if !decoderRefused {
        do { _ = try channel.finish(acceptAlreadyClosed: true) } catch {
            // Leftover bytes of an incomplete frame at EOF are reported by NIO, not a crash.
            check(error is ByteToMessageDecoderError || error is FramingViolation, "FrameDecoder at EOF threw \(error)")
        }
        drain()
    } else {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
    // The agent's pipeline cancels a pending frame deadline when the connection closes; here
    // nothing else would, and the scheduled close would keep the channel alive.
    budget.frameDeadline?.cancel()
    budget.frameDeadline = nil
    check(decoded == expected.frames, "FrameDecoder frames differ from the reference")
    check(decoderRefused == expected.emptyFrame, "FrameDecoder refusal differs from the reference")
}

@_cdecl("fuzz_frame_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
