import Foundation
import LocafotoMedia

/// How the agent and a media worker talk, over the worker's standard input and output: each
/// message is a JSON header (`MediaRequest` or `MediaReply`) and a body of bytes, each preceded
/// by its length (u32, big-endian). Both ends are this program; the limits still hold, since a
/// worker has decoded photos from strangers and is trusted no further than its answers' sizes.
enum WorkerFraming {
    static let maxHeader = 64 << 10
    /// A request's body is a photo (`Media.maxInputBytes`); a reply's, a JPEG thumbnail.
    static let maxRequestBody = Media.maxInputBytes
    static let maxReplyBody = 16 << 20

    struct Closed: Error {}
    struct TimedOut: Error {}
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func write<H: Encodable>(_ header: H, body: [UInt8], to fd: Int32) throws {
        let json = try JSONEncoder().encode(header)
        var frame: [UInt8] = []
        frame.reserveCapacity(8 + json.count)
        frame += be32(json.count)
        frame += json
        frame += be32(body.count)
        try writeAll(frame, fd)
        try writeAll(body, fd)
    }

    /// Reads one message; `deadline` (poll's milliseconds, -1: none) bounds the wait for its
    /// first byte and for each later one. Closed: the other end closed before a message began.
    static func read<H: Decodable>(_: H.Type, from fd: Int32, maxBody: Int, waitMilliseconds: Int32 = -1) throws -> (
        H, [UInt8]
    ) {
        let headerLength = try length(try readExactly(4, fd, wait: waitMilliseconds, eofIsClosed: true), max: maxHeader)
        let json = try readExactly(headerLength, fd, wait: waitMilliseconds)
        let bodyLength = try length(try readExactly(4, fd, wait: waitMilliseconds), max: maxBody)
        let body = try readExactly(bodyLength, fd, wait: waitMilliseconds)
        do {
            return (try JSONDecoder().decode(H.self, from: Data(json)), body)
        } catch {
            throw Malformed(description: "an undecodable header: \(error)")
        }
    }

    /// `d` as poll's milliseconds (at least 1 for a positive duration; 0 would not wait at all).
    static func milliseconds(_ d: Duration) -> Int32 {
        let (seconds, atto) = d.components
        let ms = seconds * 1000 + atto / 1_000_000_000_000_000
        return Int32(clamping: ms == 0 && d > .zero ? 1 : ms)
    }

    private static func be32(_ n: Int) -> [UInt8] {
        [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
    }

    private static func length(_ b: [UInt8], max: Int) throws -> Int {
        let n = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        guard n <= max else { throw Malformed(description: "a part of \(n) bytes; at most \(max) are allowed") }
        return n
    }

    private static func writeAll(_ bytes: [UInt8], _ fd: Int32) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw Closed() }
            done += n
        }
    }

    private static func readExactly(_ count: Int, _ fd: Int32, wait: Int32, eofIsClosed: Bool = false) throws -> [UInt8]
    {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            if wait >= 0 {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, wait)
                if r < 0, errno == EINTR { continue }
                guard r > 0 else { throw TimedOut() }
            }
            let n = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                if done == 0 && eofIsClosed { throw Closed() }
                throw Malformed(description: "the message ends after \(done) of \(count) bytes")
            }
            done += n
        }
        return out
    }
}
