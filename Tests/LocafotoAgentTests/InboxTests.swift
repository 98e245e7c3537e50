import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoWire
import Testing
@testable import LocafotoAgent

@Suite("Inbox policy, limits and persistence (real SQLite)")
struct InboxTests {
    static func offer(items: Int = 1) -> AssembledOffer {
        let list = (0..<items).map { i in
            OfferItem(id: UUID().uuidString.lowercased(), name: "p\(i).jpg", kind: "jpeg", size: 10, hash: String(repeating: "a", count: 64))
        }
        return AssembledOffer(id: UUID().uuidString.lowercased(), items: list, totalBytes: Int64(10 * items))
    }

    static func peer() -> PeerIdentity {
        let k = SigningKey.generate().publicKey
        return PeerIdentity(publicKey: k, fingerprint: Fingerprint(publicKey: k), name: "sender", caps: [])
    }

    static func store() throws -> (AgentStore, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lf-inbox-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (try AgentStore(path: dir + "/agent.sqlite"), dir)
    }

    @Test func pendingOffersPerPeerAreCapped() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.maxPendingPerPeer = 2
        let inbox = Inbox(store: store, limits: limits)
        let p = Self.peer()
        #expect(try await inbox.register(Self.offer(), from: p) == .pending)
        #expect(try await inbox.register(Self.offer(), from: p) == .pending)
        guard case .refuse(let code, _) = try await inbox.register(Self.offer(), from: p) else {
            Issue.record("third pending offer was not refused")
            return
        }
        #expect(code == .rateLimited)
        // Another peer is not affected.
        #expect(try await inbox.register(Self.offer(), from: Self.peer()) == .pending)
    }

    @Test func offersPerWindowAreCapped() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.maxOffersPerWindow = 3
        limits.maxPendingPerPeer = 100
        let inbox = Inbox(store: store, limits: limits)
        let p = Self.peer()
        for _ in 0..<3 { #expect(try await inbox.register(Self.offer(), from: p) == .pending) }
        #expect(try await inbox.register(Self.offer(), from: p) != .pending)
    }

    @Test func duplicateOfferIDIsRefused() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(store: store, limits: InboxLimits())
        let o = Self.offer()
        #expect(try await inbox.register(o, from: Self.peer()) == .pending)
        #expect(try await inbox.register(o, from: Self.peer()) != .pending)
    }

    @Test func decisionReachesTheWaitingSessionAndPersists() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(store: store, limits: InboxLimits())
        let o = Self.offer(items: 3)
        _ = try await inbox.register(o, from: Self.peer())
        #expect(try await inbox.waitForDecision(o.id, timeout: .milliseconds(50)) == nil)
        async let waited = inbox.waitForDecision(o.id, timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(50))
        let outcome = try await inbox.decide(String(o.id.prefix(6)), .accepted)
        #expect(outcome.state == .accepted)
        #expect(try await waited == .accepted)
        // A reopened store (agent restart) still has it.
        let reopened = try AgentStore(path: dir + "/agent.sqlite")
        #expect(try reopened.offer(o.id)?.state == .accepted)
        #expect(try reopened.items(of: o.id).count == 3)
    }

    @Test func expiredOfferCannotBeAccepted() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var limits = InboxLimits()
        limits.expiry = .milliseconds(1)
        let inbox = Inbox(store: store, limits: limits)
        let o = Self.offer()
        _ = try await inbox.register(o, from: Self.peer())
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await inbox.waitForDecision(o.id, timeout: .seconds(1)) == .expired)
        await #expect(throws: AgentError.self) { try await inbox.decide(o.id, .accepted) }
    }

    @Test func acceptingAfterTheSenderLeftFailsClearly() async throws {
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let inbox = Inbox(store: store, limits: InboxLimits())
        let o = Self.offer()
        _ = try await inbox.register(o, from: Self.peer())
        await inbox.sessionEnded(o.id)
        do {
            _ = try await inbox.decide(o.id, .accepted)
            Issue.record("accept without a live sender succeeded")
        } catch let e as AgentError {
            #expect(e.code == .peerUnavailable)
            #expect(e.message.contains("no longer connected"))
        }
    }

    @Test func identityFileIsPrivateAndStable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lf-id-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/identity.json"
        let a = try Identity.loadOrCreate(at: path)
        let b = try Identity.loadOrCreate(at: path)
        #expect(a.fingerprint == b.fingerprint)
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        chmod(path, 0o644)
        #expect(throws: AgentError.self) { try Identity.load(at: path) }
        chmod(path, 0o600)
        try Data("{\"version\":1,\"ed25519Seed\":\"AAAA\"}".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        #expect(throws: AgentError.self) { try Identity.load(at: path) }
    }
}
