import Foundation
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoDesktop
import LocafotoFormats
import LocafotoInbox
import LocafotoMedia
import LocafotoNode
import LocafotoReceiving
import LocafotoWire
import Logging
import ServiceLifecycle

/// Offers as desktop notifications (issue 10 §3), built on the agent's event stream: an offer
/// waiting for a decision is shown with the sender's name and fingerprint, the number of photos
/// and their size, and **Accept** / **Reject** actions that decide it; the same notification then
/// follows the transfer (receiving, imported, failed) and goes away if the offer is decided
/// elsewhere. Without a session bus or a notification server the agent says so once and
/// carries on: offers wait in the inbox as always.
struct NotificationService: Service {
    let events: EventHub
    /// The offers' previews (sealed to this node) come from the store.
    let store: AgentStore
    let identity: Identity
    /// Accept and Reject decide as `locafoto accept` does.
    let inbox: InboxController
    let logger: Logger

    func run() async throws {
        let client: NotificationClient
        let showsImages: Bool
        let markup: Bool
        do {
            client = try NotificationClient.session()
            let server = try client.serverInformation()
            let capabilities = Set(try client.capabilities())
            showsImages = !capabilities.isDisjoint(with: ["body-images", "icon-static"])
            markup = capabilities.contains("body-markup")
            logger.info(
                "offers are shown as desktop notifications (\(server.name) \(server.version)\(showsImages ? ", with previews" : ""))"
            )
        } catch {
            logger.notice(
                "desktop notifications are off: \(error). Offers wait in the inbox; `locafoto receive` asks about each one"
            )
            try? await gracefulShutdown()
            return
        }
        defer { client.stop() }
        let book = NotificationBook()
        let stream = events.subscribe()
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // The signals end with the bus connection: at shutdown, or when the session's bus
                // goes away under a running agent (the user logged out, the bus was stopped).
                group.addTask {
                    for await signal in client.signals { await handle(signal, book: book, client: client) }
                }
                group.addTask {
                    for await published in stream {
                        guard let event = published.event else { continue }
                        await show(event, book: book, client: client, images: showsImages, markup: markup)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
        logger.notice(
            "desktop notifications are off: the session bus closed. Offers wait in the inbox; `locafoto receive` asks about each one"
        )
        try? await gracefulShutdown()
    }

    private func show(_ e: NodeEvent, book: NotificationBook, client: NotificationClient, images: Bool, markup: Bool)
        async
    {
        let offer: String
        switch e {
        case .offerReceived(let n), .offerFinished(let n): offer = n.offer
        case .offerPreview(let o, _), .offerDecided(let o, _, _): offer = o
        default: return
        }
        let shown = await book.id(for: offer)
        var n: DesktopNotification
        switch e {
        case .offerReceived(let news):
            let from = news.peer.name
            let what = "\(news.items == 1 ? "1 photo" : "\(news.items) photos") (\(Self.size(news.totalBytes)))"
            let fingerprint = news.peer.fingerprint ?? ""
            // A LocalSend device says so, and that nothing verified it (protocol/localsend.md).
            let who =
                SenderLabel.hasNoCertificate(fingerprint)
                ? "LocalSend device with no certificate: anyone could use this name"
                : SenderLabel.isLocalSend(fingerprint)
                    ? "LocalSend device, not verified: certificate \(fingerprint.dropFirst("localsend:".count))"
                    : "Fingerprint \(fingerprint)"
            if news.state == "pending" {
                n = DesktopNotification(
                    summary: "Photos from \(from)", body: "\(from) offers \(what).\n\(who)")
                n.actions = [("accept", "Accept"), ("reject", "Reject")]
                n.expireTimeout = 0  // until the user decides
                if images { n.image = firstPreview(of: offer) }
                // Previews that follow the offer (cap late-preview) give it its picture later.
                if images, n.image == nil { await book.awaitPicture(offer, n) }
            } else {
                n = DesktopNotification(
                    summary: "Receiving photos from \(from)",
                    body: "\(what), accepted: \(from) is trusted.\n\(who)")
            }
            await book.remember(offer, name: from)
        case .offerPreview:
            // The offer's first preview came after it: the pending notification is shown again,
            // the same, with its picture (once).
            guard let shown, var waiting = await book.takeAwaitingPicture(offer), let image = firstPreview(of: offer)
            else { return }
            waiting.image = image
            waiting.replaces = shown
            n = waiting
        case .offerDecided(_, let state, let message):
            guard let shown else { return }
            guard state == "accepted" else {
                try? client.close(shown)
                await book.forget(offer)
                return
            }
            n = DesktopNotification(
                summary: "Receiving photos from \(await book.name(offer))", body: message ?? "accepted")
            n.replaces = shown
        case .offerFinished(let news):
            guard let shown else { return }
            let from = await book.name(offer)
            await book.forget(offer)
            switch news.state {
            case "completed":
                n = DesktopNotification(summary: "Photos from \(from) imported", body: news.message ?? "")
            case "failed", "interrupted":
                n = DesktopNotification(summary: "Photos from \(from): \(news.state)", body: news.message ?? "")
            default:
                // Rejected, cancelled or expired: nothing left to show.
                try? client.close(shown)
                return
            }
            n.replaces = shown
        default:
            return
        }
        // A peer's name or a file name is text, never markup: on a server that reads markup in
        // bodies, `Alice<span alpha="1">` would hide the fingerprint line.
        if markup { n.body = Self.escapingMarkup(n.body) }
        do {
            let id = try client.notify(n)
            if case .offerFinished = e {} else { await book.record(id, offer: offer) }
        } catch {
            logger.warning("cannot show a notification: \(error)")
        }
    }

    /// The offer's first preview as pixels, opened in memory (it stays sealed in the store); nil
    /// when it has none or it cannot be decoded (the notification then comes without).
    private func firstPreview(of offer: String) -> DesktopImage? {
        guard let index = try? store.previewIndices(offer).min(),
            let sealed = try? store.preview(offer, index)
        else { return nil }
        do {
            let jpeg = try SealedBox.open(
                sealed, with: identity.agreementKey, maxPlaintext: PreviewImage.maxBytes)
            let p = try jpeg.withUnsafeBytes { try Media.pixels(ofPreview: $0) }
            return DesktopImage(width: p.width, height: p.height, rowStride: p.rowStride, rgb: p.rgb)
        } catch {
            logger.info("the preview of offer \(offer.prefix(8)) is not shown in its notification: \(error)")
            return nil
        }
    }

    /// Accept or Reject chosen on a notification: the offer is decided as `accept`/`reject` would.
    private func handle(_ signal: NotificationSignal, book: NotificationBook, client: NotificationClient) async {
        guard case .action(let id, let key) = signal, let offer = await book.offer(for: id) else { return }
        let kind: DecisionKind
        switch key {
        case "accept": kind = .accepted
        case "reject": kind = .rejected
        default: return
        }
        do {
            let outcome = try await inbox.decide(offer, kind)
            logger.info("offer \(offer.prefix(8)) \(outcome.state.rawValue) from its notification")
        } catch {
            var n = DesktopNotification(summary: "Could not \(key) the photos", body: "\(error)")
            n.replaces = id
            _ = try? client.notify(n)
        }
    }

    /// The body as text in the notification spec's markup (a subset of XML): `&`, `<`, `>` escaped.
    static func escapingMarkup(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    static func size(_ bytes: Int64) -> String {
        ByteSize.text(bytes)
    }
}

/// Which notification shows which offer.
actor NotificationBook {
    private var idByOffer: [String: UInt32] = [:]
    private var offerByID: [UInt32: String] = [:]
    private var names: [String: String] = [:]

    func remember(_ offer: String, name: String) { names[offer] = name }
    func name(_ offer: String) -> String { names[offer] ?? "a peer" }
    func id(for offer: String) -> UInt32? { idByOffer[offer] }
    func offer(for id: UInt32) -> String? { offerByID[id] }

    func record(_ id: UInt32, offer: String) {
        if let old = idByOffer[offer], old != id { offerByID[old] = nil }
        idByOffer[offer] = id
        offerByID[id] = offer
    }

    func forget(_ offer: String) {
        if let id = idByOffer.removeValue(forKey: offer) { offerByID[id] = nil }
        names[offer] = nil
        pictureless[offer] = nil
    }

    /// Pending offers shown without a picture, as shown: their first late preview completes them.
    private var pictureless: [String: DesktopNotification] = [:]

    func awaitPicture(_ offer: String, _ n: DesktopNotification) { pictureless[offer] = n }

    func takeAwaitingPicture(_ offer: String) -> DesktopNotification? { pictureless.removeValue(forKey: offer) }
}
