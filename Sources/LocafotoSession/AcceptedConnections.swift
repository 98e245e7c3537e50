import NIOCore
import Synchronization

/// Accepted connections that the accept loop has not taken yet. A `NIOAsyncChannel` accepted
/// while its server closes is dropped unread, and its writer traps on deinit ("Deinited
/// NIOAsyncWriter without calling finish()", swift-nio#2637): a CLI reconnecting while the agent
/// stops crashed it. Each connection is held here from its channel initializer until the loop
/// takes it, so none is ever dropped; those left once the loop ended are closed.
package final class AcceptedConnections<Inbound: Sendable, Outbound: Sendable>: Sendable {
    package typealias Connection = NIOAsyncChannel<Inbound, Outbound>
    private let waiting = Mutex<[ObjectIdentifier: Connection]>([:])

    package init() {}

    /// In the channel initializer.
    package func hold(_ connection: Connection) -> Connection {
        waiting.withLock { $0[ObjectIdentifier(connection.channel)] = connection }
        return connection
    }

    /// In the accept loop, before serving it.
    package func take(_ connection: Connection) {
        _ = waiting.withLock { $0.removeValue(forKey: ObjectIdentifier(connection.channel)) }
    }

    /// After the accept loop ended: closes what it never took. One accepted even later stays
    /// held (never dropped) until the process ends.
    package func closeLeftovers() async {
        let left = waiting.withLock { w in
            defer { w.removeAll() }
            return Array(w.values)
        }
        for connection in left { try? await connection.executeThenClose { _, _ in } }
    }
}
