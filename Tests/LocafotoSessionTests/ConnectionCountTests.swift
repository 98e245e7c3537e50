import Testing

@testable import LocafotoSession

/// The listener gate's bookkeeping as a value (the sockets: PeerTransportTests.gate and
/// Tests/Integration/test_limits.py).
@Suite struct ConnectionCountTests {
    @Test func connectionsAreCappedOverallAndPerAddress() {
        var limits = ConnectionLimits()
        limits.maxConnections = 4
        limits.maxPerAddress = 2
        var c = ConnectionCount()
        #expect(c.admit("10.0.0.1", limits: limits) == nil)
        #expect(c.admit("10.0.0.1", limits: limits) == nil)
        #expect(c.admit("10.0.0.1", limits: limits) == .address("10.0.0.1", 2))
        #expect(c.admit("10.0.0.2", limits: limits) == nil)
        #expect(c.admit("10.0.0.3", limits: limits) == nil)
        #expect(c.admit("10.0.0.4", limits: limits) == .full(4))
        c.release("10.0.0.1")
        #expect(c.total == 3 && c.perAddress["10.0.0.1"] == 1)
        #expect(c.admit("10.0.0.4", limits: limits) == nil)
        // Releasing what was never admitted changes nothing.
        c.release("192.0.2.9")
        #expect(c.total == 4)
        for a in ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"] { c.release(a) }
        #expect(c == ConnectionCount())
    }
}
