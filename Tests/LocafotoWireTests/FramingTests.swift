import LocafotoTestSupport
import LocafotoWire
import Testing

@Suite("Framing")
struct FramingTests {
    typealias S = WireTestSupport

    static func payload(_ n: Int, _ seed: UInt8 = 1) -> [UInt8] {
        (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    /// Drains every complete frame.
    static func drain(_ parser: inout FrameParser) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let f = try parser.next() { out.append(f) }
        return out
    }

    @Test func frameLayout() throws {
        #expect(try Framing.frame([0x08]) == [0x00, 0x01, 0x08])
        #expect(try Framing.frame(Self.payload(256)).prefix(2) == [0x01, 0x00])
        let max = try Framing.frame(Self.payload(65535))
        #expect(max.count == 65537)
        #expect(max.prefix(2) == [0xFF, 0xFF])
        #expect(Array(max.dropFirst(2)) == Self.payload(65535))
        #expect(Framing.headerLength == 2)
        #expect(WireProtocol.maxFrameLength == 65535)
    }

    @Test func unframeableLengths() {
        #expect(S.outcome { _ = try Framing.frame([]) } == "protocol_violation")
        #expect(S.outcome { _ = try Framing.frame(Self.payload(65536)) } == "protocol_violation")
        #expect(S.outcome { _ = try Framing.frame(Self.payload(100_000)) } == "protocol_violation")
        #expect(S.outcome { _ = try Framing.frame(Self.payload(65535)) } == "ok")
    }

    static let sizes = [1, 2, 13, 255, 256, 1000, 65534, 65535]

    @Test func wholeFramesOneAtATime() throws {
        for n in Self.sizes {
            var parser = FrameParser()
            #expect(try parser.next() == nil)
            parser.append(try Framing.frame(Self.payload(n)))
            #expect(try parser.next() == Self.payload(n))
            #expect(try parser.next() == nil)
            #expect(parser.pendingCount == 0)
        }
    }

    @Test func byteByByte() throws {
        var parser = FrameParser()
        let frames = try [3, 1, 300, 2].enumerated().map {
            try Framing.frame(Self.payload($0.element, UInt8($0.offset)))
        }
        var got: [[UInt8]] = []
        var fed = 0
        for frame in frames {
            for (i, byte) in frame.enumerated() {
                parser.append([byte])
                fed += 1
                let f = try parser.next()
                if i == frame.count - 1 {
                    #expect(f != nil, "frame complete after its last byte")
                    got.append(f ?? [])
                } else {
                    #expect(f == nil, "no frame before its last byte")
                    #expect(parser.pendingCount == i + 1)
                }
            }
        }
        #expect(got == [3, 1, 300, 2].enumerated().map { Self.payload($0.element, UInt8($0.offset)) })
        #expect(parser.pendingCount == 0)
    }

    @Test func severalFramesInOneBuffer() throws {
        let payloads = Self.sizes.enumerated().map { Self.payload($0.element, UInt8($0.offset)) }
        var stream: [UInt8] = []
        for p in payloads { stream += try Framing.frame(p) }
        var parser = FrameParser()
        parser.append(stream)
        #expect(try Self.drain(&parser) == payloads)
        #expect(parser.pendingCount == 0)
        // And with the start of a further frame after them.
        parser.append(stream + [0x00, 0x05, 1, 2])
        #expect(try Self.drain(&parser) == payloads)
        #expect(parser.pendingCount == 4)
        parser.append([3, 4, 5])
        #expect(try parser.next() == [1, 2, 3, 4, 5])
        #expect(parser.pendingCount == 0)
    }

    @Test func randomSplits() throws {
        var rng = S.RNG(42)
        for round in 0..<20 {
            let payloads = (0..<Int.random(in: 1...12, using: &rng)).map { i -> [UInt8] in
                let n = [1, 2, 17, 1000, 65535][Int.random(in: 0..<5, using: &rng)]
                return Self.payload(n, UInt8(truncatingIfNeeded: i + round))
            }
            var stream: [UInt8] = []
            for p in payloads { stream += try Framing.frame(p) }
            var parser = FrameParser()
            var got: [[UInt8]] = []
            var i = 0
            while i < stream.count {
                let n = min(stream.count - i, [1, 2, 3, 100, 5000, 70_000][Int.random(in: 0..<6, using: &rng)])
                parser.append(stream[i..<i + n])
                i += n
                got += try Self.drain(&parser)
            }
            #expect(got == payloads)
            #expect(parser.pendingCount == 0)
        }
    }

    @Test func zeroLengthFrameIsRejected() throws {
        var parser = FrameParser()
        parser.append([0x00, 0x00])
        #expect(S.outcome { _ = try parser.next() } == "protocol_violation")

        // Also when it follows a good frame.
        var p2 = FrameParser()
        p2.append(try Framing.frame([1, 2, 3]) + [0x00, 0x00, 0x00, 0x01, 0x09])
        #expect(try p2.next() == [1, 2, 3])
        #expect(S.outcome { _ = try p2.next() } == "protocol_violation")
    }

    @Test func incompleteFramesWait() throws {
        var parser = FrameParser()
        parser.append([0xFF])
        #expect(try parser.next() == nil)
        parser.append([0xFF])
        #expect(try parser.next() == nil)
        parser.append(Self.payload(65534))
        #expect(try parser.next() == nil)
        #expect(parser.pendingCount == 65536)
        parser.append([0x42])
        #expect(try parser.next() == Self.payload(65534) + [0x42])
        #expect(parser.pendingCount == 0)
    }

    /// Many maximum frames through one parser: the buffer is compacted and frames stay intact.
    @Test func manyLargeFrames() throws {
        var parser = FrameParser()
        for i in 0..<10 {
            let p = Self.payload(65535, UInt8(i))
            let f = try Framing.frame(p)
            parser.append(f.prefix(40_000))
            #expect(try parser.next() == nil)
            parser.append(f.dropFirst(40_000))
            #expect(try parser.next() == p)
        }
        #expect(parser.pendingCount == 0)
    }
}
