import Foundation
import NIOCore
import Testing
@testable import LocafotoAgent

@Suite("Uploads for sending from the web app")
struct UploadStoreTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x11, count: 60)

    static func upload(_ store: UploadStore, _ bytes: [UInt8], name: String = "a.jpg", perItem: Int64 = 1 << 20) throws -> String {
        let sink = store.begin(name: name, maxSize: perItem)
        try sink.write(ByteBuffer(bytes: bytes))
        let answer = try sink.finish()
        let json = try JSONSerialization.jsonObject(with: answer.body) as! [String: Any]
        return json["id"] as! String
    }

    @Test("an upload is taken once, by id; a failed send puts it back")
    func takeOnce() throws {
        let store = UploadStore()
        let id = try Self.upload(store, Self.jpeg, name: "../../dir/photo.jpg")
        let items = try store.take([id])
        #expect(items.count == 1 && items[0].name == "photo.jpg" && items[0].kind == "jpeg" && items[0].data == Self.jpeg)
        #expect(items[0].hash != nil && items[0].size == Int64(Self.jpeg.count))
        #expect(throws: AgentError.self) { try store.take([id]) }
        store.putBack(items, ids: [id])
        #expect(try store.take([id]).count == 1)
    }

    @Test("one unknown id takes nothing")
    func allOrNothing() throws {
        let store = UploadStore()
        let id = try Self.upload(store, Self.jpeg)
        #expect(throws: AgentError.self) { try store.take([id, "nope"]) }
        #expect(try store.take([id]).count == 1)
    }

    @Test("the total is bounded across uploads arriving side by side, and freed by aborts and sends")
    func total() throws {
        let store = UploadStore(maxTotalBytes: 100)
        let a = store.begin(name: "a.jpg", maxSize: 1 << 20), b = store.begin(name: "b.jpg", maxSize: 1 << 20)
        try a.write(ByteBuffer(bytes: Self.jpeg))  // 64 bytes arriving
        #expect(throws: AgentError.self) { try b.write(ByteBuffer(bytes: Self.jpeg)) }
        b.abort()
        a.abort()
        let id = try Self.upload(store, Self.jpeg)  // room again
        #expect(throws: AgentError.self) { try Self.upload(store, Self.jpeg) }
        _ = try store.take([id])
        _ = try Self.upload(store, Self.jpeg)
    }

    @Test("not an image, or over the size of one item: refused, and nothing is held")
    func refused() throws {
        // Room for exactly one photo: a byte held back by a refusal fails the last upload.
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count))
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
        let store = UploadStore(maxTotalBytes: 1 << 20)
        let id = try Self.upload(store, Self.jpeg)
        #expect(throws: AgentError.self) { try store.take([id, id]) }
        #expect(try store.take([id]).count == 1)
    }
}

extension UploadStoreTests {
    @Test("an upload not sent in time is dropped by itself, freeing its bytes, with nothing else going on")
    func droppedInTime() async throws {
        let store = UploadStore(maxTotalBytes: Int64(Self.jpeg.count), lifetime: .milliseconds(1))
        let id = try Self.upload(store, Self.jpeg)
        await store.expiries.wait(unless: { store.waitingCount == 0 })
        #expect(store.waitingCount == 0)
        #expect(throws: AgentError.self) { try store.take([id]) }
        _ = try Self.upload(store, Self.jpeg)  // its bytes are free again
    }
}
