import LocafotoClock
import LocafotoLocalSend
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// LocalSend's multicast discovery on the network (`LocalSendDiscovery` decides): joins
/// 224.0.0.167, and ff12::fd3a:e420 where an interface has IPv6, on UDP 53317 (shared with
/// other LocalSend programs on the machine), announces the node once, and answers
/// announcements, each on the interface it came from. Only on the interfaces the agent's
/// `--listen` address names (`LocalSendPresence`): a node listening on 127.0.0.1 says nothing on
/// the LAN. Runs while LocalSend is on, once its HTTPS port accepts.
enum LocalSendMulticast {
    typealias Datagram = AddressedEnvelope<ByteBuffer>

    /// - Parameter heard: told the devices heard, after each datagram that changed them.
    static func run(
        own: LocalSendDevice, presence: LocalSendPresence, group: any EventLoopGroup, clock: any AgentClock,
        logger: Logger, heard: @escaping @Sendable ([LocalSendDiscovery.Heard]) -> Void
    ) async throws {
        let (datagrams, arrived) = AsyncStream.makeStream(
            of: (Int, Datagram).self, bufferingPolicy: .bufferingNewest(LocalSendDiscovery.maxDevices))
        // By the index its datagrams are tagged with; a way that cannot be joined or sent on is
        // left out (one family or interface may lack what another has: no IPv6 route, say).
        var joined: [Int: (channel: any Channel, way: LocalSendPresence.Way)] = [:]
        defer { for j in joined.values { j.channel.close(promise: nil) } }
        var discovery = LocalSendDiscovery(own: own)
        for (index, way) in presence.ways.enumerated() {
            do {
                let channel = try await open(way, group: group) { arrived.yield((index, $0)) }
                joined[index] = (channel, way)
                try await channel.writeAndFlush(
                    Datagram(remoteAddress: way.groupAddress, data: ByteBuffer(bytes: discovery.announcement)))
                logger.info("LocalSend: announced on \(way.label)")
            } catch {
                joined.removeValue(forKey: index)?.channel.close(promise: nil)
                logger.notice(
                    "LocalSend: no multicast on \(way.label) (\(LocalSendService.problem(error, port: LocalSendDiscovery.port)))"
                )
            }
        }
        guard !joined.isEmpty else { throw LocalSendMulticastUnavailable(where: presence.label) }
        await withTaskCancellationHandler {
            for await (index, datagram) in datagrams {
                guard let (channel, way) = joined[index] else { continue }
                var from = datagram.remoteAddress.ipAddress ?? "?"
                // A link-local IPv6 address is reachable through its interface only.
                if let scope = way.scope, from.lowercased().hasPrefix("fe80:") { from += "%" + scope }
                let before = discovery.heard
                let actions = discovery.receive(Array(datagram.data.readableBytesView), from: from, now: clock.now)
                if discovery.heard != before {
                    heard(discovery.heard.values.sorted { $0.device.alias < $1.device.alias })
                }
                for action in actions {
                    switch action {
                    case .multicast(let bytes):
                        channel.writeAndFlush(
                            Datagram(remoteAddress: way.groupAddress, data: ByteBuffer(bytes: bytes)), promise: nil)
                    }
                }
            }
        } onCancel: {
            arrived.finish()
        }
    }

    /// A UDP socket on port 53317 joined to the group one way, handing each datagram to `receive`.
    private static func open(
        _ way: LocalSendPresence.Way, group: any EventLoopGroup, receive: @escaping @Sendable (Datagram) -> Void
    ) async throws -> any Channel {
        let v6 = way.groupAddress.protocol == .inet6
        var bootstrap = DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Receiver(receive))
                }
            }
        if v6 { bootstrap = bootstrap.channelOption(Self.ipv6(.ipv6_v6only), value: 1) }
        let channel = try await bootstrap.bind(host: v6 ? "::" : "0.0.0.0", port: LocalSendDiscovery.port).get()
        do {
            guard let multicast = channel as? any MulticastChannel else { throw ChannelError.operationUnsupported }
            switch way.interface {
            case nil:
                try await multicast.joinGroup(way.groupAddress).get()
            case let device?:
                try await multicast.joinGroup(way.groupAddress, device: device).get()
                // Sent from that interface only, and only this socket's own groups received
                // (Linux otherwise hands it every group any socket joined, on any interface).
                if v6 {
                    try await channel.setOption(Self.ipv6(.ipv6_multicast_if), value: device.interfaceIndex).get()
                    try await channel.setOption(Self.ipv6(.init(rawValue: Self.ipv6MulticastAll)), value: 0).get()
                } else if case .v4(let a)? = device.address {
                    // NIO passes the value as 8 bytes, which Linux reads as an ip_mreq whose second
                    // half names the interface: the address goes in both halves.
                    let address = Int(a.address.sin_addr.s_addr)
                    let interface = address << 32 | address
                    try await channel.setOption(.ipOption(.ip_multicast_if), value: interface).get()
                    try await channel.setOption(.ipOption(.init(rawValue: Self.ipMulticastAll)), value: 0).get()
                }
            }
        } catch {
            try? await channel.close()
            throw error
        }
        return channel
    }

    /// No way of the presence could be joined.
    struct LocalSendMulticastUnavailable: Error, CustomStringConvertible {
        let `where`: String
        var description: String { "the group could not be joined on \(`where`)" }
    }

    static func ipv6(_ name: NIOBSDSocket.Option) -> ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: .ipv6, name: name)
    }

    /// IP_MULTICAST_ALL and IPV6_MULTICAST_ALL (<linux/in.h>, <linux/in6.h>): Glibc does not name them.
    static let ipMulticastAll: CInt = 49
    static let ipv6MulticastAll: CInt = 29

    /// Hands each datagram on; nothing else runs on the socket.
    private final class Receiver: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = Datagram
        let receive: @Sendable (Datagram) -> Void
        init(_ receive: @escaping @Sendable (Datagram) -> Void) { self.receive = receive }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let d = unwrapInboundIn(data)
            guard d.data.readableBytes <= LocalSendDiscovery.maxDatagramBytes else { return }
            receive(d)
        }
    }
}
