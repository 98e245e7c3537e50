// Discovery against the real avahi-daemon (start it with
// `bash scripts/avahi-lo.sh start`). Serialized because the last two tests stop
// and restart the daemon, which would disturb the others. Those two only run
// when the daemon was started by that script: a system daemon is never touched.
import Foundation
import LocafotoDiscovery
import LocafotoErrors
import LocafotoTestSupport
import Testing

@Suite("Discovery with avahi-daemon", .serialized)
struct DiscoveryTests {
    @Test("two instances in one process resolve each other with port, TXT and address")
    func twoInstancesResolveEachOther() async throws {
        let alphaAd = ServiceAdvertisement(
            name: uniqueName("alpha"), port: 47101, txt: ["v": "1", "pk": "AAAA", "role": "a"])
        let betaAd = ServiceAdvertisement(
            name: uniqueName("beta"), port: 47102, txt: ["v": "1", "pk": "BBBB", "flag": ""])
        let alpha = try await startRunning("alpha", alphaAd)
        defer { alpha.stop() }
        let beta = try await startRunning("beta", betaAd)
        defer { beta.stop() }

        #expect(try await alpha.log.waitPublished().value == alphaAd.name)
        #expect(try await beta.log.waitPublished().value == betaAd.name)

        let betaSeenByAlpha = try await alpha.log.waitResolved(betaAd.name).value
        #expect(betaSeenByAlpha.port == 47102)
        #expect(betaSeenByAlpha.txt == betaAd.txt)
        #expect(betaSeenByAlpha.address == "127.0.0.1")
        #expect(betaSeenByAlpha.family == .ipv4)
        #expect(betaSeenByAlpha.interfaceIndex > 0)
        #expect(!betaSeenByAlpha.hostName.isEmpty)
        #expect(betaSeenByAlpha.isLocal)
        #expect(!betaSeenByAlpha.isOwn)

        let alphaSeenByBeta = try await beta.log.waitResolved(alphaAd.name).value
        #expect(alphaSeenByBeta.port == 47101)
        #expect(alphaSeenByBeta.txt == alphaAd.txt)
        #expect(alphaSeenByBeta.address == "127.0.0.1")
        #expect(!alphaSeenByBeta.isOwn)

        // Each also sees its own service, flagged as its own.
        #expect(try await alpha.log.waitResolved(alphaAd.name).value.isOwn)
        #expect(try await beta.log.waitResolved(betaAd.name).value.isOwn)
    }

    @Test("same name twice: one is renamed (\"name #2\") and both resolve")
    func nameCollision() async throws {
        let type = uniqueServiceType()
        let name = uniqueName("dup")
        let first = try await startRunning(
            "first", ServiceAdvertisement(name: name, port: 47111, txt: ["who": "first"]), serviceType: type)
        defer { first.stop() }
        let second = try await startRunning(
            "second", ServiceAdvertisement(name: name, port: 47112, txt: ["who": "second"]), serviceType: type)
        defer { second.stop() }

        let firstName = try await first.log.waitPublished().value
        let secondName = try await second.log.waitPublished().value
        #expect(Set([firstName, secondName]) == [name, "\(name) #2"])

        // Whoever was renamed said so with .collision before .published.
        let (renamed, kept) = firstName == name ? (second, first) : (first, second)
        let collision = try await renamed.log.wait(for: "collision") { event -> (String, String)? in
            if case .collision(let old, let new) = event { return (old, new) }
            return nil
        }
        #expect(collision.value.0 == name)
        #expect(collision.value.1 == "\(name) #2")
        #expect(!kept.log.events.contains { if case .collision = $0 { true } else { false } })

        let renamedSeen = try await kept.log.waitResolved("\(name) #2").value
        let keptSeen = try await renamed.log.waitResolved(name).value
        #expect(renamedSeen.port == (renamed.log === first.log ? 47111 : 47112))
        #expect(keptSeen.port == (kept.log === first.log ? 47111 : 47112))
        #expect(!renamedSeen.isOwn && !keptSeen.isOwn)
    }

    @Test("stop() of one instance: the other sees .removed")
    func stopIsSeenAsRemoval() async throws {
        let type = uniqueServiceType()
        let goneAd = ServiceAdvertisement(name: uniqueName("gone"), port: 47121, txt: ["v": "1"])
        let watcher = try await startRunning("watcher", nil, serviceType: type)
        defer { watcher.stop() }
        let gone = try await startRunning("gone", goneAd, serviceType: type)

        let seen = try await watcher.log.waitResolved(goneAd.name).value
        gone.stop()
        gone.stop()  // idempotent
        let removed = try await watcher.log.wait(for: "removed '\(goneAd.name)'") { event -> (Int32, IPFamily)? in
            if case .removed(let n, let i, let f) = event, n == goneAd.name { return (i, f) }
            return nil
        }
        #expect(removed.value.0 == seen.interfaceIndex)
        #expect(removed.value.1 == seen.family)
    }

    @Test("update(advertisement:) changes the TXT (and port) seen by the other")
    func updateIsSeenByOthers() async throws {
        let type = uniqueServiceType()
        var ad = ServiceAdvertisement(name: uniqueName("upd"), port: 47131, txt: ["v": "1", "state": "old"])
        let watcher = try await startRunning("watcher", nil, serviceType: type)
        defer { watcher.stop() }
        let publisher = try await startRunning("publisher", ad, serviceType: type)
        defer { publisher.stop() }

        let first = try await watcher.log.waitResolved(ad.name) { $0.txt["state"] == "old" }
        try await publisher.log.waitPublished()

        // TXT only: updated in place.
        ad.txt = ["v": "1", "state": "new", "extra": "x"]
        publisher.discovery.update(advertisement: ad)
        let updated = try await watcher.log.waitResolved(ad.name, after: first.index + 1) { $0.txt["state"] == "new" }
        #expect(updated.value.txt == ad.txt)
        #expect(updated.value.port == 47131)

        // New port: re-registered under the same name.
        ad.port = 47132
        publisher.discovery.update(advertisement: ad)
        let moved = try await watcher.log.waitResolved(ad.name, after: updated.index + 1) { $0.port == 47132 }
        #expect(moved.value.txt == ad.txt)
    }

    @Test(
        "avahi-daemon restart: .daemonUnavailable, then .daemonRunning and re-published",
        .enabled(
            if: ScriptDaemon.pid() != nil,
            "avahi-daemon was not started by scripts/avahi-lo.sh; not killing a daemon this project does not own"))
    func daemonRestart() async throws {
        let type = uniqueServiceType()
        let ad = ServiceAdvertisement(name: uniqueName("phoenix"), port: 47141, txt: ["v": "1"])
        let node = try await startRunning("node", ad, serviceType: type)
        defer { node.stop() }
        try await node.log.waitPublished()
        try await node.log.waitResolved(ad.name)

        let mark = node.log.count
        let pid = try #require(ScriptDaemon.pid(), "the script's avahi-daemon vanished")
        #expect(kill(pid, SIGTERM) == 0)
        let down = try await node.log.wait(for: "daemonUnavailable", after: mark) { event -> String? in
            if case .daemonUnavailable(let reason) = event { return reason }
            return nil
        }
        #expect(!down.value.isEmpty)
        // Services seen before are reported gone: their data is stale now.
        try await node.log.wait(for: "removed own service", after: mark) { event in
            if case .removed(let n, _, _) = event, n == ad.name { return () }
            return nil
        }

        try ScriptDaemon.start()
        let up = try await node.log.wait(for: "daemonRunning", after: down.index) { $0 == .daemonRunning ? () : nil }
        let republished = try await node.log.waitPublished(after: up.index)
        #expect(republished.value == ad.name)
        #expect(try await node.log.waitResolved(ad.name, after: up.index).value.isOwn)
    }

    @Test(
        "started while avahi-daemon is down: .daemonUnavailable, then .daemonRunning once it starts",
        .enabled(
            if: ScriptDaemon.pid() != nil,
            "avahi-daemon was not started by scripts/avahi-lo.sh; not stopping a daemon this project does not own"))
    func startWithoutDaemon() async throws {
        let pid = try #require(ScriptDaemon.pid(), "the script's avahi-daemon vanished")
        #expect(kill(pid, SIGTERM) == 0)
        try await ScriptDaemon.waitGone(pid)

        let ad = ServiceAdvertisement(name: uniqueName("late"), port: 47151, txt: ["v": "1"])
        let discovery = Discovery(serviceType: uniqueServiceType(), advertisement: ad)
        let log = EventLog("late", try discovery.start())
        defer { discovery.stop() }
        let down = try await log.wait(for: "daemonUnavailable") { event -> String? in
            if case .daemonUnavailable(let reason) = event { return reason }
            return nil
        }
        #expect(down.index == 0)
        #expect(down.value == "avahi-daemon is not running (Daemon not running)")

        try ScriptDaemon.start()
        let up = try await log.wait(for: "daemonRunning", after: down.index) { $0 == .daemonRunning ? () : nil }
        #expect(try await log.waitPublished(after: up.index).value == ad.name)
        #expect(try await log.waitResolved(ad.name, after: up.index).value.isOwn)
    }
}

@Suite("Discovery without a daemon")
struct DiscoveryLocalTests {
    @Test("start() rejects an invalid service type, name or TXT")
    func startValidates() {
        #expect(throws: DiscoveryError.self) {
            _ = try Discovery(serviceType: "locafoto", advertisement: nil).start()
        }
        let longName = String(repeating: "x", count: 64)
        for ad in [
            ServiceAdvertisement(name: longName, port: 1, txt: [:]),
            ServiceAdvertisement(name: "ok", port: 1, txt: ["": "empty key"]),
            ServiceAdvertisement(name: "ok", port: 1, txt: ["a=b": "c"]),
            ServiceAdvertisement(name: "ok", port: 1, txt: ["k": String(repeating: "v", count: 254)]),
        ] {
            let error = #expect(throws: DiscoveryError.self) { _ = try Discovery(advertisement: ad).start() }
            #expect(error?.code == .invalidAdvertisement)
        }
    }

    @Test("start() twice throws; stop() is idempotent and finishes the stream")
    func lifecycle() async throws {
        let discovery = Discovery(serviceType: uniqueServiceType(), advertisement: nil)
        let stream = try discovery.start()
        let error = #expect(throws: DiscoveryError.self) { _ = try discovery.start() }
        #expect(error?.code == .alreadyStarted)
        discovery.stop()
        discovery.stop()
        // The stream ends (whatever was yielded before stop()).
        for await _ in stream {}
        Discovery(advertisement: nil).stop()  // stop without start is fine too
    }
}

/// The avahi-daemon started by scripts/avahi-lo.sh (if any).
enum ScriptDaemon {
    static var stateDir: String {
        ProcessInfo.processInfo.environment["LOCAFOTO_AVAHI_STATE"] ?? "/run/locafoto-avahi"
    }

    /// The recorded pid, only if that process is alive and really avahi-daemon.
    static func pid() -> pid_t? {
        guard let text = try? String(contentsOfFile: "\(stateDir)/avahi.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == "avahi-daemon"
        else { return nil }
        return pid
    }

    /// Waits until `pid` has exited (a zombie counts as gone).
    static func waitGone(_ pid: pid_t, timeout: Duration = .seconds(10)) async throws {
        guard await Task.detached(operation: { waitForExit(of: pid, timeout: timeout) }).value else {
            throw TestFailure(description: "avahi-daemon (pid \(pid)) did not exit within \(timeout) after SIGTERM")
        }
    }

    static func start() throws {
        let script = packageRoot.appendingPathComponent("scripts/avahi-lo.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "start"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure(description: "`bash \(script) start` exited with \(process.terminationStatus)")
        }
    }
}
