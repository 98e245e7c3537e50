import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoNode

/// `locafoto web`: a one-time login address for the agent's web app.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Log a browser in to the agent's web app (inbox, transfers, peers, sending, the vault).",
        discussion: """
            The agent serves a web app on 127.0.0.1 (agent --web-port, default 47821; --no-web turns it \
            off). This command asks the agent for a login address, http://127.0.0.1:PORT/login?code=…: \
            it works once, within two minutes, and gives the browser that opens it a session cookie \
            until the agent stops (or "Log out"). The code leaves the address bar at once. \
            --open opens it in your browser through xdg-open: the address goes through a file only you \
            can read (<home>/web-login.html), never the command line of another program.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Open the app in the default browser (xdg-open) instead of printing the address.") var open = false

    func run() throws {
        let answer = try global.fetch(WebLogin.self, "/v1/web/login", method: "POST")
        guard open else {
            return global.say(answer) {
                "\($0.url)\nOpen this address in your browser within \(max(0, Int($0.expiresAt.timeIntervalSinceNow.rounded()))) s; it works once."
            }
        }
        let file = global.nodeHome.directory + "/web-login.html"
        try Self.writeLoginPage(answer.value.url, to: file)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["xdg-open", file]
        do {
            try p.run()
        } catch {
            throw CLIError(
                "cannot run xdg-open (\(error)); run `locafoto web` and open the address it prints",
                code: .unavailable)
        }
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw CLIError(
                "xdg-open failed (status \(p.terminationStatus)); run `locafoto web` and open the address it prints",
                code: .unavailable)
        }
        if global.json { return global.printJSON(answer) }
        let base = answer.value.url.components(separatedBy: "login?").first ?? answer.value.url
        print("Opened the web app (\(base)) in your browser.")
    }

    /// A page that sends the browser on to the login address: xdg-open and the browser it starts
    /// see only this file's path, which others cannot read (0600, in the 0700 home).
    static func writeLoginPage(_ url: String, to path: String) throws {
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0; url=\(url)"><title>Locafoto</title></head>
            <body><a href="\(url)">Open Locafoto</a></body></html>
            """
        unlink(path)
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))", code: .io)
        }
        defer { close(fd) }
        let bytes = Array(html.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else {
            throw CLIError("cannot write \(path)", code: .io)
        }
    }
}
