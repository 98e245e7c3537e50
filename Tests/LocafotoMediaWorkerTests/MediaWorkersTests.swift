import Foundation
import LocafotoFormats
import LocafotoMedia
import LocafotoTestSupport
import Testing

@testable import LocafotoMediaWorker

/// The media worker pool against the real `locafoto media-worker` and against stand-ins that
/// misbehave: the agent must get an error, never hang or crash, and lose nothing else.
@Suite("Media workers")
struct MediaWorkersTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("LocafotoMediaTests/Fixtures")

    /// `locafoto`, built beside the test bundle by `swift build --build-tests`.
    static func locafoto() throws -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            dir, dir.deletingLastPathComponent(), dir.deletingLastPathComponent().deletingLastPathComponent(),
        ]
        .map { $0.appendingPathComponent("locafoto").path }
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
            "the locafoto executable is not built beside the tests (swift build --build-tests builds it): \(candidates)"
        )
    }

    @Test("a preview made in a worker is the one made in process; one worker serves many requests")
    func sameAsInProcess() throws {
        let workers = MediaWorkers(command: [try Self.locafoto(), "media-worker"], limit: 1)
        for name in ["thumb.jpg", "thumb.heic", "photo.jpg", "nothumb.heic"] {
            let path = Self.fixtures.appendingPathComponent(name).path
            let size = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
            let there = try workers.perform(.preview(path: path, size: size))
            let here = MediaJobs.inProcess
            #expect(there == (try here.perform(.preview(path: path, size: size))), "\(name)")
        }
        let thumb = try workers.perform(.preview(path: Self.fixtures.appendingPathComponent("thumb.jpg").path, size: 1))
        #expect(thumb.jpeg == nil, "a file of another size than chosen gets no preview")
        #expect(workers.startedCount == 1)
    }

    @Test("the indexer's job: EXIF facts, no thumbnail; a thumbnail when asked for, from the thumbnail item")
    func index() throws {
        let workers = MediaWorkers(command: [try Self.locafoto(), "media-worker"])
        let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("thumb320.heic")))
        let r = try workers.perform(.index(type: .heic), body: bytes)
        #expect(r.metadata?.width == 1600 && r.metadata?.height == 1200)
        #expect(r.source == nil && r.jpeg == nil)
        let iphone = try workers.perform(.thumbnail(maxSide: 320, quality: 80), body: bytes)
        #expect(iphone.source == .heifThumbnail && iphone.jpeg != nil)
        // A JPEG with a 120x80 EXIF thumbnail: its facts, and no thumbnail (it is made when first
        // asked for); the same photo gives one when asked (`.thumbnail`), by shrink-on-load.
        let jpeg = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("thumb.jpg")))
        let facts = try workers.perform(.index(type: .jpeg), body: jpeg)
        #expect(facts.metadata?.width != nil && facts.jpeg == nil && facts.source == nil)
        let asked = try workers.perform(.thumbnail(maxSide: 320, quality: 80), body: jpeg)
        #expect(asked.jpeg != nil && asked.source == .shrinkOnLoad)
        let junk = try workers.perform(
            .index(type: .jpeg), body: [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 300))
        #expect(
            junk.metadata == nil && junk.jpeg == nil, "an unreadable photo is a failure in the reply, not a dead worker"
        )
    }

    @Test("a worker that dies, answers with a huge length, or never answers is stopped and the request fails")
    func misbehavingWorkers() throws {
        let dies = MediaWorkers(command: ["/bin/sh", "-c", "exit 3"])
        #expect(throws: MediaWorkers.Failure.self) { try dies.perform(.previewOfBody, body: [1, 2, 3]) }
        let huge = MediaWorkers(command: ["/bin/sh", "-c", "printf '\\377\\377\\377\\377'; sleep 30"])
        #expect(throws: MediaWorkers.Failure.self) { try huge.perform(.previewOfBody) }
        let silent = MediaWorkers(command: ["/bin/sleep", "60"], timeout: .milliseconds(200))
        let error = #expect(throws: MediaWorkers.Failure.self) { try silent.perform(.previewOfBody) }
        #expect(error?.description.contains("took longer") == true)
    }

    @Test("a worker that went away while idle is replaced, and the request answered")
    func replacedWhenGone() throws {
        let workers = MediaWorkers(
            command: [try Self.locafoto(), "media-worker", "--idle-exit", "1"], limit: 1, idle: .seconds(3600))
        let path = Self.fixtures.appendingPathComponent("photo.jpg").path
        let size = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
        #expect(try workers.perform(.preview(path: path, size: size)).source == .shrinkOnLoad)
        // Wait (a hang guard, not a measure) until the idle worker exits by itself.
        let pid = try #require(workers.idlePIDs.first)
        #expect(waitForExit(of: pid, timeout: .seconds(30)))
        #expect(try workers.perform(.preview(path: path, size: size)).source == .shrinkOnLoad)
        #expect(workers.startedCount == 2)
    }
}
