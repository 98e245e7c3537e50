import Foundation
import LocafotoClock
import NIOCore
import Synchronization

/// What one peer, or many, may hold of a node's connections (protocol/framing.md "Limits").
/// Without them, idle TCP connections used up the open-files limit and locked the agent out,
/// and connections holding half a frame each kept ~100 KB of memory.
public struct ConnectionLimits: Sendable {
    /// Peer connections open at once, inbound (outbound ones are the agent's own doing).
    public var maxConnections = 256
    /// Inbound connections open at once from one IP address.
    public var maxPerAddress = 16
    /// Time from accepting a connection to the end of the Noise handshake.
    public var handshakeTimeout: TimeAmount = .seconds(10)
    /// Time from the first byte of a frame to its last.
    public var frameTimeout: TimeAmount = .seconds(30)
    /// Largest frame before the handshake ends: message 3 is 32 + 16 + HELLO (≤ 4096) + 16 bytes.
    public static let maxHandshakeFrame = 32 + 16 + 4096 + 16

    public init() {}
}

/// Open inbound connections, overall and per source address: the bookkeeping behind the cap,
/// free of sockets (tested as a value).
package struct ConnectionCount: Sendable, Equatable {
    private(set) var total = 0
    private(set) var perAddress: [String: Int] = [:]

    package enum Refusal: Equatable {
        case full(Int)
        case address(String, Int)

        package var message: String {
            switch self {
            case .full(let n): "\(n) peer connections are open, the most this agent takes (agent --max-connections)"
            case .address(let a, let n):
                "\(a) already has \(n) connections open, the most one address may have (agent --max-connections-per-address)"
            }
        }
    }

    package mutating func admit(_ address: String, limits: ConnectionLimits) -> Refusal? {
        guard total < limits.maxConnections else { return .full(limits.maxConnections) }
        guard perAddress[address, default: 0] < limits.maxPerAddress else {
            return .address(address, limits.maxPerAddress)
        }
        total += 1
        perAddress[address, default: 0] += 1
        return nil
    }

    package mutating func release(_ address: String) {
        guard let n = perAddress[address] else { return }
        total -= 1
        perAddress[address] = n > 1 ? n - 1 : nil
    }
}

/// The listener's gate: admits or refuses each accepted connection and counts it until it closes.
/// When the last of a burst of connections closes, the C heap is trimmed, so the memory a flood
/// of half-sent frames took goes back to the system instead of staying with the agent.
package final class ConnectionGate: Sendable {
    package let limits: ConnectionLimits
    /// How long after the burst's last close the heap is trimmed. A closed channel's buffers are
    /// freed only when its session task has ended, after `closeFuture`; trimmed at once, the
    /// heap kept 10–15 MiB of them (bench-connections.py).
    package static let trimDelay: Duration = .seconds(2)
    private let state = Mutex(State())

    private struct State {
        var count = ConnectionCount()
        var closedSinceTrim = 0
        var trimPending = false
        var refused = 0
        var lastRefusalLog: ContinuousClock.Instant?
    }

    private let clock: any AgentClock
    /// Trims asked for by `release`, done by `trimWhenAsked` (one at a time: a trim that is
    /// already due covers the next).
    private let trims = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    package init(limits: ConnectionLimits, clock: any AgentClock = SystemClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// nil: admitted (call `release` when it closes). Otherwise the refusal, and whether to log
    /// it (at most one line every 10 s, with the number refused meanwhile).
    package func admit(_ address: String) -> (ConnectionCount.Refusal, log: Int?)? {
        state.withLock { s in
            guard let refusal = s.count.admit(address, limits: limits) else { return nil }
            s.refused += 1
            let now = clock.now
            if let last = s.lastRefusalLog, now - last < .seconds(10) { return (refusal, nil) }
            s.lastRefusalLog = now
            defer { s.refused = 0 }
            return (refusal, s.refused)
        }
    }

    package func release(_ address: String) {
        let trim = state.withLock { s -> Bool in
            s.count.release(address)
            s.closedSinceTrim += 1
            guard s.count.total == 0 || s.closedSinceTrim >= 1024 else { return false }
            guard s.closedSinceTrim >= 16, !s.trimPending else { return false }
            s.closedSinceTrim = 0
            s.trimPending = true
            return true
        }
        if trim { trims.continuation.yield() }
    }

    /// Trims the heap `trimDelay` after each burst that `release` saw end, until the task is
    /// cancelled (the agent runs it as a service). Off the event loops: trimming a large heap
    /// takes a few milliseconds.
    package func trimWhenAsked() async {
        for await _ in trims.stream {
            do {
                try await clock.sleep(for: Self.trimDelay)
            } catch {
                return
            }
            state.withLock { $0.trimPending = false }
            Self.trimHeap()
        }
    }
}

extension ConnectionGate {
    /// glibc's `malloc_trim(0)`: hands free heap pages back to the system. Looked up at run time
    /// (it is declared in <malloc.h>, which Swift's Glibc module does not import).
    package static func trimHeap() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// glibc's `mallopt(M_ARENA_MAX, 1)`: every thread allocates from one heap arena (each
    /// thread still has its own tcache for small blocks). Call it first thing in a long-lived
    /// process, before its threads start. Why: with an arena per thread (NIO's event loops, the
    /// thread pool, the cooperative pool), what a transfer frees stays in each arena's free
    /// lists; an agent kept 17 MiB of anonymous memory after receiving 40 photos against 6 MiB
    /// with one arena, at the same speed (measured on W5, issue 24).
    package static func useOneHeapArena() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, 1)
    }
}

/// Framing limits that change when the handshake ends, shared by `FrameDecoder` and
/// `HandshakeGuard` of one connection. Only touched on that connection's event loop.
package final class FrameBudget: @unchecked Sendable {
    package var maxFrame = ConnectionLimits.maxHandshakeFrame
    package let frameTimeout: TimeAmount
    /// When the frame now being read began to arrive; nil between frames.
    package var partialSince: NIODeadline?
    /// The one pending check of `partialSince` (at most one per connection, re-armed only when
    /// it fires: a bulk transfer leaves a frame half-read after nearly every read, and a timer
    /// scheduled and cancelled per frame would sit on the transfer path).
    package var frameDeadline: Scheduled<Void>?
    /// The session asked for bytes and has not had them yet (`ReadWatch`). When it stopped
    /// asking (back-pressure: a slow disk, a decision awaited), a frame left half-read is not the
    /// peer's doing, and its deadline waits.
    package var readOutstanding = true
    /// Frames decoded after the handshake (the session compares it with what it has read:
    /// `PeerSession.hasBacklog`). Read from the session's task, hence atomic.
    package let transportFrames = Atomic<Int>(0)

    package init(frameTimeout: TimeAmount) {
        self.frameTimeout = frameTimeout
    }
}

/// Closes a connection whose Noise handshake has not ended `timeout` after it opened, and
/// lifts the pre-handshake frame cap once it has. An XX handshake is exactly three frames,
/// read or written, so counting frames tells when it is over without the session's help.
package final class HandshakeGuard: ChannelDuplexHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    package let budget: FrameBudget
    private let timeout: TimeAmount
    private var frames = 0
    private var deadline: Scheduled<Void>?

    package init(budget: FrameBudget, timeout: TimeAmount) {
        self.budget = budget
        self.timeout = timeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) { stopTimers() }

    package func channelInactive(context: ChannelHandlerContext) {
        stopTimers()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if frames >= 3 { budget.transportFrames.add(1, ordering: .relaxed) }
        countFrame()
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        countFrame()
        context.write(data, promise: promise)
    }

    private func countFrame() {
        guard frames < 3 else { return }
        frames += 1
        if frames == 3 {
            deadline?.cancel()
            deadline = nil
            budget.maxFrame = Int(UInt16.max)
        }
    }

    private func stopTimers() {
        deadline?.cancel()
        deadline = nil
        budget.frameDeadline?.cancel()
        budget.frameDeadline = nil
    }
}

extension ConnectionLimits {
    /// Raises the soft open-files limit to the hard one (commonly 1024 → 524288), so the
    /// connection caps, not the descriptor table, bound what peers can hold; returns the new
    /// soft limit.
    @discardableResult
    public static func raiseOpenFilesLimit() -> UInt64 {
        var l = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l) == 0 else { return 0 }
        if l.rlim_cur < l.rlim_max {
            var raised = l
            raised.rlim_cur = l.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { l = raised }
        }
        return UInt64(l.rlim_cur)
    }
}

/// Tells `FrameBudget` whether the session is asking for bytes: it sits next to the socket, so
/// it sees a `read()` only when every handler above let it through (NIOAsyncChannel holds them
/// back while its buffer is full).
package final class ReadWatch: ChannelDuplexHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer

    private let budget: FrameBudget

    package init(budget: FrameBudget) {
        self.budget = budget
    }

    package func read(context: ChannelHandlerContext) {
        budget.readOutstanding = true
        context.read()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        budget.readOutstanding = false
        context.fireChannelReadComplete()
    }
}
