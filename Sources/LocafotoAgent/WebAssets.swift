/// The web app's pages, compiled into the binary: an installed `locafoto` needs no files
/// beside it, and nothing is fetched from elsewhere (no CDN). Hand-written, no framework; the
/// script and style sheet are separate files because the CSP allows no inline ones.
/// app.js and app.css are in WebAssets+Script.swift and WebAssets+Style.swift.
enum WebAssets {
    static let indexHTML = ##"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Locafoto</title>
        <link rel="stylesheet" href="/assets/app.css">
        <script src="/assets/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Locafoto</h1>
          <span id="node"></span>
          <span id="live" class="badge">connecting…</span>
          <nav>
            <button data-view="inbox" class="tab current">Inbox <span id="inbox-count"></span></button>
            <button data-view="transfers" class="tab">Transfers</button>
            <button data-view="send" class="tab">Send</button>
            <button data-view="peers" class="tab">Peers</button>
            <button data-view="vault" class="tab">Vault</button>
          </nav>
          <button id="logout" class="quiet">Log out</button>
        </header>
        <div id="notice" hidden></div>
        <main>
          <section id="view-inbox" class="view">
            <h2>Offers to you</h2>
            <p id="inbox-empty" class="empty">No offer waits for a decision.</p>
            <div id="inbox-list"></div>
          </section>

          <section id="view-transfers" class="view" hidden>
            <h2>Receiving</h2>
            <p id="receiving-empty" class="empty">Nothing received lately.</p>
            <div id="receiving-list"></div>
            <h2>Sending</h2>
            <p id="transfers-empty" class="empty">No transfer yet.</p>
            <div id="transfers-list"></div>
          </section>

          <section id="view-send" class="view" hidden>
            <h2>Send photos</h2>
            <fieldset id="send-peers"><legend>To</legend><p class="empty">No peer is known yet.</p></fieldset>
            <div id="drop" class="drop">
              <p>Drop photos here, or <label class="button">choose files<input id="send-files" type="file" multiple accept="image/*"></label></p>
              <ul id="send-chosen"></ul>
            </div>
            <button id="send-go" disabled>Send</button>
            <p id="send-status" class="status"></p>
            <ul id="send-uploads"></ul>
          </section>

          <section id="view-peers" class="view" hidden>
            <h2>Peers</h2>
            <p class="hint">Before trusting a peer, compare its pairing code (or fingerprint) with the one its owner sees.</p>
            <table id="peers-table">
              <thead><tr><th>Name</th><th>Fingerprint</th><th>Online</th><th>Trust</th><th>Pairing code</th><th></th></tr></thead>
              <tbody></tbody>
            </table>
          </section>

          <section id="view-vault" class="view" hidden>
            <div id="vault-locked" hidden>
              <h2>The vault is locked</h2>
              <p>Photos that arrive are kept sealed until it is unlocked. Unlock it here, or with <code>locafoto unlock</code>.</p>
              <form id="unlock-form">
                <input id="unlock-passphrase" type="password" autocomplete="current-password" placeholder="Vault passphrase" required>
                <button type="submit">Unlock</button>
                <span id="unlock-status" class="status"></span>
              </form>
            </div>
            <div id="vault-absent" hidden>
              <h2>No vault</h2>
              <p>Create one with <code>locafoto vault init</code>.</p>
            </div>
            <div id="vault-open" hidden>
              <div class="filters">
                <label>Album <select id="filter-album"><option value="">All photos</option></select></label>
                <label>Tag <select id="filter-tag"><option value="">Any</option></select></label>
                <label><input id="filter-favorite" type="checkbox"> Favourites</label>
                <button id="lock" class="quiet">Lock the vault</button>
              </div>
              <p id="gallery-empty" class="empty" hidden>No photo here.</p>
              <div id="gallery"></div>
              <button id="gallery-more" hidden>Load more</button>
            </div>
          </section>
        </main>

        <div id="viewer" hidden>
          <div class="viewer-bar">
            <span id="viewer-title"></span>
            <button id="viewer-favorite"></button>
            <a id="viewer-download" class="button">Download original</a>
            <button id="viewer-close">Close</button>
          </div>
          <p id="viewer-failed" hidden>This photo cannot be shown in the browser. Download the original to open it.</p>
          <div class="viewer-stage">
            <button id="viewer-prev" title="Previous photo (←)" aria-label="Previous photo">‹</button>
            <img id="viewer-image" alt="">
            <button id="viewer-next" title="Next photo (→)" aria-label="Next photo">›</button>
          </div>
          <dl id="viewer-details"></dl>
        </div>
        </body>
        </html>
        """##

    /// The answer to a request without a session.
    static let loginNeeded = page(
        title: "Log in to Locafoto",
        body: """
            <h1>Log in to Locafoto</h1>
            <p>This page is served by your <code>locafoto agent</code>. To use it, run</p>
            <pre>locafoto web --open</pre>
            <p>in a terminal (or <code>locafoto web</code>, and open the address it prints). The address logs this
            browser in once and stops working after that, or after two minutes.</p>
            """)

    static let loginFailed = page(
        title: "Login address expired",
        body: """
            <h1>This login address no longer works</h1>
            <p>A login address works once, for two minutes. Run <code>locafoto web --open</code> again.</p>
            """)

    /// After a login: login.js replaces this page (and the code in the address bar) with the app.
    static let loggedIn = page(
        title: "Locafoto",
        body: """
            <p>Logged in. <a id="continue" href="/">Continue</a></p>
            <script src="/assets/login.js"></script>
            """)

    static let loginJS = ##"""
        // Replaces /login?code=… in the address bar and in the history with the app itself.
        location.replace("/");
        """##

    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(title)</title>
        <link rel="stylesheet" href="/assets/app.css"></head>
        <body class="plain">\(body)</body></html>
        """
    }
}
