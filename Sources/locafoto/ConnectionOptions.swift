import ArgumentParser
import LocafotoAgent
import LocafotoSession
import NIOCore

/// Limits on peer connections, shared by `agent` and `relay` (protocol/framing.md "Limits").
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Inbound peer connections open at once; more are closed as they arrive.")
    var maxConnections: Int = ConnectionLimits().maxConnections
    @Option(help: "Inbound peer connections open at once from one IP address.")
    var maxConnectionsPerAddress: Int = ConnectionLimits().maxPerAddress
    @Option(help: "Seconds a new connection has to finish its handshake (1...120).")
    var handshakeTimeout: Int = 10
    @Option(help: "Seconds a frame has to arrive whole once its first byte came (1...600).")
    var frameTimeout: Int = 30

    func validate() throws {
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard maxConnectionsPerAddress >= 1 else {
            throw ValidationError("--max-connections-per-address must be at least 1")
        }
        guard (1...120).contains(handshakeTimeout) else {
            throw ValidationError("--handshake-timeout must be 1...120 seconds")
        }
        guard (1...600).contains(frameTimeout) else { throw ValidationError("--frame-timeout must be 1...600 seconds") }
    }

    var limits: ConnectionLimits {
        var l = ConnectionLimits()
        l.maxConnections = maxConnections
        l.maxPerAddress = maxConnectionsPerAddress
        l.handshakeTimeout = .seconds(Int64(handshakeTimeout))
        l.frameTimeout = .seconds(Int64(frameTimeout))
        return l
    }
}
