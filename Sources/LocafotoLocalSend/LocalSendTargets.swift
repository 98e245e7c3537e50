import Foundation

/// Which LocalSend device `locafoto send NAME` means (protocol/localsend.md "Sending"), from the
/// devices heard on the multicast group and those met before; no I/O.
///
/// A name is a device's alias (any case) or a prefix of its certificate's fingerprint (4 hex
/// digits or more); `localsend:ADDRESS[:PORT]` names whoever answers there, whose certificate is
/// then learnt at the first connection, as the apps do for a device added by hand.
public enum LocalSendTargets {
    /// Where to send, and the certificate the device must show (nil: learnt on connecting).
    public struct Target: Sendable, Equatable {
        public var alias: String
        public var host: String
        public var port: Int
        public var fingerprint: String?

        public init(alias: String, host: String, port: Int, fingerprint: String?) {
            self.alias = alias
            self.host = host
            self.port = port
            self.fingerprint = fingerprint
        }
    }

    /// A device met before (it sent to this node, or was sent to): its certificate, its alias and
    /// the address it last used.
    public struct Known: Sendable, Equatable {
        public var fingerprint: String
        public var alias: String
        public var address: String?
        /// The port its server said it listens on (nil: 53317).
        public var port: Int?

        public init(fingerprint: String, alias: String, address: String?, port: Int? = nil) {
            self.fingerprint = fingerprint
            self.alias = alias
            self.address = address
            self.port = port
        }
    }

    public enum Resolution: Sendable, Equatable {
        case target(Target)
        /// No LocalSend device by that name.
        case none
        /// Several devices match (alias and fingerprint of each).
        case ambiguous([(alias: String, fingerprint: String)])
        /// The device answering to a known alias shows another certificate than the one met before.
        case certificateChanged(alias: String, known: String, now: String)
        /// The device speaks plain HTTP (encryption off in its LocalSend settings).
        case plainHTTP(alias: String)

        public static func == (a: Resolution, b: Resolution) -> Bool {
            switch (a, b) {
            case (.target(let x), .target(let y)): x == y
            case (.none, .none): true
            case (.ambiguous(let x), .ambiguous(let y)): x.map(\.fingerprint) == y.map(\.fingerprint)
            case (.certificateChanged(let a1, let k1, let n1), .certificateChanged(let a2, let k2, let n2)):
                a1 == a2 && k1 == k2 && n1 == n2
            case (.plainHTTP(let x), .plainHTTP(let y)): x == y
            default: false
            }
        }
    }

    /// How the user marks a LocalSend device in `send` (needed for an address, optional for a name).
    public static let prefix = "localsend:"

    /// - Parameters: `query` as the user wrote it; `nearby`: heard on the group lately;
    ///   `known`: met before.
    public static func resolve(_ query: String, nearby: [LocalSendDiscovery.Heard], known: [Known]) -> Resolution {
        var q = query.trimmingCharacters(in: .whitespaces)
        if q.lowercased().hasPrefix(prefix) { q = String(q.dropFirst(prefix.count)) }
        guard !q.isEmpty else { return .none }
        if let (host, port) = address(q) {
            if let heard = nearby.first(where: {
                $0.address == host && ($0.device.port ?? LocalSendDiscovery.port) == port
            }),
                heard.device.protocol == "http"
            {
                return .plainHTTP(alias: heard.device.alias)
            }
            return .target(Target(alias: host, host: host, port: port, fingerprint: nil))
        }
        let hex = q.uppercased()
        let isPrefix = hex.count >= 4 && hex.allSatisfy(\.isHexDigit)
        func matches(_ alias: String, _ fingerprint: String) -> Bool {
            alias.caseInsensitiveCompare(q) == .orderedSame || (isPrefix && fingerprint.hasPrefix(hex))
        }
        var found: [String: Target] = [:]
        var plain: String?
        for h in nearby where matches(h.device.alias, h.device.fingerprint) {
            if h.device.protocol == "http" {
                plain = h.device.alias
                continue
            }
            found[h.device.fingerprint] = Target(
                alias: h.device.alias, host: h.address, port: h.device.port ?? LocalSendDiscovery.port,
                fingerprint: h.device.fingerprint)
        }
        for k in known where found[k.fingerprint] == nil && matches(k.alias, k.fingerprint) {
            // A device met before and not heard now: tried at its last address and port.
            if let address = k.address {
                found[k.fingerprint] = Target(
                    alias: k.alias, host: address, port: k.port ?? LocalSendDiscovery.port, fingerprint: k.fingerprint)
            }
        }
        // A known alias now heard with another certificate: refused loudly, never sent to.
        for k in known where k.alias.caseInsensitiveCompare(q) == .orderedSame {
            if let other = found.values.first(where: { $0.fingerprint != k.fingerprint }),
                !nearby.contains(where: { $0.device.fingerprint == k.fingerprint })
            {
                return .certificateChanged(alias: k.alias, known: k.fingerprint, now: other.fingerprint ?? "")
            }
        }
        let all = found.values.sorted { ($0.fingerprint ?? "") < ($1.fingerprint ?? "") }
        if all.count > 1 { return .ambiguous(all.map { ($0.alias, $0.fingerprint ?? "") }) }
        if let one = all.first { return .target(one) }
        if let plain { return .plainHTTP(alias: plain) }
        return .none
    }

    /// `HOST[:PORT]` when HOST is an IP address (IPv6 in brackets with a port); port 53317 by
    /// default.
    static func address(_ s: String) -> (String, Int)? {
        var host = s
        var port = LocalSendDiscovery.port
        if s.hasPrefix("["), let end = s.firstIndex(of: "]") {
            host = String(s[s.index(after: s.startIndex)..<end])
            let rest = s[s.index(after: end)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = Int(rest.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
            return isIPv6(host) ? (host, port) : nil
        }
        if isIPv6(s) { return (s, port) }
        if let colon = s.lastIndex(of: ":") {
            guard let p = Int(s[s.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            host = String(s[..<colon])
            port = p
        }
        return isIPv4(host) ? (host, port) : nil
    }

    static func isIPv4(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { p in
                !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) && Int(p)! <= 255
            }
    }

    /// Hex groups with colons (and a dotted tail), then an optional `%zone` (an interface name).
    static func isIPv6(_ s: String) -> Bool {
        let parts = s.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let address = parts[0]
        if parts.count == 2, parts[1].isEmpty || !parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            return false
        }
        return address.count <= 45 && address.filter { $0 == ":" }.count >= 2
            && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}
