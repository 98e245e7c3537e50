import Foundation
import HTTPTypes
import Hummingbird
import LocafotoClock
import LocafotoControl
import LocafotoControlServer
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoMediaWorker
import LocafotoNode
import LocafotoSession
import LocafotoWeb
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

extension ControlRoutes {
    /// The web app's own pages; everything else it does goes through the /v1 calls.
    static func addWebPages(_ t: inout RouteTable, _ web: WebAccess) {
        t.get("/") { _ in .page(WebAssets.indexHTML) }
        t.get("/assets/app.js") { _ in .asset(WebAssets.appJS, "text/javascript; charset=utf-8") }
        t.get("/assets/login.js") { _ in .asset(WebAssets.loginJS, "text/javascript; charset=utf-8") }
        t.get("/assets/app.css") { _ in .asset(WebAssets.appCSS, "text/css; charset=utf-8") }
        // The code leaves the address bar at once: this page replaces itself with "/"
        // (login.js), a same-site navigation that carries the new SameSite=Strict cookie.
        t.get("/login") { r in
            guard let code = r.query["code"], let session = web.redeem(code) else {
                var page = ControlResponse.page(WebAssets.loginFailed)
                page.status = 401
                return page
            }
            var page = ControlResponse.page(WebAssets.loggedIn)
            page.headers.append((.setCookie, "\(web.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"))
            return page
        }
        t.post("/logout") { r in
            for session in cookieValues(web.cookieName, in: r.cookies.lines) { web.endSession(session) }
            var page = ControlResponse.json(["loggedOut": true])
            page.headers.append((.setCookie, "\(web.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"))
            return page
        }
    }
}

extension ControlResponse {
    static func page(_ html: String) -> ControlResponse { asset(html, "text/html; charset=utf-8") }

    static func asset(_ text: String, _ contentType: String) -> ControlResponse {
        var r = ControlResponse(status: 200, body: Data(text.utf8))
        r.contentType = contentType
        return r
    }
}

extension Agent {
    /// `POST /v1/web/login` (control socket only): a one-time login address.
    func webLoginRoute() throws -> ControlResponse {
        guard let web, let base = web.baseURL else {
            throw AgentError(.notFound, "this agent serves no web app (it was started with --no-web, or is a relay)")
        }
        return .json(
            WebLogin(
                url: base + "login?code=" + web.mintCode(),
                expiresAt: clock.date.addingTimeInterval(WebAccess.codeLifetime.seconds)))
    }
}

/// The web app on TCP 127.0.0.1 (`agent --web-port`, default 47821; `--no-web`).
struct WebService: Service {
    let access: WebAccess
    /// The control API's routes behind the web app's guard (a router is made for each port tried).
    let router: @Sendable () -> Router<ControlContext>
    /// Where the port it got is remembered for the next start.
    let home: NodeHome
    /// Its streams end when the web app stops.
    let events: EventHub
    let group: any EventLoopGroup
    let logger: Logger

    func run() async throws {
        let remembered = Self.rememberedPort(home.webPortFile)
        // The port asked for; if it is taken (a second agent on this machine, from another home),
        // the port it had last time (a bookmark keeps working), else any free one, remembered
        // for next time. Tried by binding, never by a check first: two agents started at once
        // would both find the port free and one would lose the bind.
        var ports = [access.requestedPort]
        if access.requestedPort != 0 {
            if let remembered, remembered != access.requestedPort { ports.append(remembered) }
            ports.append(0)
        }
        for (n, port) in ports.enumerated() {
            do {
                try await serve(on: port, remembered: remembered)
                return
            } catch let error as IOError where error.errnoCode == EADDRINUSE && n + 1 < ports.count {
                let next = ports[n + 1]
                logger.notice(
                    next == 0
                        ? "web port \(port) is in use; the web app listens on a free port instead, kept for the next start (`locafoto web` prints it)"
                        : "web port \(port) is in use; the web app listens on \(next), as last time")
            } catch is CancellationError {
                return
            } catch {
                // The web app is one way in among several: the agent goes on without it.
                let why = NetworkFailure.listening(error, port: port, option: "`agent --web-port N`") ?? "\(error)"
                logger.error("the web app could not start: \(why); the agent runs on without it")
                break
            }
        }
        try? await gracefulShutdown()
        events.finishAll()
    }

    private func serve(on port: Int, remembered: Int?) async throws {
        let home = self.home
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)  // not a line per request (and never a login URL)
        let access = self.access
        let logger = self.logger
        let app = Application(
            router: router(),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                access.boundPort.withLock { $0 = bound }
                if bound != access.requestedPort, bound != remembered, bound != 0 {
                    Self.remember(bound, in: home.webPortFile)
                }
                logger.info("web app at \(access.baseURL ?? "?"); `locafoto web --open` logs a browser in")
            },
            eventLoopGroupProvider: .shared(group),
            logger: quiet)
        try await withGracefulShutdownHandler {
            try await app.run()
        } onGracefulShutdown: { [events] in
            events.finishAll()
        }
    }

    /// The port remembered in `path`, if it holds one.
    static func rememberedPort(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), (1...65535).contains(port)
        else { return nil }
        return port
    }

    /// Remembers the port (a write that fails costs only the next start's port).
    static func remember(_ port: Int, in path: String) {
        // Atomic (a temporary file renamed over it); the agent's umask (077) makes it 0600.
        try? Data("\(port)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
