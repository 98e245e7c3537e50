import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoInbox
import LocafotoNode
import LocafotoPeers
import LocafotoSession
import LocafotoWire
import Logging
import ServiceLifecycle

// Offers that wait for this node at its relays (protocol/messages.md "Relay"): collected as
// any offer is received, through the inbox.
extension Receiver {
    /// Takes the offers waiting for this node at `relay`, one session each, through the inbox
    /// as any offer (a pending one keeps its session open until decided). Returns how many.
    @discardableResult
    package func collect(from relay: StaticAddress) async throws -> Int {
        var handed = 0
        while handed < 100 {
            let more = try await sessions.withSession(relay.endpoint, expected: nil) { s -> Bool in
                guard s.peer.caps.contains("relay") else {
                    throw AgentError(
                        .invalidRequest,
                        "\(s.peer.name) at \(relay) is not a relay (it does not announce the relay capability)")
                }
                guard case .queue(let waiting) = try await s.collect(.offers) else {
                    throw WireError(.internalError, "COLLECT offers was answered otherwise")
                }
                guard waiting > 0 else { return false }
                try await self.receive(s)
                handed += 1
                return waiting > 1
            }
            if !more { break }
        }
        return handed
    }
}

/// A node's visits to its relays (`--relay`) for the offers waiting there, every `interval`.
package struct RelayCollectService: Service {
    package let receiver: Receiver
    package let relays: [StaticAddress]
    package let interval: Duration

    package init(receiver: Receiver, relays: [StaticAddress], interval: Duration) {
        self.receiver = receiver
        self.relays = relays
        self.interval = interval
    }

    package func run() async throws {
        // A service that returns would end the agent's group: with no relay, it waits for the end.
        guard !relays.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                for relay in relays {
                    do {
                        let n = try await receiver.collect(from: relay)
                        if n > 0 { receiver.logger.info("collected \(n) offer(s) from the relay at \(relay)") }
                    } catch {
                        receiver.logger.debug("cannot collect from the relay at \(relay): \(error)")
                    }
                }
                try await receiver.clock.sleep(for: interval)
            }
        }
    }
}
