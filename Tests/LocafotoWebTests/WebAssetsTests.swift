import Foundation
import LocafotoTestSupport
import Testing

@testable import LocafotoWeb

@Suite("The web app's files, as compiled in")
struct WebAssetsTests {
    /// The folder the assets are compiled from.
    static let assets = Checkout.url("Sources/LocafotoWeb/Assets")

    @Test("each page is its file, byte for byte")
    func sameAsFiles() throws {
        let pages: [(String, String)] = [
            ("index.html", WebAssets.indexHTML), ("app.js", WebAssets.appJS), ("app.css", WebAssets.appCSS),
            ("login.js", WebAssets.loginJS), ("login-needed.html", WebAssets.loginNeeded),
            ("login-failed.html", WebAssets.loginFailed), ("logged-in.html", WebAssets.loggedIn),
        ]
        for (name, compiled) in pages {
            let file = try String(contentsOf: Self.assets.appendingPathComponent(name), encoding: .utf8)
            #expect(compiled == file, "\(name)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.assets.path).sorted()
        #expect(files == pages.map(\.0).sorted(), "every file in Assets/ is compiled in, and only those")
    }

    @Test("the pages load only this app's own modules and style sheet, and no inline script")
    func ownFilesOnly() {
        for page in [WebAssets.indexHTML, WebAssets.loginNeeded, WebAssets.loginFailed, WebAssets.loggedIn] {
            #expect(page.contains(#"href="/assets/app.css""#))
            #expect(!page.contains("http://") && !page.contains("https://"), "nothing from elsewhere")
            for script in page.components(separatedBy: "<script").dropFirst() {
                #expect(script.hasPrefix(#" type="module" src="/assets/"#), "an inline script would break the CSP")
            }
        }
    }
}
