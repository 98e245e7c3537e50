import Foundation
import HTTPTypes
import Hummingbird
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoWeb
import NIOCore

/// The web app's front door (protocol/control-api.md "Web app"). TCP on 127.0.0.1 is open to
/// every local user and to every page open in the user's browser, so before any route runs:
///
/// - the `Host` must be this app's own (127.0.0.1:PORT or localhost:PORT): a page whose DNS
///   name was re-bound to 127.0.0.1 is refused (403);
/// - a request that changes anything (not GET/HEAD) must come from this app's own pages: an
///   `Origin` of this app, or `Sec-Fetch-Site: same-origin` without one (403);
/// - every route but `/login` and the three `/assets/` files needs a session cookie from a login (401: JSON for
///   `/v1/…`, a page that says how to log in otherwise);
/// - every answer carries headers that keep it out of frames, caches and other origins.
package struct WebGuard: RouterMiddleware {
    package typealias Context = ControlContext
    package let access: WebAccess

    package init(access: WebAccess) { self.access = access }

    /// No inline script or style, nothing from elsewhere, not in a frame.
    package static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        (HTTPField.Name("X-Frame-Options")!, "DENY"),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
        (HTTPField.Name("X-Content-Type-Options")!, "nosniff"),
        (HTTPField.Name("Cross-Origin-Resource-Policy")!, "same-origin"),
        (HTTPField.Name("Cross-Origin-Opener-Policy")!, "same-origin"),
        (.cacheControl, "no-store"),
    ]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var response = try await check(request, context, next)
        for (name, value) in Self.securityHeaders { response.headers[name] = value }
        return response
    }

    private func check(_ request: Request, _ context: Context, _ next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let port = access.port
        // HTTP/1.1 Host arrives as the authority.
        let host = (request.head.authority ?? "").lowercased()
        guard Self.ownHosts(port).contains(host) else {
            return Self.refusal(
                .refused, "this app answers only at http://127.0.0.1:\(port)/ (the Host header named another server)")
        }
        if request.method != .get && request.method != .head {
            guard Self.isSameOrigin(request, port: port) else {
                return Self.refusal(.refused, "a request that changes something must come from this app's own page")
            }
        }
        let path = request.uri.path
        // Exact paths: no prefix that a path with `..` in it could also start with.
        if Self.open.contains(path) { return try await next(request, context) }
        guard cookieValues(access.cookieName, in: request.headers[values: .cookie]).contains(where: access.isSession)
        else {
            if path.hasPrefix("/v1/") {
                return Self.refusal(.unauthenticated, "log in first: run `locafoto web` and open the address it prints")
            }
            var r = Response(
                status: .unauthorized, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: WebAssets.loginNeeded)))
            r.headers[.wwwAuthenticate] = "Cookie"
            return r
        }
        return try await next(request, context)
    }

    /// What needs no session: the login, and the files its pages use.
    package static let open: Set<String> = ["/login", "/assets/app.css", "/assets/app.js", "/assets/login.js"]

    package static func ownHosts(_ port: Int) -> Set<String> {
        ["127.0.0.1:\(port)", "localhost:\(port)"]
    }

    /// `Origin` (sent by browsers with every POST, PUT and DELETE) must be this app; without
    /// one, `Sec-Fetch-Site` must say same-origin. A request with neither is refused too:
    /// scripts use the control socket, which needs none of this.
    package static func isSameOrigin(_ request: Request, port: Int) -> Bool {
        if let origin = request.headers[.origin] {
            return ownHosts(port).contains { "http://\($0)" == origin.lowercased() }
        }
        return request.headers[HTTPField.Name("Sec-Fetch-Site")!] == "same-origin"
    }

    package static func refusal(_ code: AgentError.Code, _ message: String) -> Response {
        ControlResponse.error(AgentError(code, message)).httpResponse
    }
}
