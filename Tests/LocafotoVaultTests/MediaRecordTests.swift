import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoVault

/// What the media indexer records: facts of a batch in one transaction, on real SQLite files.
@Suite("Vault: media facts")
struct MediaRecordTests {
    static func info(_ w: Int, model: String) -> PhotoMetadata {
        PhotoMetadata(
            width: w, height: w / 2, orientation: 1, captureDate: Date(timeIntervalSince1970: 1_600_000_000),
            cameraMake: "Make",
            cameraModel: model, hasLocation: false)
    }

    /// The answer speaks the control API's names and leaves unknown facts out, as before the facts
    /// became one type; the facts alone keep the names the media worker's pipe has always used
    /// (an agent started before an upgrade reads the new binary's worker).
    @Test func theAnswerHasTheAPINamesAndTheWorkerPipeItsOwn() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        let facts = PhotoMetadata(width: 4, height: 3, captureDate: Date(timeIntervalSince1970: 0), hasLocation: true)
        let info = PhotoMediaInfo(facts: facts, hasThumbnail: true)
        let answer = String(decoding: try encoder.encode(info), as: UTF8.self)
        #expect(
            answer
                == #"{"capturedAt":"1970-01-01T00:00:00Z","hasLocation":true,"hasThumbnail":true,"height":3,"width":4}"#
        )
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(PhotoMediaInfo.self, from: Data(answer.utf8)) == info)
        let pipe = String(decoding: try encoder.encode(facts), as: UTF8.self)
        #expect(pipe == #"{"captureDate":"1970-01-01T00:00:00Z","hasLocation":true,"height":3,"width":4}"#)
    }

    @Test func aBatchIsRecordedTogetherAndLeavesTheQueue() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let b = try Org.jpeg(vault, "b.jpg")
        let c = try Org.jpeg(vault, "c.jpg")
        #expect(Set(try vault.photosAwaitingMedia()) == [a.id, b.id, c.id])
        try vault.recordMedia([(a.id, Self.info(400, model: "A")), (b.id, Self.info(600, model: "B"))])
        #expect(try vault.photosAwaitingMedia() == [c.id])
        #expect(try vault.mediaInfo(a.id).width == 400 && vault.mediaInfo(a.id).cameraModel == "A")
        #expect(try vault.mediaInfo(b.id).height == 300 && vault.mediaInfo(b.id).cameraModel == "B")
        #expect(try vault.mediaInfo(c.id).cameraModel == nil)
        try vault.recordMedia([])  // nothing to do
    }

    @Test func aThumbnailMadeBeforeIndexingIsKept() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        let thumbnail = Fixtures.jpegLike(200)
        try vault.recordThumbnail(a.id, thumbnail)
        try vault.recordMedia([(a.id, Self.info(400, model: "A"))])
        #expect(try vault.mediaInfo(a.id).hasThumbnail)
        #expect(try vault.thumbnail(a.id) == thumbnail)
    }

    @Test func anUnknownPhotoFailsTheWholeBatch() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let a = try Org.jpeg(vault, "a.jpg")
        #expect(throws: VaultError.self) {
            try vault.recordMedia([
                (a.id, Self.info(400, model: "A")), ("00000000-0000-4000-8000-000000000000", Self.info(10, model: "X")),
            ])
        }
        #expect(try vault.photosAwaitingMedia() == [a.id], "nothing of the batch was recorded")
    }
}
