import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoReceiving
import LocafotoSending
import LocafotoTransfers
import LocafotoWire
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode

/// `GET /v1/events` starts here: the hub hands every event to every reader, in order, starts
/// each stream with `ready`, bounds what a stalled reader holds, and thins progress.
@Suite("Event hub")
struct EventHubTests {
    /// Collects the first `count` events of a stream (a hang guard bounds the wait, it is not
    /// an assertion: the events are already buffered when this runs).
    static func take(_ count: Int, from stream: some AsyncSequence<ControlEvent, Never>) async -> [ControlEvent] {
        var out: [ControlEvent] = []
        for await e in stream {
            out.append(e)
            if out.count == count { break }
        }
        return out
    }

    /// An item's progress in offer `offer`.
    static func item(_ offer: String, _ progress: NodeEvent.Progress) -> NodeEvent {
        .itemProgress(offer: offer, item: 0, items: 1, totalBytes: 300, progress: progress)
    }

    @Test("each reader gets ready, then every event in order, numbered from the last seen")
    func order() async {
        let hub = EventHub()
        let first = hub.subscribe().map(ControlEvent.init)
        hub.publish(.vaultLocked(reason: nil))
        let second = hub.subscribe().map(ControlEvent.init)
        hub.publish(.vaultUnlocked)
        hub.publish(.offerDecided(offer: "o1", state: "accepted", message: nil))
        let a = await Self.take(4, from: first)
        let b = await Self.take(3, from: second)
        #expect(a.map(\.kind) == [.ready, .vaultLocked, .vaultUnlocked, .offerDecided])
        #expect(a.map(\.seq) == [0, 1, 2, 3])
        #expect(b.map(\.kind) == [.ready, .vaultUnlocked, .offerDecided])
        #expect(b.first?.seq == 1, "ready carries the last event published before the subscription")
        #expect(b.last?.offer == "o1")
    }

    @Test("a reader that falls behind keeps the oldest events and sees a gap, not unbounded memory")
    func slowReader() async {
        let hub = EventHub()
        let stream = hub.subscribe().map(ControlEvent.init)
        for _ in 0..<(EventHub.bufferLimit + 50) { hub.publish(.vaultLocked(reason: nil)) }
        let buffered = await Self.take(EventHub.bufferLimit, from: stream)
        #expect(buffered.last?.seq == EventHub.bufferLimit - 1, "ready plus the oldest events fill the buffer")
        hub.publish(.vaultUnlocked)
        let next = await Self.take(1, from: stream)
        #expect(next.first?.kind == .vaultUnlocked)
        #expect(next.first.map { $0.seq > EventHub.bufferLimit } == true, "the dropped events leave a gap in seq")
    }

    @Test("progress is thinned per key, the final one always goes out, with a rate")
    func progress() async {
        let hub = EventHub(progressInterval: .seconds(3600))  // however slow the machine, the second is within it
        let stream = hub.subscribe().map(ControlEvent.init)
        hub.progress(key: "o1", bytes: 100) { Self.item("o1", $0) }
        hub.progress(key: "o1", bytes: 200) { Self.item("o1", $0) }  // within the interval: dropped
        hub.progress(key: "o2", bytes: 5) { Self.item("o2", $0) }  // another offer: kept
        hub.progress(key: "o1", bytes: 300, final: true) { Self.item("o1", $0) }
        let events = await Self.take(4, from: stream)
        #expect(events.map(\.bytes) == [nil, 100, 5, 300])
        #expect(events.last?.offer == "o1")
        #expect(
            events.last?.bytesPerSecond.map { $0 > 0 } == true, "the rate comes from the bytes since the last event")
    }

    @Test("no reader: nothing is numbered or kept")
    func noReader() async {
        let hub = EventHub()
        hub.publish(.vaultLocked(reason: nil))
        hub.progress(key: "o1", bytes: 1) { Self.item("o1", $0) }
        let events = await Self.take(1, from: hub.subscribe().map(ControlEvent.init))
        #expect(events.first?.seq == 0)
    }

    @Test("a real transfer between two agents, as the receiver's and the sender's readers see it")
    func transfer() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let received = bob.agent.events.subscribe().map(ControlEvent.init)
        let sent = alice.agent.events.subscribe().map(ControlEvent.init)
        let t = try alice.agent.send(to: "bob", paths: LateHashTests.files)
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .accepted)
        let s = try await alice.waitForTransfer(t)
        #expect(s.state == .done)

        var bobSaw: [ControlEvent] = []
        for await e in received {
            bobSaw.append(e)
            if e.kind == .offerFinished { break }
        }
        let arrival = try #require(bobSaw.first { $0.kind == .offerReceived })
        #expect(arrival.offer == offer.id && arrival.state == "pending" && arrival.items == 3)
        #expect(arrival.peer?.fingerprint == alice.agent.identity.fingerprint.description)
        #expect(bobSaw.contains { $0.kind == .offerDecided && $0.state == "accepted" })
        let imported = bobSaw.filter { $0.kind == .itemImported }
        #expect(imported.count == 3 && imported.allSatisfy { $0.state == "imported" && $0.photo != nil })
        #expect(Set(imported.compactMap(\.name)) == Set(LateHashTests.files.map { ($0 as NSString).lastPathComponent }))
        #expect(bobSaw.last?.state == "completed")
        #expect(bobSaw.map(\.seq) == bobSaw.map(\.seq).sorted())

        var aliceSaw: [ControlEvent] = []
        for await e in sent {
            aliceSaw.append(e)
            if e.kind == .transferState, e.state == "done" { break }
        }
        let states = aliceSaw.filter { $0.kind == .transferState }.compactMap(\.state)
        #expect(
            states.first == "preparing" && states.contains("offered") && states.contains("sending")
                && states.last == "done")
        #expect(aliceSaw.allSatisfy { $0.kind == .ready || $0.transfer == t.id })
    }

    @Test("a rejection is announced before the end of the offer it causes")
    func decidedBeforeFinished() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let received = bob.agent.events.subscribe().map(ControlEvent.init)
        let t = try alice.agent.send(to: "bob", paths: [LateHashTests.files[0]])
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.controllers.inbox.decide(offer.id, .rejected)
        _ = try await alice.waitForTransfer(t)
        var kinds: [ControlEvent.Kind] = []
        for await e in received where e.offer == offer.id {
            kinds.append(e.kind)
            if e.kind == .offerFinished { break }
        }
        #expect(kinds == [.offerReceived, .offerDecided, .offerFinished], "\(kinds)")
    }
}

@Suite("Import events")
struct ImportEventTests {
    @Test("a local import announces its progress and its end, with the job's id, on a real vault")
    func importJob() async throws {
        let node = try TestNode(name: "carol")
        defer { node.stop() }
        let stream = node.agent.events.subscribe().map(ControlEvent.init)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("import-events-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (i, file) in LateHashTests.files.enumerated() {
            try FileManager.default.copyItem(
                atPath: file, toPath: "\(folder)/\(i)-\((file as NSString).lastPathComponent)")
        }
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: "\(folder)/notes.txt"))
        let job = try node.agent.controllers.imports.startImport(paths: [folder], options: ImportJob.Options())
        var seen: [ControlEvent] = []
        for await e in stream where e.kind != .ready {
            seen.append(e)
            if e.kind == .importFinished { break }
        }
        #expect(seen.allSatisfy { $0.job == job.id })
        let end = try #require(seen.last)
        #expect(end.kind == .importFinished && end.state == "done")
        #expect(end.items == LateHashTests.files.count + 1 && end.item == end.items)
        #expect(end.message == "\(LateHashTests.files.count) imported, 1 skipped")
        let progress = seen.filter { $0.kind == .importProgress }
        #expect(!progress.isEmpty && progress.allSatisfy { ($0.item ?? 0) <= ($0.items ?? 0) })
        #expect(
            end.bytes == job.current.bytes && job.current.finishedAt != nil,
            "the end is announced after the job's snapshot has it")
    }
}
