import Foundation
import HTTPTypes
import Hummingbird
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoErrors
import LocafotoMedia
import LocafotoNode
import LocafotoRelay
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWeb
import LocafotoWire
import NIOCore
import ServiceLifecycle

/// The control API's route table (protocol/control-api.md): every call the CLI, scripts and
/// interfaces may make, one line each, matched by Hummingbird's router. Handlers get a
/// `ControlRequest` (path parameters, query, body) and answer JSON; errors leave through
/// `ControlErrorMiddleware` in one shape.
enum ControlRoutes {
    /// The table for the control socket, or with `web` for the web app: the same /v1 calls
    /// behind `WebGuard`, plus the app's pages (WebRoutes.swift). Minting login codes is for the
    /// control socket only.
    static func router(for agent: Agent, web: WebAccess? = nil) -> Router<ControlContext> {
        let router = Router(context: ControlContext.self)
        if let web { router.add(middleware: WebGuard(access: web)) }
        router.add(middleware: ControlErrorMiddleware())
        var t = RouteTable(router: router)
        let a = agent
        if let web {
            addWebPages(&t, web)
        } else {
            t.post("/v1/web/login") { _ in try a.webLoginRoute() }
        }

        // Node and peers
        t.get("/v1/status") { _ in .json(a.status) }
        t.get("/v1/id") { _ in .json(a.idInfo) }
        t.get("/v1/doctor") { _ in .json(a.doctor()) }
        t.get("/v1/events") { r in try a.eventStream(r, web: web) }
        a.controllers.peers.addRoutes(to: &t)

        // Sending
        // From the web app, photos come as uploads or from the vault, never as paths.
        a.controllers.transfers.addRoutes(to: &t, filePaths: web == nil)
        t.get("/v1/relay") { _ in try a.relayStatus() }

        // Receiving
        a.controllers.inbox.addRoutes(to: &t)
        a.controllers.localSend.addRoutes(to: &t)

        // Vault: its key, imports, shared keys, backups, bundles. Calls that read or write files
        // by path, or show a secret key, are for the control socket only: a web session (a
        // cookie, which a browser also sends to other servers on 127.0.0.1) must not reach the
        // user's files or keys through them.
        a.controllers.vault.addRoutes(to: &t, filePaths: web == nil)
        a.controllers.imports.addRoutes(to: &t, filePaths: web == nil)
        if web == nil {
            a.controllers.keys.addRoutes(to: &t)
            a.controllers.bundles.addRoutes(to: &t)
        }

        // Filters and compression in the vault
        a.controllers.filters.addRoutes(to: &t)

        // Organising the vault; exports to a path for the control socket only.
        a.controllers.photos.addRoutes(to: &t, filePaths: web == nil)
        a.controllers.albums.addRoutes(to: &t)
        return router
    }
}

// MARK: handlers with more than a line

extension Agent {
    /// `?after=N&wait=S`: answer once the phase is past N, or after S seconds (≤ 60).
    func relayStatus() throws -> ControlResponse {
        guard let relayStore else {
            throw AgentError(.notFound, "this agent is not a relay; start one with `locafoto relay`")
        }
        do { return .json(try relayStore.status()) } catch let e as RelayError { throw AgentError(.io, e.message) }
    }

    /// The event stream: JSON lines, or server-sent events when the client asks for them.
    /// The first event is `ready`: from then on the reader misses nothing (a client subscribes,
    /// waits for it, then acts, e.g. accepts an offer and follows its import).
    /// `web`: the web app's access, whose session (the request's cookie) ends the stream when it
    /// ends (logout, evicted, expired); nil on the control socket.
    func eventStream(_ r: ControlRequest, web: WebAccess? = nil) throws -> ControlResponse {
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
