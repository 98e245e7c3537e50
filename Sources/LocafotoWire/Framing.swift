/// Frames: a 16-bit big-endian length, then that many bytes of one Noise message
/// (Noise spec §13 suggests exactly this). Lengths 0 and > 65535 cannot be framed.
public enum Framing {
    public static let headerLength = 2

    public static func frame(_ message: [UInt8]) throws -> [UInt8] {
        guard !message.isEmpty, message.count <= WireProtocol.maxFrameLength else {
            throw WireError(.protocolViolation, "a frame must hold 1...65535 bytes, not \(message.count)")
        }
        return [UInt8(message.count >> 8), UInt8(message.count & 0xff)] + message
    }
}

/// Incremental frame parser over a byte stream (bytes may arrive split anywhere).
/// Holds at most one frame plus what arrived after it.
public struct FrameParser: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's payload, or nil when more bytes are needed.
    public mutating func next() throws -> [UInt8]? {
        let available = buffer.count - start
        guard available >= 2 else { return compact(nil) }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard length > 0 else { throw WireError(.protocolViolation, "empty frame") }
        guard available >= 2 + length else { return compact(nil) }
        let frame = Array(buffer[(start + 2)..<(start + 2 + length)])
        start += 2 + length
        return compact(frame)
    }

    /// Bytes received but not yet returned as a frame.
    public var pendingCount: Int { buffer.count - start }

    private mutating func compact(_ r: [UInt8]?) -> [UInt8]? {
        if start > 0 && (start == buffer.count || start > 65536) {
            buffer.removeFirst(start)
            start = 0
        }
        return r
    }
}
