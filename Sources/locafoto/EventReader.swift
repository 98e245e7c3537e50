import Foundation
import LocafotoControl
import LocafotoSession
import NIOCore
import NIOHTTP1

/// The agent's event stream as the CLI reads it: `next()` blocks until the next event, and
/// returns nil once the agent ends the stream (it is stopping). Lines are bounded: one over
/// `maxLine` bytes ends the stream with an error instead of growing memory.
final class EventReader: @unchecked Sendable {
    static let maxLine = 1 << 20
    private let condition = NSCondition()
    private var events: [ControlEvent] = []
    private var ended = false
    private var failure: String?
    var channel: (any Channel)?

    private static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()

    /// The next event; nil when the stream ended.
    func next() throws -> ControlEvent? {
        condition.lock()
        defer { condition.unlock() }
        while events.isEmpty && !ended { condition.wait() }
        if !events.isEmpty { return events.removeFirst() }
        if let failure { throw CLIError(failure) }
        return nil
    }

    func close() {
        channel?.close(promise: nil)
    }

    fileprivate func deliver(line: ArraySlice<UInt8>) {
        guard !line.isEmpty else { return }
        guard let event = try? Self.decoder.decode(ControlEvent.self, from: Data(line)) else {
            // A kind this CLI does not know (a newer agent) is skipped, not an error.
            return
        }
        condition.lock()
        events.append(event)
        condition.signal()
        condition.unlock()
    }

    fileprivate func end(_ failure: String?) {
        condition.lock()
        if !ended {
            ended = true
            self.failure = failure
        }
        condition.broadcast()
        condition.unlock()
    }
}

/// Splits the streamed body into lines for the reader; an error answer becomes its message.
final class EventLineSplitter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    private let reader: EventReader
    private var pending: [UInt8] = []
    private var status = 0

    init(reader: EventReader) {
        self.reader = reader
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(let buffer):
            pending += buffer.readableBytesView
            guard status == 200 else { return }
            while let nl = pending.firstIndex(of: 0x0A) {
                reader.deliver(line: pending[..<nl])
                pending.removeSubrange(...nl)
            }
            if pending.count > EventReader.maxLine {
                reader.end("an event from the agent is longer than \(EventReader.maxLine) bytes; the stream was closed")
                context.close(promise: nil)
            }
        case .end:
            if status == 200 {
                reader.end(nil)
            } else {
                struct Answer: Decodable {
                    struct E: Decodable { var message: String }
                    var error: E
                }
                let message = (try? JSONDecoder().decode(Answer.self, from: Data(pending)))?.error.message
                reader.end(message ?? "the agent refused the event stream (\(status))")
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        reader.end(nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        reader.end(
            "the agent's event stream broke (\(NetworkFailure(error)?.during("the agent") ?? "it sent what is not an event"))"
        )
        context.close(promise: nil)
    }
}
