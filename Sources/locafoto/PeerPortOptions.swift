import ArgumentParser
import LocafotoAgent

/// Where a node listens for peers and how it is found, shared by `agent` and `relay run`.
struct PeerPortOptions: ParsableArguments {
    @Option(help: "Display name shown to peers (default: host name).") var name: String?
    @Option(help: "TCP port for peers; 0 picks a free one. If taken, a free port is used.") var port: Int = 47820
    @Option(help: "Address to listen on for peers (default: all interfaces).") var listen: String = "::"
    @Flag(help: "Do not use mDNS (no advertisement, no browsing).") var noDiscovery = false
    @Option(
        help:
            "Seconds without a byte from a peer before its connection counts as lost (5...3600); an interrupted transfer resumes later."
    )
    var idleTimeout: Int = 60

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (5...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 5...3600 seconds") }
    }

    func apply(to config: inout AgentConfiguration) {
        config.port = port
        config.listenHost = listen
        config.displayName = name
        config.discovery = !noDiscovery
        config.idleTimeout = idleTimeout
    }
}
