import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoInbox
import LocafotoMedia
import LocafotoReceiving
import LocafotoTestSupport
import LocafotoWire
import NIOCore
import Synchronization
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoSending
@testable import LocafotoTransfers

@Suite("Uploads for sending from the web app")
struct UploadStoreTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x11, count: 60)

    static func upload(_ store: UploadStore, _ bytes: [UInt8], name: String = "a.jpg", perItem: Int64 = 1 << 20) throws
        -> String
    {
        let sink = store.begin(name: name, maxSize: perItem)
        try sink.write(ByteBuffer(bytes: bytes))
        let answer = try sink.finish()
        let json = try JSONSerialization.jsonObject(with: answer.body) as! [String: Any]
        return json["id"] as! String
    }

    @Test("an upload is taken once, by id; a failed send puts it back")
    func takeOnce() throws {
        let store = UploadStore(clock: SystemClock())
        let id = try Self.upload(store, Self.jpeg, name: "../../dir/photo.jpg")
        let hold = try store.take([id])
        let items = hold.items
        #expect(
            items.count == 1 && items[0].name == "photo.jpg" && items[0].kind == "jpeg" && items[0].data == Self.jpeg)
        #expect(items[0].hash != nil && items[0].size == Int64(Self.jpeg.count))
        #expect(throws: AgentError.self) { try store.take([id]) }
        hold.giveBack()
        #expect(try store.take([id]).items.count == 1)
    }

    @Test("one unknown id takes nothing")
    func allOrNothing() throws {
        let store = UploadStore(clock: SystemClock())
        let id = try Self.upload(store, Self.jpeg)
        #expect(throws: AgentError.self) { try store.take([id, "nope"]) }
        #expect(try store.take([id]).items.count == 1)
    }

    @Test("the total is bounded across uploads arriving side by side, and freed by aborts and sends")
    func total() throws {
        let store = UploadStore(maxTotalBytes: 100, clock: SystemClock())
        let a = store.begin(name: "a.jpg", maxSize: 1 << 20)
        let b = store.begin(name: "b.jpg", maxSize: 1 << 20)
        try a.write(ByteBuffer(bytes: Self.jpeg))  // 64 bytes arriving
        #expect(throws: AgentError.self) { try b.write(ByteBuffer(bytes: Self.jpeg)) }
        b.abort()
        a.abort()
        let id = try Self.upload(store, Self.jpeg)  // room again
        #expect(throws: AgentError.self) { try Self.upload(store, Self.jpeg) }
        try store.take([id]).release()
        _ = try Self.upload(store, Self.jpeg)
    }

    @Test("not an image, or over the size of one item: refused, and nothing is held")
    func refused() throws {
        // Room for exactly one photo: a byte held back by a refusal fails the last upload.
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), clock: SystemClock())
        let text = store.begin(name: "notes.txt", maxSize: 1 << 20)
        try text.write(ByteBuffer(bytes: Array("just some text, not a photo".utf8)))
        #expect(throws: AgentError.self) { try text.finish() }
        let big = store.begin(name: "big.jpg", maxSize: 10)
        #expect(throws: AgentError.self) { try big.write(ByteBuffer(bytes: Self.jpeg)) }
        big.abort()  // the route aborts after a failed write: counted once
        _ = try Self.upload(store, Self.jpeg)
    }
}

extension UploadStoreTests {
    @Test("an upload named twice in one send is refused, and both stay for a send that names it once")
    func namedTwice() throws {
        let store = UploadStore(maxTotalBytes: 1 << 20, clock: SystemClock())
        let id = try Self.upload(store, Self.jpeg)
        #expect(throws: AgentError.self) { try store.take([id, id]) }
        #expect(try store.take([id]).items.count == 1)
    }
}

extension UploadStoreTests {
    @Test("an upload not sent in time is dropped by itself, freeing its bytes, with nothing else going on")
    func droppedInTime() async throws {
        let clock = ManualClock()
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count) * 2, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.dropWhenDue() }
            let first = try Self.upload(store, Self.jpeg)
            await clock.sleepers(atLeast: 1)  // the loop waits for the first upload's time
            clock.advance(by: .seconds(10 * 60))
            let second = try Self.upload(store, Self.jpeg)
            // 30 minutes after the first: it goes, the second (20 minutes old) stays.
            clock.advance(by: UploadStore.lifetime - .seconds(10 * 60))
            await store.expiries.wait(unless: { store.waitingCount == 1 })
            #expect(throws: AgentError.self) { try store.take([first]) }
            await clock.sleepers(atLeast: 1)  // now for the second's
            clock.advance(by: .seconds(10 * 60) - .nanoseconds(1))
            #expect(store.waitingCount == 1, "a nanosecond before its time it still waits")
            clock.advance(by: .nanoseconds(1))
            await store.expiries.wait(unless: { store.waitingCount == 0 })
            #expect(throws: AgentError.self) { try store.take([second]) }
            _ = try Self.upload(store, Self.jpeg)  // their bytes are free again
            _ = try Self.upload(store, Self.jpeg)
            group.cancelAll()
        }
    }
}

extension UploadStoreTests {
    @Test("bytes taken by a send count against the total until the send lets them go")
    func heldBytesCount() throws {
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), clock: SystemClock())
        let hold = try store.take([try Self.upload(store, Self.jpeg)])
        // Taken, not sent yet: still memory, so no room for another upload.
        #expect(throws: AgentError.self) { try Self.upload(store, Self.jpeg) }
        hold.release()
        _ = try Self.upload(store, Self.jpeg)
    }

    @Test("a send's uploads count until every transfer is done with them; one that reached its peer consumes them")
    func heldUntilTransfersLetGo() throws {
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), clock: SystemClock())
        let id = try Self.upload(store, Self.jpeg)
        let a = OutgoingTransfer(peer: "a", clock: SystemClock())
        let b = OutgoingTransfer(peer: "b", clock: SystemClock())
        try store.take([id]).end(after: [a, b])
        a.finish(.done, "a imported 1 item(s)")
        #expect(throws: AgentError.self) { try Self.upload(store, Self.jpeg) }  // b still holds the bytes
        b.letGoOfBytes(in: .held)  // a relay holds them now
        let next = try Self.upload(store, Self.jpeg)
        #expect(throws: AgentError.self) { try store.take([id]) }  // consumed
        #expect(try store.take([next]).items.count == 1)
    }

    @Test("a send that failed everywhere gives its uploads back, for a retry with the same ids")
    func failedSendGivesBack() throws {
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), clock: SystemClock())
        let id = try Self.upload(store, Self.jpeg)
        let a = OutgoingTransfer(peer: "a", clock: SystemClock())
        let b = OutgoingTransfer(peer: "b", clock: SystemClock())
        try store.take([id]).end(after: [a, b])
        a.finish(.failed, "no peer named 'a'")
        #expect(throws: AgentError.self) { try store.take([id]) }  // b may still send it
        b.finish(.failed, "cannot connect to b")
        #expect(throws: AgentError.self) { try Self.upload(store, Self.jpeg) }  // waiting again, counted
        #expect(try store.take([id]).items.count == 1)
    }

    @Test("an upload given back after its lifetime is not kept")
    func givenBackOnlyWithinLifetime() async throws {
        let clock = ManualClock()
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), clock: clock)
        let id = try Self.upload(store, Self.jpeg)
        let hold = try store.take([id])
        clock.advance(by: UploadStore.lifetime)
        hold.giveBack()
        #expect(store.waitingCount == 0)
        _ = try Self.upload(store, Self.jpeg)  // its bytes are free
    }

    @Test("a send to no such peer gives its uploads back; a send that is accepted consumes them")
    func throughTheAgent() async throws {
        let alice = try TestNode(name: "alice")
        let bob = try TestNode(name: "bob")
        defer {
            alice.stop()
            bob.stop()
        }
        let photo = try Array(Data(contentsOf: URL(fileURLWithPath: Fixtures.path("sample.png"))))
        let id = try Self.upload(alice.agent.uploads, photo, name: "sample.png", perItem: 64 << 20)

        // Fails after the send started (the peer is resolved in the send's job).
        let failed = try alice.agent.sender.send(to: ["nobody"], paths: [], uploads: try alice.agent.uploads.take([id]))
        #expect(try await alice.waitForTransfer(failed[0]).state == .failed)
        // Fails in the preparation (compressing bytes that are not a photo libvips can read).
        let junk = try Self.upload(alice.agent.uploads, Self.jpeg)
        let compress = SendTransform(compression: CompressionOptions(), stripLocation: false)
        let unprepared = try alice.agent.sender.send(
            to: ["nobody"], paths: [], uploads: try alice.agent.uploads.take([junk]), transform: compress)
        let s = try await alice.waitForTransfer(unprepared[0])
        #expect(s.state == .failed && s.message?.contains("nobody") == false, "\(s.message ?? "")")
        #expect(try alice.agent.uploads.take([junk]).items.count == 1)

        try await bob.start()
        alice.sees(bob)
        // the retry
        let t = try alice.agent.sender.send(to: ["bob"], paths: [], uploads: try alice.agent.uploads.take([id]))
        let offer = try await bob.waitForPendingOffer()
        _ = try await bob.agent.controllers.inbox.decide(String(offer.id.prefix(8)), .accepted)
        #expect(try await alice.waitForTransfer(t[0]).state == .done)
        #expect(throws: AgentError.self) { try alice.agent.uploads.take([id]) }
        #expect(t[0].plan.withLock { $0?.items.allSatisfy { $0.data == nil } } == true)  // nothing kept in memory
    }
}
