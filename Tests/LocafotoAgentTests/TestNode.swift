import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoFormats
import LocafotoInbox
import LocafotoPeers
import LocafotoReceiving
import LocafotoRelay
import LocafotoSession
import LocafotoTestSupport
import LocafotoTransfers
import LocafotoVault
import Logging
import NIOCore
import Synchronization

@testable import LocafotoAgent
@testable import LocafotoNode
@testable import LocafotoSending
@testable import LocafotoTransfers

/// A real agent in a temporary home: real identity file, real SQLite store and vault, a real TCP
/// listener on 127.0.0.1. Discovery is not started here (the integration suite runs avahi);
/// peers are introduced by feeding the directory the same resolved-service events avahi produces.
final class TestNode: @unchecked Sendable {
    let dir: String
    let agent: Agent
    private var listener: Task<Void, any Error>?
    private var listenerTask: Task<Void, any Error>?
    private(set) var port = 0

    /// `reopening`: a new agent on the home of an earlier one (an agent restart); the earlier
    /// node must have been stopped with `stop(keepingHome: true)`.
    init(
        name: String, vault: Bool = true, reopening earlier: TestNode? = nil, clock: any AgentClock = SystemClock(),
        configure: (inout AgentConfiguration) -> Void = { _ in }
    ) throws {
        dir =
            earlier?.dir
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("lf-agent-\(UUID().uuidString.prefix(8))")
            .path
        let home = NodeHome(directory: dir)
        var config = AgentConfiguration(home: home, socketPath: dir + "/agent.sock")
        config.displayName = name
        config.listenHost = "127.0.0.1"
        config.port = 0
        config.discovery = false
        // In-process agents share the test runner's cooperative pool, which CPU-heavy suites can
        // hold for tens of seconds: the 10 s handshake deadline would then measure the runner,
        // not the peer (the deadlines are tested against real agents in test_limits.py). The idle
        // timeout likewise: a connection whose other end waited 60 s for the pool was closed as
        // silent ("I/O on closed channel" in PairingTests and StaticPeerTests, in CI).
        config.connectionLimits.handshakeTimeout = .seconds(300)
        config.idleTimeout = 300
        configure(&config)
        var logger = Logger(label: "test-\(name)")
        logger.logLevel = .critical
        try home.prepare()
        if vault, earlier == nil {
            _ = try Vault.create(at: home.vaultDirectory, passphrase: TestNode.passphrase, kdf: .interactive)
        }
        agent = try Agent(configuration: config, logger: logger, clock: clock)
        if vault { _ = try agent.unlock(passphrase: TestNode.passphrase) }
        // As the roles' WorkQueueServices do in `locafoto agent`.
        work = Task { [agent] in
            await withDiscardingTaskGroup { group in
                for queue in agent.workQueues { group.addTask { await queue.run() } }
            }
        }
    }

    static var passphrase: SecretBytes { SecretBytes(copying: Array("correct horse battery staple".utf8)) }

    private var resuming: Task<Void, any Error>?
    private var work: Task<Void, Never>?

    /// Runs the agent's resume loop (as `locafoto agent` does), which first loads unfinished transfers.
    func startResuming() {
        let service = ResumeService(sender: agent.sender)
        resuming = Task { try await service.run() }
    }

    func start() async throws {
        let l = try await PeerListener.bind(agent)
        port = agent.listeningPort.withLock { $0 }
        listener = Task { try await l.run() }
    }

    /// Alice and Bob, the two nodes of most tests: bob listening, alice seeing him as mDNS would.
    static func aliceSeeingBob() async throws -> (alice: TestNode, bob: TestNode) {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        try await bob.start()
        alice.sees(bob)
        return (alice, bob)
    }

    /// Makes `other` visible to this node as mDNS would, optionally advertising a false fingerprint.
    func sees(_ other: TestNode, advertisedFingerprint: String? = nil, name: String? = nil) {
        agent.directory.apply(
            .resolved(
                DiscoveredService(
                    instanceName: name ?? other.agent.displayName, interfaceIndex: 1, family: .ipv4,
                    hostName: "localhost",
                    address: "127.0.0.1", port: UInt16(other.port),
                    txt: [
                        "v": "1", "fp": advertisedFingerprint ?? other.agent.identity.fingerprint.description,
                        "name": name ?? other.agent.displayName,
                    ],
                    isLocal: true, isOwn: false)))
    }

    // The timeouts below are hang guards, not timing assertions: with every suite running in
    // parallel on two cores, CPU-heavy synchronous tests can hold the cooperative thread pool for
    // tens of seconds before these tasks get to run.
    /// Waits for each phase of the transfer in turn (no polling) until it ends.
    func waitForTransfer(_ t: OutgoingTransfer, timeout: Double = hangGuardSeconds) async throws
        -> OutgoingTransfer.Snapshot
    {
        let deadline = ContinuousClock.now + .seconds(timeout)
        var phase = t.current.phase
        while !t.isFinished, ContinuousClock.now < deadline {
            phase = await t.snapshot(after: phase, timeout: deadline - ContinuousClock.now).phase
        }
        guard t.isFinished else { throw TestFailure("transfer did not finish in \(timeout) s: \(t.current.state)") }
        return t.current
    }

    /// Waits for each phase of the transfer in turn (no polling) until `condition` holds for it
    /// or it ends; returns it as it is then.
    func waitForTransfer(
        _ t: OutgoingTransfer, until condition: (OutgoingTransfer.Snapshot) -> Bool, timeout: Double = hangGuardSeconds
    ) async -> OutgoingTransfer.Snapshot {
        let deadline = ContinuousClock.now + .seconds(timeout)
        var now = t.current
        while !condition(now), now.finishedAt == nil, ContinuousClock.now < deadline {
            now = await t.snapshot(after: now.phase, timeout: deadline - ContinuousClock.now)
        }
        return now
    }

    /// Returns once `count` calls of the code under test wait on this node's peer directory.
    func untilDirectoryWaits(_ count: Int = 1, timeout: Double = hangGuardSeconds) async throws {
        try await hangGuard("\(count) wait(s) on the directory", seconds: timeout) { [agent] in
            await agent.directory.untilWaiting(atLeast: count)
        }
    }

    /// This node has met `other` (its key is in the store, untrusted), as after a first session.
    func knows(_ other: TestNode, name: String) throws {
        let id = other.agent.identity
        try agent.store.sawPeer(fingerprint: id.fingerprint, publicKey: id.publicKey.bytes, name: name, address: nil)
    }

    /// This node trusts `other` (as `locafoto trust` does): its offers are accepted at once.
    func trusts(_ other: TestNode, name: String = "alice") throws {
        try knows(other, name: name)
        try agent.store.setTrust(other.agent.identity.fingerprint.description, .trusted)
    }

    /// Waits for `condition`, checked now and again at each event of this node (what the
    /// conditions read is announced by one); the timeout is a hang guard, not a timing assertion.
    func waitUntil(_ what: String, timeout: Double = hangGuardSeconds, _ condition: () throws -> Bool) async throws {
        let (events, end) = agent.events.subscription()
        defer { end() }
        if try condition() { return }
        let guardTask = Task {
            try? await Task.sleep(for: .seconds(timeout))
            end()
        }
        defer { guardTask.cancel() }
        for await _ in events where try condition() { return }
        if try condition() { return }
        throw TestFailure("\(what): not within \(timeout) s")
    }

    func waitForPendingOffer(timeout: Double = hangGuardSeconds) async throws -> OfferRecord {
        var offer: OfferRecord?
        try await waitUntil("an offer in the inbox", timeout: timeout) {
            offer = try agent.store.offers(states: [.pending]).first
            return offer != nil
        }
        return offer!
    }

    /// Waits until this node's record of `offer` is in `state`. A sender's transfer ends at the
    /// last ITEM_RESULT, which may reach it before this receiver has read DONE and recorded the
    /// offer `completed` (messages.md "DONE"), so a test of the receiver's record waits for it.
    func waitForOffer(_ offer: String, _ state: OfferRecord.State, timeout: Double = hangGuardSeconds) async throws
        -> OfferRecord
    {
        var record: OfferRecord?
        try await waitUntil("offer \(offer.prefix(8)) to become \(state)", timeout: timeout) {
            record = try agent.store.offer(offer)
            return record?.state == state
        }
        return record!
    }

    private var keepHome = false

    func stop(keepingHome: Bool = false) {
        agent.relayStore?.close()  // as the process exit would: a reopened relay takes the directory
        agent.releaseHome()  // and a restarted agent takes the home
        listener?.cancel()
        listenerTask = listener ?? listenerTask
        listener = nil
        resuming?.cancel()
        work?.cancel()  // sends in flight end as a stopping agent's do: interrupted, stored
        if keepingHome { keepHome = true }
        if !keepHome { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Waits until the stopped listener has closed its socket (so its port can be taken again).
    func stopped() async throws {
        _ = await listenerTask?.result
    }

    /// Lets a later node (`reopening:`) own the home directory and its removal.
    func handOver() { keepHome = true }

    deinit { stop() }
}

/// How long a test waits for what it waits for before it fails as hung: a hang guard, never a
/// timing assertion. Generous, as every suite runs at once on two cores (beside CI's background
/// builds): under that load a relay test's deposit once took over 90 s, the guard it had then.
let hangGuardSeconds: Double = 300

/// Runs `body`, failing if it has not returned within `seconds`: a hang guard, not a timing
/// assertion.
func hangGuard<T: Sendable>(
    _ what: String, seconds: Double = hangGuardSeconds, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw TestFailure("\(what): not within \(seconds) s")
        }
        return value
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

enum Fixtures {
    static var root: URL { Checkout.root }

    static func path(_ name: String) -> String {
        root.appendingPathComponent("Tests/LocafotoFormatsTests/Fixtures/\(name)").path
    }
}
