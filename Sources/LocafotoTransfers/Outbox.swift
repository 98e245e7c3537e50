import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import Synchronization

/// This node's outgoing transfers, direct, relayed and to LocalSend devices, as the control API
/// lists them; finished ones are kept for an hour. A transfer registered here announces its
/// changes on the event hub. The work of a transfer runs in its role's own `WorkQueue`: the
/// outbox holds transfers, never the work that moves them.
package final class Outbox: Sendable {
    private let table = Mutex<[String: OutgoingTransfer]>([:])
    /// Where registered transfers announce their changes.
    private let events: EventHub?

    private let clock: any AgentClock

    package init(events: EventHub? = nil, clock: any AgentClock) {
        self.events = events
        self.clock = clock
    }

    package func register(_ t: OutgoingTransfer) {
        table.withLock { all in
            // Keep the table small: forget finished transfers older than an hour.
            let cutoff = clock.date.addingTimeInterval(-3600)
            all = all.filter { $0.value.current.finishedAt.map { $0 > cutoff } ?? true }
            all[t.id] = t
        }
        if let events { t.announce(on: events) }
    }

    package func transfer(_ id: String) -> OutgoingTransfer? {
        table.withLock { $0[id] }
    }

    package var transfers: [OutgoingTransfer] {
        table.withLock { Array($0.values) }
    }

    package func transfers(in state: OutgoingTransfer.State) -> [OutgoingTransfer] {
        transfers.filter { $0.current.state == state }
    }

    /// The transfer whose id starts with `prefix` (4+ characters), or an error that says why not.
    package func find(_ prefix: String) throws -> OutgoingTransfer {
        let p = prefix.lowercased()
        guard p.count >= 4 else { throw AgentError(.invalidRequest, "give at least 4 characters of the transfer id") }
        let matches = transfers.filter { $0.id.hasPrefix(p) }
        guard let t = matches.first else {
            throw AgentError(.notFound, "no transfer \(prefix); run `locafoto transfers`")
        }
        guard matches.count == 1 else { throw AgentError(.ambiguous, "transfer id \(prefix) is ambiguous") }
        return t
    }
}
