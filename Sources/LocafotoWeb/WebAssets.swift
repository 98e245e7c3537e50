/// The web app's pages, compiled into the binary from the files in `Assets/` (SwiftPM's
/// `embedInCode`): an installed `locafoto` needs no files beside it, and nothing is fetched
/// from elsewhere (no CDN). Hand-written, no framework; the script and style sheet are separate
/// files because the CSP allows no inline ones. `scripts/lint-web.sh` checks the files.
public enum WebAssets {
    /// The app's one page; app.js fills it in.
    public static let indexHTML = text(PackageResources.index_html)
    public static let appJS = text(PackageResources.app_js)
    public static let appCSS = text(PackageResources.app_css)
    /// Replaces the login address in the address bar and the history with the app.
    public static let loginJS = text(PackageResources.login_js)
    /// The answer to a request without a session.
    public static let loginNeeded = text(PackageResources.login_needed_html)
    /// The answer to a login address that was used or is past its time.
    public static let loginFailed = text(PackageResources.login_failed_html)
    /// After a login: login.js replaces this page (and the code in the address bar) with the app.
    public static let loggedIn = text(PackageResources.logged_in_html)

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
