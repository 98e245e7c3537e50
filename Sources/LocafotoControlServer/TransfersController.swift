import Foundation
import Hummingbird
import LocafotoControl
import LocafotoErrors
import LocafotoMedia
import LocafotoNode
import LocafotoQuery
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import LocafotoWire
import ServiceLifecycle

/// `/v1/send`, `/v1/uploads` and `/v1/transfers`: sends (of files, vault photos or uploads),
/// uploads from the web app, transfers under way and recently ended, a wait for a transfer's
/// next phase, and cancel.
package struct TransfersController: Sendable {
    let outbox: Outbox
    let sender: Sender
    let uploads: UploadStore
    let vaults: VaultUse
    /// A relay sends nothing of its own.
    let sendsNothing: Bool

    /// `filePaths` false (the web app): photos come as uploads or from the vault, never as paths.
    package func addRoutes(to t: inout RouteTable, filePaths: Bool) {
        t.post("/v1/send") { r in try await start(r.body, filesAllowed: filePaths) }
        t.streamingPost("/v1/uploads") { r in
            uploads.begin(name: r.query["name"] ?? "", maxSize: sender.configuration.offerLimits.maxItemBytes)
        }
        t.get("/v1/transfers") { _ in .json(all) }
        t.get("/v1/transfers/:id") { r in try await answer(try r.parameter("id"), r.query) }
        t.post("/v1/transfers/:id/cancel") { r in
            .json(try await sender.cancelTransfer(try r.parameter("id")).current)
        }
    }

    package var all: [OutgoingTransfer.Snapshot] {
        outbox.transfers.map(\.current).sorted { $0.startedAt > $1.startedAt }
    }

    package func answer(_ id: String, _ query: [String: String]) async throws -> ControlResponse {
        guard let t = outbox.transfer(id) else { throw AgentError(.notFound, "no transfer \(id)") }
        guard let after = query["after"] else { return .json(t.current) }
        guard let phase = Int(after), let wait = Double(query["wait"] ?? "30"), (0...60).contains(wait) else {
            throw AgentError(.invalidRequest, "after must be a phase number and wait 0...60 seconds")
        }
        // A stopping agent answers at once: shutdown waits for open control requests.
        let snapshot = await cancelWhenGracefulShutdown {
            await t.snapshot(after: phase, timeout: .milliseconds(Int64(wait * 1000)))
        }
        return .json(snapshot)
    }

    package func start(_ body: [UInt8], filesAllowed: Bool = true) async throws -> ControlResponse {
        let b = try ControlJSON.decode(SendRequest.self, body)  // wait: see Sender.peerWait
        if !filesAllowed, !(b.files ?? []).isEmpty {
            throw AgentError(
                .refused, "the web app sends uploaded or vault photos, not files by path; use `locafoto send` for files"
            )
        }
        if let w = b.wait, !(0...Double(Sender.maxPeerWait.components.seconds)).contains(w) {
            throw AgentError(.invalidRequest, "wait must be 0...\(Sender.maxPeerWait.components.seconds) seconds")
        }
        if sendsNothing {
            throw AgentError(.invalidRequest, "this agent is a relay; it does not send photos of its own")
        }
        var photos: [PhotoRecord] = []
        if let selection = b.selection {
            let v = try vaults.unlocked()
            switch selection {
            case .ids(let ids): photos = try ids.map { try v.photo(matching: $0) }
            case .query(let q): photos = try v.photos(matching: q)
            }
            guard !photos.isEmpty else { throw AgentError(.notFound, "no photo in the vault matches") }
        }
        var transform: SendTransform?
        if b.compress == true || b.stripLocation == true {
            var options: CompressionOptions?
            if b.compress == true {
                var o = CompressionOptions()
                if let q = b.quality { o.quality = q }
                do { try o.validate() } catch { throw AgentError(.invalidRequest, "\(error)") }
                options = o
            }
            transform = SendTransform(compression: options, stripLocation: b.stripLocation ?? false)
        }
        guard (b.peer == nil) != (b.peers == nil) else {
            throw AgentError(.invalidRequest, "give either peer or peers")
        }
        if let pin = b.pin, pin.isEmpty || pin.utf8.count > 256 {
            throw AgentError(.invalidRequest, "a PIN is 1 to 256 bytes")
        }
        if b.pin != nil, (b.peers?.count ?? 1) > 1 {
            // A device's PIN is for that device: another one would learn it.
            throw AgentError(.invalidRequest, "a PIN goes to one LocalSend device; send to it alone")
        }
        let wait = b.wait.map { Duration.milliseconds(Int64($0 * 1000)) }
        let uploaded = try uploads.take(b.uploads ?? [])
        let started: [OutgoingTransfer]
        do {
            started = try sender.send(
                to: b.peers ?? [b.peer!], paths: b.files ?? [], vaultPhotos: photos,
                uploads: uploaded.isEmpty ? nil : uploaded,
                transform: transform, via: b.via, wait: wait, previews: b.preview ?? true, pin: b.pin)
        } catch {
            uploaded.giveBack()  // the send did not start
            throw error
        }
        if b.peers != nil {
            struct Started: Encodable { var transfers: [OutgoingTransfer.Snapshot] }
            return .json(Started(transfers: started.map(\.current)), status: 202)
        }
        return .json(started[0].current, status: 202)
    }
}
