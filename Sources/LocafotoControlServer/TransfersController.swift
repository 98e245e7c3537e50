import Foundation
import LocafotoControl
import LocafotoNode
import LocafotoSending
import ServiceLifecycle

/// `/v1/transfers`: sends under way and recently ended, a wait for a transfer's next phase,
/// and cancel.
package struct TransfersController: Sendable {
    let outbox: Outbox
    let sender: Sender

    package init(outbox: Outbox, sender: Sender) {
        self.outbox = outbox
        self.sender = sender
    }

    package func addRoutes(to t: inout RouteTable) {
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
}
