import Foundation

/// LocalSend's multicast discovery (protocol README §3.1) for one node, as a value: datagrams
/// and the time in, what to send and whom it heard out; no I/O. The node announces itself when
/// it starts (`announcement`), and answers another device's announcement with its own
/// description (`announce: false`) on the same group — the protocol's UDP answer; it does not
/// make HTTP requests to strangers on a datagram's word.
public struct LocalSendDiscovery: Sendable {
    public static let group = "224.0.0.167"
    /// The IPv6 group (link-local scope), joined where an interface has IPv6.
    public static let groupV6 = "ff12::fd3a:e420"
    public static let port = 53317
    /// A datagram larger than this is not read (an announcement is a few hundred bytes).
    public static let maxDatagramBytes = 16 << 10
    /// One answer per announcing device (by address) in this long, whatever it sends: a flood
    /// of announcements does not make the node flood the group.
    public static let answerInterval: Duration = .seconds(5)
    /// Devices heard and remembered at most (the oldest go first).
    public static let maxDevices = 256

    /// A device heard on the group: what it says of itself (unverified: anyone can send a
    /// datagram), where from, and when.
    public struct Heard: Sendable, Equatable {
        public var device: LocalSendDevice
        public var address: String
        public var at: ContinuousClock.Instant

        public init(device: LocalSendDevice, address: String, at: ContinuousClock.Instant) {
            self.device = device
            self.address = address
            self.at = at
        }
    }

    public enum Action: Sendable, Equatable {
        /// Send these bytes to the group.
        case multicast([UInt8])
    }

    /// This node as it describes itself (its fingerprint is its certificate's).
    public let own: LocalSendDevice
    public private(set) var heard: [String: Heard] = [:]
    private var answered: [String: ContinuousClock.Instant] = [:]

    public init(own: LocalSendDevice) { self.own = own }

    /// The announcement the node sends when it starts listening.
    public var announcement: [UInt8] { Self.encode(own, announce: true) }

    /// A datagram from `address`. Nothing comes of what is not a LocalSend device, of the node's
    /// own datagrams, or of an answer (`announce` false) beyond remembering the device.
    public mutating func receive(_ datagram: [UInt8], from address: String, now: ContinuousClock.Instant)
        -> [Action]
    {
        guard datagram.count <= Self.maxDatagramBytes, let device = try? LocalSendJSON.device(datagram),
            device.fingerprint != own.fingerprint
        else { return [] }
        remember(Heard(device: device, address: address, at: now))
        guard device.announce == true else { return [] }
        if let last = answered[address], now - last < Self.answerInterval { return [] }
        answered[address] = now
        if answered.count > Self.maxDevices {
            answered = answered.filter { now - $0.value < Self.answerInterval }
        }
        return [.multicast(Self.encode(own, announce: false))]
    }

    private mutating func remember(_ h: Heard) {
        heard[h.device.fingerprint] = h
        if heard.count > Self.maxDevices, let oldest = heard.min(by: { $0.value.at < $1.value.at }) {
            heard[oldest.key] = nil
        }
    }

    static func encode(_ device: LocalSendDevice, announce: Bool) -> [UInt8] {
        var d = device
        d.announce = announce
        return LocalSendJSON.encode(d)
    }
}
