import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoLocalSendServer
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoVault
import LocafotoWire

/// `/v1/inbox`: the offers to this node, their previews, and the user's decision on each.
package struct InboxController: Sendable {
    let store: AgentStore
    let inbox: Inbox
    let receiver: Receiver
    let vaults: VaultHandle
    let identity: Identity

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/inbox") { r in
            .json(
                try await list(
                    all: r.query["all"] != nil, page: try ListPage(r.query),
                    itemLimit: try ListPage.count(r.query, "items")))
        }
        t.get("/v1/inbox/:id/items/:index/preview") { r in
            try await preview(try r.parameter("id"), try r.parameter("index"))
        }
        for (action, kind) in [("accept", DecisionKind.accepted), ("reject", .rejected)] {
            t.post("/v1/inbox/:id/\(action)") { r in
                let o = try await decide(try r.parameter("id"), kind)
                return .json(OfferDecision(offer: o.offer, state: o.state.rawValue, message: o.message))
            }
        }
    }

    /// `accept`/`reject`: the receiving role decides (and cleans up after a rejection).
    package func decide(_ idPrefix: String, _ kind: DecisionKind) async throws -> Inbox.DecisionOutcome {
        try await receiver.decide(idPrefix, kind)
    }

    /// Late previews that may still come for a pending offer; nil when none.
    private func pendingPreviews(_ id: String) -> Int? {
        let n = inbox.latePreviewsOutstanding(id)
        return n > 0 ? n : nil
    }

    package func list(all: Bool, page: ListPage = ListPage(), itemLimit: Int? = nil) async throws -> [InboxOffer] {
        try receiver.expireOffers()
        // Besides undecided offers, the inbox shows those still arriving (accepted, not yet
        // ended), interrupted transfers and offers with items still waiting for a key.
        let offers = try store.offers().filter { o in
            all || o.state == .pending || o.state == .accepted || o.state == .interrupted
                || ((try? store.items(of: o.id))?.contains { $0.status == .needsKey } ?? false)
        }
        var out: [InboxOffer] = []
        // An imported item's name is read from the vault (the inbox no longer keeps it), when
        // the vault is open; listing is not a use that keeps it from auto-locking.
        let vault = try? vaults.unlocked()
        func name(_ item: OfferItemRecord) -> String {
            guard item.name.isEmpty, item.status == .imported, let vault, let id = item.photoId else {
                return item.name
            }
            return (try? vault.photo(matching: id).name) ?? ""
        }
        for o in page.apply(offers) {
            let trusted = try isTrusted(o.senderFingerprint)
            let stored = try store.items(of: o.id)
            let previews = try store.previewIndices(o.id)
            let items = stored.prefix(itemLimit ?? stored.count).map {
                InboxOffer.Item(
                    name: name($0), kind: $0.kind, bytes: $0.size, status: $0.status.rawValue, photo: $0.photoId,
                    error: $0.errorMessage,
                    preview: previews.contains($0.idx))
            }
            out.append(
                InboxOffer(
                    id: o.id, sender: .init(name: o.senderName, fingerprint: o.senderFingerprint, trusted: trusted),
                    via: o.viaFingerprint.map { fp in
                        .init(
                            name: o.viaName ?? "", fingerprint: fp, trusted: (try? store.peer(fp))??.trust == .trusted)
                    },
                    state: o.state.rawValue,
                    items: Array(items), itemCount: stored.count, previewCount: previews.count,
                    previewsPending: o.state == .pending ? pendingPreviews(o.id) : nil, totalBytes: o.totalBytes,
                    receivedAt: o.receivedAt, expiresAt: o.expiresAt,
                    connected: await inbox.isLive(o.id), message: o.message))
        }
        return out
    }

    /// Whether the user trusts this sender: a peer by its key, a LocalSend device by its
    /// certificate (`localsend trust`); one that showed no certificate never is.
    func isTrusted(_ fingerprint: String) throws -> Bool {
        guard SenderLabel.isLocalSend(fingerprint) else { return try store.peer(fingerprint)?.trust == .trusted }
        guard !SenderLabel.hasNoCertificate(fingerprint) else { return false }
        let certificate = String(fingerprint.dropFirst("localsend:".count))
        return try store.localSendPeer(certificate)?.trust == .trusted
    }

    /// An offered item's preview, opened in memory with the node key (it is kept sealed): JPEG
    /// bytes. `noPreview` (404) when the item has none; `notFound` for an unknown offer or item.
    package func preview(_ idPrefix: String, _ index: String) async throws -> ControlResponse {
        let o = try await inbox.find(idPrefix)
        // Messages count items as people do (from 1); the index in the path counts from 0.
        guard let i = Int(index), i >= 0, i < o.itemCount else {
            let which = Int(index).map { "no photo \($0 + 1)" } ?? "no photo '\(index)'"
            throw AgentError(.notFound, "offer \(o.id.prefix(8)) has \(which): it has \(o.itemCount), counted from 1")
        }
        guard let sealed = try store.preview(o.id, i) else {
            throw AgentError(.noPreview, "photo \(i + 1) of offer \(o.id.prefix(8)) came without a preview")
        }
        let jpeg = try SealedBox.open(sealed, with: identity.agreementKey, maxPlaintext: PreviewImage.maxBytes)
        var response = ControlResponse(status: 200, body: jpeg.withUnsafeBytes { Data($0) })
        response.contentType = "image/jpeg"
        return response
    }
}
