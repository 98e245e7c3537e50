import Foundation
import Hummingbird
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoWeb
import NIOCore

/// `GET /v1/events`: what happens in the node, as it happens (protocol/control-api.md
/// "Events"), each event made a line by `ControlEvent(_:)`.
package struct EventsController: Sendable {
    let events: EventHub

    package init(events: EventHub) { self.events = events }

    /// `web`: the web app's access, when the table is the web app's.
    package func addRoutes(to t: inout RouteTable, web: WebAccess?) {
        t.get("/v1/events") { r in try stream(r, web: web) }
    }

    /// The event stream: JSON lines, or server-sent events when the client asks for them.
    /// The first event is `ready`: from then on the reader misses nothing (a client subscribes,
    /// waits for it, then acts, e.g. accepts an offer and follows its import).
    /// `web`: the web app's access, whose session (the request's cookie) ends the stream when it
    /// ends (logout, evicted, expired); nil on the control socket.
    func stream(_ r: ControlRequest, web: WebAccess?) throws -> ControlResponse {
        let kinds = r.query["kinds"].map { $0.split(separator: ",").map(String.init) } ?? []
        if let unknown = kinds.first(where: { k in
            !ControlEvent.Kind.allCases.contains { $0.rawValue == k || $0.rawValue.hasPrefix(k + ".") }
        }) {
            throw AgentError(
                .invalidRequest,
                "unknown event kind '\(unknown)'; kinds are \(ControlEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let sse = r.wantsEventStream
        // WebGuard let the request in: one of the values sent under the name is live.
        let ended: (@Sendable () async -> Void)? = web.map { web in
            let session = cookieValues(web.cookieName, in: r.cookies.lines).first(where: web.isSession) ?? ""
            return { await web.untilEnded(session) }
        }
        let (stream, end) = events.subscription()
        let body = ResponseBody { writer in
            var last: Int?
            func write(_ e: ControlEvent) async throws {
                let json = try ControlJSON.lineEncoder.encode(e)
                var buffer = ByteBuffer()
                if sse {
                    buffer.writeString("id: \(e.seq)\nevent: \(e.kind.rawValue)\ndata: ")
                    buffer.writeBytes(json)
                    buffer.writeString("\n\n")
                } else {
                    buffer.writeBytes(json)
                    buffer.writeString("\n")
                }
                try await writer.write(buffer)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The session's end, watched for as long as the stream is written and no longer.
                if let ended {
                    group.addTask {
                        await ended()
                        end()
                    }
                }
                for await published in stream {
                    let e = ControlEvent(published)
                    if let last, e.seq > last + 1 {
                        var missed = ControlEvent(seq: e.seq - 1, at: e.at, kind: .missed)
                        missed.message = "\(e.seq - last - 1) event(s) were dropped because this reader fell behind"
                        try await write(missed)
                    }
                    last = e.seq
                    guard
                        e.kind == .ready || kinds.isEmpty
                            || kinds.contains(where: { e.kind.rawValue == $0 || e.kind.rawValue.hasPrefix($0 + ".") })
                    else { continue }
                    try await write(e)
                }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return .streaming(sse ? "text/event-stream" : "application/x-ndjson", body)
    }
}
