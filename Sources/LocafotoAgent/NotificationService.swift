import Foundation
import LocafotoControl
import LocafotoDesktop
import LocafotoWire
import ServiceLifecycle

/// Offers as desktop notifications (issue 10 §3), built on the agent's event stream: an offer
/// waiting for a decision is shown with the sender's name and fingerprint, the number of photos
/// and their size, and **Accept** / **Reject** actions that decide it; the same notification then
/// follows the transfer (receiving, imported, failed) and goes away if the offer is decided
/// elsewhere. Without a session bus or a notification server the agent says so once and
/// carries on: offers wait in the inbox as always.
struct NotificationService: Service {
    let agent: Agent

    func run() async throws {
        let client: NotificationClient
        do {
            client = try NotificationClient.session()
            let server = try client.serverInformation()
            agent.logger.info("offers are shown as desktop notifications (\(server.name) \(server.version))")
        } catch {
            agent.logger.notice("desktop notifications are off: \(error). Offers wait in the inbox; `locafoto receive` asks about each one")
            try? await gracefulShutdown()
            return
        }
        defer { client.stop() }
        let book = NotificationBook()
        let events = agent.events.subscribe()
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await signal in client.signals { await handle(signal, book: book, client: client) }
                }
                group.addTask {
                    for await event in events { await show(event, book: book, client: client) }
                }
            }
        }
    }

    private func show(_ e: ControlEvent, book: NotificationBook, client: NotificationClient) async {
        guard let offer = e.offer else { return }
        let shown = await book.id(for: offer)
        var n: DesktopNotification
        switch e.kind {
        case .offerReceived:
            let from = e.peer?.name ?? "a peer"
            let what = "\(e.items == 1 ? "1 photo" : "\(e.items ?? 0) photos") (\(Self.size(e.size ?? 0)))"
            let fingerprint = e.peer?.fingerprint ?? ""
            if e.state == "pending" {
                n = DesktopNotification(summary: "Photos from \(from)", body: "\(from) offers \(what).\nFingerprint \(fingerprint)")
                n.actions = [("accept", "Accept"), ("reject", "Reject")]
                n.expireTimeout = 0  // until the user decides
            } else {
                n = DesktopNotification(summary: "Receiving photos from \(from)", body: "\(what), accepted: \(from) is trusted.\nFingerprint \(fingerprint)")
            }
            await book.remember(offer, name: from)
        case .offerDecided:
            guard let shown else { return }
            guard e.state == "accepted" else {
                try? client.close(shown)
                await book.forget(offer)
                return
            }
            n = DesktopNotification(summary: "Receiving photos from \(await book.name(offer))", body: e.message ?? "accepted")
            n.replaces = shown
        case .offerFinished:
            guard let shown else { return }
            let from = await book.name(offer)
            await book.forget(offer)
            switch e.state {
            case "completed":
                n = DesktopNotification(summary: "Photos from \(from) imported", body: e.message ?? "")
            case "failed", "interrupted":
                n = DesktopNotification(summary: "Photos from \(from): \(e.state ?? "")", body: e.message ?? "")
            default:
                // Rejected, cancelled or expired: nothing left to show.
                try? client.close(shown)
                return
            }
            n.replaces = shown
        default:
            return
        }
        do {
            let id = try client.notify(n)
            if e.kind != .offerFinished { await book.record(id, offer: offer) }
        } catch {
            agent.logger.warning("cannot show a notification: \(error)")
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
            let outcome = try await agent.decideOffer(offer, kind)
            agent.logger.info("offer \(offer.prefix(8)) \(outcome.state.rawValue) from its notification")
        } catch {
            var n = DesktopNotification(summary: "Could not \(key) the photos", body: "\(error)")
            n.replaces = id
            _ = try? client.notify(n)
        }
    }

    static func size(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .binary)
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
    }
}
