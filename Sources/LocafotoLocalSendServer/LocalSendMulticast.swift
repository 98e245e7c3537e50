import LocafotoClock
import LocafotoLocalSend
import Logging
import NIOCore
import NIOPosix

/// LocalSend's multicast discovery on the network (`LocalSendDiscovery` decides): joins
/// 224.0.0.167 on UDP 53317 (shared with other LocalSend programs on the machine), announces
/// the node once, and answers announcements. Runs while LocalSend is on.
enum LocalSendMulticast {
    typealias Datagram = AddressedEnvelope<ByteBuffer>

    /// - Parameter heard: told the devices heard, after each datagram that changed them.
    static func run(
        own: LocalSendDevice, group: any EventLoopGroup, clock: any AgentClock, logger: Logger,
        heard: @Sendable ([LocalSendDiscovery.Heard]) -> Void
    ) async throws {
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "0.0.0.0", port: LocalSendDiscovery.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<Datagram, Datagram>(wrappingChannelSynchronously: channel)
                }
            }
        let groupAddress = try SocketAddress(ipAddress: LocalSendDiscovery.group, port: LocalSendDiscovery.port)
        guard let multicast = channel.channel as? any MulticastChannel else {
            try? await channel.channel.close()
            throw ChannelError.operationUnsupported
        }
        do {
            try await multicast.joinGroup(groupAddress).get()
        } catch {
            try? await channel.channel.close()
            throw error
        }
        var discovery = LocalSendDiscovery(own: own)
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                Datagram(remoteAddress: groupAddress, data: ByteBuffer(bytes: discovery.announcement)))
            logger.info("LocalSend: announced on \(LocalSendDiscovery.group):\(LocalSendDiscovery.port)")
            for try await datagram in inbound {
                let from = datagram.remoteAddress.ipAddress ?? "?"
                let before = discovery.heard
                let actions = discovery.receive(Array(datagram.data.readableBytesView), from: from, now: clock.now)
                if discovery.heard != before {
                    heard(discovery.heard.values.sorted { $0.device.alias < $1.device.alias })
                }
                for action in actions {
                    switch action {
                    case .multicast(let bytes):
                        try await outbound.write(Datagram(remoteAddress: groupAddress, data: ByteBuffer(bytes: bytes)))
                    }
                }
            }
        }
    }
}
