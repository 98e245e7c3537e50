import Foundation

/// How many wrong PINs LocalSend senders may try, and how fast (protocol/localsend.md "PIN").
/// Two budgets, both checked before a PIN is compared, so that a refused guess tells nothing:
/// - per sender network (an IPv4 address, an IPv6 /64: one host holds a whole /64; a
///   link-local IPv6 address alone, as the whole LAN shares fe80::/64), 3 wrong PINs, then 30 s
///   of 429;
/// - over all senders, a bucket of 5 wrong PINs that refills one every 12 s. Without it, one
///   host with 250 addresses had 750 guesses evaluated in a second. With it, at most 5 + 5 a
///   minute are compared however many addresses guess: a 4-digit PIN takes about 17 hours on
///   average, 33 at most; the right PIN is refused too while the bucket is empty.
/// A value: times in, verdicts out.
public struct PINGuard: Sendable, Equatable {
    public static let perNetwork = 3
    public static let networkWait: Duration = .seconds(30)
    public static let burst = 5
    public static let refill: Duration = .seconds(12)
    /// Networks remembered at once; the oldest are forgotten first. The bucket lets in at most
    /// `burst` new ones per `refill`, so the table holds far fewer in practice.
    public static let maxNetworks = 1_024

    struct Failures: Sendable, Equatable {
        var count: Int
        var last: ContinuousClock.Instant
    }

    private var networks: [String: Failures] = [:]
    /// When the bucket is full again ("theoretical arrival time", as GCRA counts); nil: full.
    private var refilledAt: ContinuousClock.Instant?

    public init() {}

    /// nil: a PIN from `address` may be compared now. Otherwise the seconds to wait (429).
    public mutating func wait(for address: String, now: ContinuousClock.Instant) -> Int? {
        if let t = refilledAt, t - now > Self.refill * (Self.burst - 1) {
            return Self.seconds(t - now - Self.refill * (Self.burst - 1))
        }
        let key = Self.network(of: address)
        if let f = networks[key], f.count >= Self.perNetwork {
            let left = Self.networkWait - (now - f.last)
            guard left <= .zero else { return Self.seconds(left) }
            networks[key] = nil
        }
        return nil
    }

    /// A wrong PIN from `address`, compared at `now`.
    public mutating func failed(_ address: String, now: ContinuousClock.Instant) {
        refilledAt = max(refilledAt ?? now, now) + Self.refill
        let key = Self.network(of: address)
        networks[key] = Failures(count: (networks[key]?.count ?? 0) + 1, last: now)
        if networks.count > Self.maxNetworks {
            let expired = networks.filter { now - $0.value.last >= Self.networkWait }.map(\.key)
            for k in expired { networks[k] = nil }
            while networks.count > Self.maxNetworks, let oldest = networks.min(by: { $0.value.last < $1.value.last }) {
                networks[oldest.key] = nil
            }
        }
    }

    /// The right PIN from `address`: its network starts again (the global bucket does not).
    public mutating func succeeded(_ address: String) { networks[Self.network(of: address)] = nil }

    /// Networks remembered now (bounded by `maxNetworks`).
    public var rememberedNetworks: Int { networks.count }

    /// An IPv4 address as it is; an IPv6 address as its /64 (an IPv4-mapped one as its IPv4, a
    /// link-local one as itself); anything else as it is.
    public static func network(of address: String) -> String {
        var v6 = in6_addr()
        let text = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return address }
        let b = withUnsafeBytes(of: &v6) { Array($0) }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF {
            return b[12..<16].map(String.init).joined(separator: ".")
        }
        // Link-local (fe80::/10): every device of the LAN shares that /64; each counts alone.
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return text.lowercased() }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    private static func seconds(_ d: Duration) -> Int { max(1, Int((d + .milliseconds(999)).components.seconds)) }
}
