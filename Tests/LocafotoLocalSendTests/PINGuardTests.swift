import LocafotoLocalSend
import Testing

/// Wrong LocalSend PINs against one host with many addresses (issue 42: 750 guesses from 250
/// loopback addresses were all compared in 1.1 s). Times are moved by hand.
@Suite("LocalSend: the PIN's guess budget")
struct PINGuardTests {
    static let t0 = ContinuousClock.now

    /// Wrong PINs from `addresses` in turn, all at `now`, until one is refused: how many were
    /// compared.
    static func guesses(_ guardian: inout PINGuard, from addresses: [String], at now: ContinuousClock.Instant) -> Int {
        var compared = 0
        for a in addresses {
            if guardian.wait(for: a, now: now) != nil { break }
            guardian.failed(a, now: now)
            compared += 1
        }
        return compared
    }

    @Test("250 addresses of one host get the global budget's 5 guesses, not 750")
    func manyAddresses() {
        var g = PINGuard()
        let addresses = (1...250).map { "127.0.0.\($0)" }
        #expect(Self.guesses(&g, from: addresses, at: Self.t0) == PINGuard.burst)
        // A fresh address is held back too, and told how long.
        #expect(g.wait(for: "127.0.1.1", now: Self.t0) == 12)
        // One more guess every 12 s: 5 a minute, 300 an hour, whatever the addresses.
        var compared = 0
        var now = Self.t0
        for minute in 0..<60 {
            for tick in 0..<5 {
                now = Self.t0 + PINGuard.refill * (minute * 5 + tick + 1)
                compared += Self.guesses(&g, from: ["10.0.\(minute).\(tick)"], at: now)
            }
        }
        #expect(compared == 300)
        #expect(g.rememberedNetworks <= PINGuard.maxNetworks)
    }

    @Test("one address: three wrong PINs, then 30 s of 429; the right PIN clears its count")
    func oneAddress() {
        var g = PINGuard()
        for _ in 0..<3 {
            #expect(g.wait(for: "192.168.1.20", now: Self.t0) == nil)
            g.failed("192.168.1.20", now: Self.t0)
        }
        #expect(g.wait(for: "192.168.1.20", now: Self.t0) == 30)
        #expect(g.wait(for: "192.168.1.20", now: Self.t0 + .seconds(29)) == 1)
        #expect(g.wait(for: "192.168.1.20", now: Self.t0 + PINGuard.networkWait) == nil)
        g.failed("192.168.1.30", now: Self.t0 + .seconds(40))
        g.succeeded("192.168.1.30")
        #expect(g.wait(for: "192.168.1.30", now: Self.t0 + .seconds(41)) == nil)
    }

    @Test("IPv6 addresses count by their /64; IPv4-mapped ones as IPv4")
    func networks() {
        #expect(PINGuard.network(of: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(PINGuard.network(of: "2001:db8:1:2:bbbb:cccc:dddd:eeee") == "2001:db8:1:2::/64")
        #expect(PINGuard.network(of: "fe80::1%lo") == "fe80::1")
        #expect(PINGuard.network(of: "::ffff:192.168.1.20") == "192.168.1.20")
        #expect(PINGuard.network(of: "192.168.1.20") == "192.168.1.20")
        #expect(PINGuard.network(of: "?") == "?")
        var g = PINGuard()
        for i in 1...3 { g.failed("2001:db8:1:2::\(i)", now: Self.t0) }
        #expect(g.wait(for: "2001:db8:1:2::ffff", now: Self.t0 + .seconds(20)) == 10)
        #expect(g.wait(for: "2001:db8:1:3::1", now: Self.t0 + .seconds(20)) == nil)
    }

    @Test("the table of networks stays bounded")
    func bounded() {
        var g = PINGuard()
        for i in 0..<3_000 {
            let now = Self.t0 + PINGuard.refill * (i + 1)
            g.failed("10.\(i / 256 % 256).\(i % 256).1", now: now)
        }
        #expect(g.rememberedNetworks <= PINGuard.maxNetworks)
    }
}
