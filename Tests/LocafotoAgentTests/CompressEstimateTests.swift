import Foundation
import LocafotoControl
import LocafotoMedia
import LocafotoVault
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer

/// `compress --dry-run`'s estimate and the names of derived photos.
@Suite struct CompressEstimateTests {
    static func record(width: Int?, height: Int?, bytes: Int64) -> PhotoRecord {
        PhotoRecord(
            id: "00000000-0000-4000-8000-000000000001", name: "IMG_1.HEIC", format: "jpeg", originalSize: bytes,
            encryptedSize: bytes + 96,
            contentHash: [UInt8](repeating: 0, count: 32), captureDate: nil, importDate: Date(), width: width,
            height: height, tags: [],
            isFavorite: false, isHidden: false, senderFingerprint: nil, senderName: nil)
    }

    @Test func aLargeCameraPhotoGainsAndASmallOneDoesNot() {
        let c = CompressionOptions()
        // 12 MP at 5 MB (0.42 bytes a pixel): 1500 x 1125 at the typical 0.22 → about 371 KB.
        let big = FiltersController.estimate(Self.record(width: 4000, height: 3000, bytes: 5_000_000), c, .jpeg)
        #expect(big.skipped == nil && big.afterBytes == Int64(1500.0 * 1125.0 * 0.22))
        #expect(big.savedBytes == 5_000_000 - big.afterBytes! && big.ratio! < 0.1)
        // Already small for its size (0.03 bytes a pixel): its own rate, scaled, at the same size.
        let small = FiltersController.estimate(Self.record(width: 1000, height: 800, bytes: 24_000), c, .jpeg)
        #expect(abs(small.afterBytes! - 13_200) <= 1)  // 800,000 px x 0.03 x 0.22 / 0.40
        // HEIC: half; quality 90: more.
        let heic = FiltersController.estimate(Self.record(width: 4000, height: 3000, bytes: 5_000_000), c, .heic)
        #expect(heic.afterBytes! * 2 == big.afterBytes! || abs(heic.afterBytes! * 2 - big.afterBytes!) <= 1)
        #expect(
            FiltersController.estimate(
                Self.record(width: 4000, height: 3000, bytes: 5_000_000), CompressionOptions(quality: 90), .jpeg
            ).afterBytes! > big.afterBytes!)
        // Unknown dimensions: said, not guessed.
        #expect(
            FiltersController.estimate(Self.record(width: nil, height: nil, bytes: 5_000_000), c, .jpeg).skipped?
                .contains(
                    "indexer") == true)
    }

    @Test func derivedNames() {
        #expect(FiltersController.derivedName("IMG_1.HEIC", tag: "sepia", extension: "jpg") == "IMG_1-sepia.jpg")
        #expect(FiltersController.derivedName("IMG_1.HEIC", tag: nil, extension: "heic") == "IMG_1.heic")
        #expect(FiltersController.derivedName(".hidden", tag: "noir", extension: "jpg") == ".hidden-noir.jpg")
        #expect(FiltersController.derivedName(nil, tag: "noir", extension: "jpg") == nil)
    }
}
