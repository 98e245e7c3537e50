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
        a.controllers.events.addRoutes(to: &t, web: web)
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
    /// `GET /v1/relay`: a relay's queues, counters and limits; on a node, not found.
    func relayStatus() throws -> ControlResponse {
        guard let relayStore else {
            throw AgentError(.notFound, "this agent is not a relay; start one with `locafoto relay`")
        }
        do { return .json(try relayStore.status()) } catch let e as RelayError { throw AgentError(.io, e.message) }
    }
}
