import Foundation
import LocafotoErrors

/// `GET /v1/localsend`, and the answer to `PUT /v1/localsend`: whether this node speaks
/// LocalSend, where, as what, and the LocalSend devices it has met.
public struct LocalSendStatus: Codable, Sendable, Equatable {
    public struct Device: Codable, Sendable, Equatable {
        public enum Trust: String, NamedChoice {
            /// "LocalSend, not verified": its offers wait in the inbox.
            case known
            /// Its offers are accepted at once.
            case trusted
            /// The answer of `forget`: the device is no longer remembered.
            case forgotten
        }

        /// The SHA-256 of the device's TLS certificate (uppercase hex).
        public var fingerprint: String
        public var alias: String
        public var deviceModel: String?
        public var deviceType: String?
        public var trust: Trust
        public var lastSeenAt: Date
        public var lastAddress: String?

        public init(
            fingerprint: String, alias: String, deviceModel: String?, deviceType: String?, trust: Trust,
            lastSeenAt: Date, lastAddress: String?
        ) {
            self.fingerprint = fingerprint
            self.alias = alias
            self.deviceModel = deviceModel
            self.deviceType = deviceType
            self.trust = trust
            self.lastSeenAt = lastSeenAt
            self.lastAddress = lastAddress
        }
    }

    /// A device heard on LocalSend's multicast group: what it says of itself, unverified.
    public struct Nearby: Codable, Sendable, Equatable {
        public var alias: String
        /// What it claims its certificate's fingerprint is (checked when a connection is made).
        public var fingerprint: String
        public var address: String
        public var port: Int?
        public var deviceModel: String?
        public var deviceType: String?

        public init(
            alias: String, fingerprint: String, address: String, port: Int?, deviceModel: String?, deviceType: String?
        ) {
            self.alias = alias
            self.fingerprint = fingerprint
            self.address = address
            self.port = port
            self.deviceModel = deviceModel
            self.deviceType = deviceType
        }
    }

    /// Turned on (kept across restarts).
    public var enabled: Bool
    /// The HTTPS port it listens on now; nil while it does not.
    public var port: Int?
    /// This node's certificate fingerprint, as LocalSend devices see it; nil before the first `on`.
    public var fingerprint: String?
    /// The name LocalSend devices see.
    public var alias: String
    /// Why it does not listen although enabled.
    public var problem: String?
    /// LocalSend senders must give the PIN the user set (`locafoto localsend pin`).
    public var pinRequired: Bool
    public var devices: [Device]
    /// Devices heard on the multicast group while on.
    public var nearby: [Nearby]

    public init(
        enabled: Bool, port: Int?, fingerprint: String?, alias: String, problem: String?, pinRequired: Bool,
        devices: [Device], nearby: [Nearby] = []
    ) {
        self.nearby = nearby
        self.enabled = enabled
        self.pinRequired = pinRequired
        self.port = port
        self.fingerprint = fingerprint
        self.alias = alias
        self.problem = problem
        self.devices = devices
    }
}

/// `PUT /v1/localsend`: turn it on or off, and/or set the PIN senders must give ("" clears it).
public struct LocalSendSwitchRequest: Codable, Sendable, Equatable {
    public var enabled: Bool?
    public var pin: String?
    public init(enabled: Bool? = nil, pin: String? = nil) {
        self.enabled = enabled
        self.pin = pin
    }
}
