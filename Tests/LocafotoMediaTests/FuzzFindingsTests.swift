import Foundation
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoMedia

/// Inputs found by the fuzz targets (Fuzz/, scripts/fuzz.sh), kept as regression tests.
@Suite struct FuzzFindingsTests {
    /// fuzz-tiff: a TIFF whose IFD0 has no GPSInfo tag but whose next-IFD link leads libexif to
    /// a GPS IFD. The in-place wipe looked at IFD0 only and returned the file unchanged, GPS
    /// IFD included, as "stripped".
    static let tiffWithGPSOutsideIFD0 =
        "SUkqAAgAAAAOAAABSUkqAAgAAAAOAAABAwABAAAAEAAAAAEBAwABAAAAEAAAAAIBAwADAAAAtgAAAAMBAwABAAAAAQAAAAYBAwABAAAAAgAAAA8BAgAJAAAAvAAAABABAgAKAAAAxgAAABEBBAABAAAAaAEAABIBAwABAAAABgAAJAkAAAAAAAAAFQEDAAEAAAADAAAAFgEDAAEAAAAQAAAAFwEEAAEACQAAAwAAaYcEAAEAAADQAAAAJYgEAAEAAAD2AAAAAAAAAAgACAAIAExvY2Fmb3RvAABUZXN0Q2FtIDEAAQADkAIAFAAAAOIAAAAAAAAAMjAyNDowNTowMSAxMDowMDowMAAFAAAAAQAEAAAAAgMA//8AAgACAAAATgAAAAIABQAD/wAAAQAAAAAAAHgIYIjQAAAAJYgEAAEAAAD2AAAAAAAAAAgACAAIAExvY2Fmb3RvAABUZXMxdG1hAEMBIAADkAIAFAAAAOIAAAAAAAAAMjAyNDowNTowMSAxMDowMDowMAAFAAAAAQAEAAAAAgMAAAEAAgACAABphwQAAQAAANAAAAAliAQAAQAAAPYAAAAAAAAACAAIAAgATG9jYWZvdG8AAKyajIu8npLoMQAAAAMAAAAWAQMAAQAAABAAAAAXAQQAAQAAAAADAABphwQAAQAACBdg+vr6+vr6+vr6+vr6WBdgaBdgeBdgyB4emBdgqBdguBdgyBdgBAAFAAMAAABQAQAAAAAAADAAAAABAAAAMwAAAAEAAADQCwAAZAAAAAIAAAABAAAAEQAAAAEAAACSAQAACgAAAAgIYBcIYCgIYDgIYEgIYFgIr2gIYHgIYIgIYJgIYKgIYLgIYMgIYLgoYMgoYNgoYOgoYPcoYAg4YPr6+vr6+vr6+vr6+lg4YGg4YMgeHsgeHsgeHqg4YLg4YMg4YNg4YOg4YPc4YAhIYBdIYChIYDhIYEgUWsgUWsgI6GAX6GAo6GA46GBI6GBY6GDYCGDoCGD3CGAIF2D6+vr6+vr6+vr6+vpYF2BoF2B4F2DIHh6YaOhgeOhgiOhgmOhgqOhgFFrIFFrIFFrIFFrI9+hgCPdgF/dgKPdgOPdgSPdgWPdgaPdgePdgiPdgAABOAAAAAgAFAAMAAAA4AQAAAwACAAIAAABFAAAXYKgXYLgXYMgABAAFABdg2Bc="

    /// fuzz-exif: a block whose only readable content was a GPS IFD. Removing it left an empty
    /// TIFF structure, which libexif reads as nothing, so stripping the result again failed
    /// with "the EXIF block is damaged".
    static let exifWithOnlyGPS =
        "TU0AKgAAAAgABgEPiCUABAAAAAEAAADCAAAAAExvY2Fmb3RvAFRlc3RDYW0gMQBtYWtlLW1lZGlhLWZpACoAAAAIAAYBD4glAAQAAAABAAAAwgAAAABMb2NhZm90bwBUZXN0Q2FtIDEAbWFrZS1tZWRpYS1maXh0dXJlcy5weQAAApADAP////////8HAgAAABQAAACakAQAAgAAABQAAACuMjAyMzowNTowMSAxMDowMDowMAAyMDI0OjA1OjAxIDEwOjAwOjAwAAAHAAAAAQAAAAQCAwAAAAEAAgAAAAJOAAAAAAIABQAAAAMAAAEYAAMAAgAAAAJFAAAAAAQABQAAAAMAAHh0dXJlcy5weQAAApADAP////////8HAgAAABQAAACakAQAAgAAABQAAACuMjAyMzowNTowMSAxMDowMDowMAAyMDI0OjA1OjAxIDEwOjAwOjAwAAAHAAAAAQAAAAQCAwAAAAEAAgAAAAJOAAAAAAIABQAAAAMAAAEYAAMAAgAAAAJFAAAAAAQABQAAAAMAAAEwAAUAAQAAAAEAAAAAAAYABQAAAAEAAAFIAAAAMAAAAAEAAAAzAAAAAQAAC9AAAABkAAAAAgAAAAEAAAARAAAAAQAAAYsAAAAKAAAAIwAAAAE="

    /// fuzz-tiff: an IFD0 with two GPSInfo entries. Only the last one's GPS IFD was wiped, so the
    /// other stayed for readers that follow the first (and stripping again changed the file).
    static let tiffWithTwoGPSInfoEntries =
        "TU0AKgAAAAhDaGFyYWN0ZXIAAAEAAoglAgIAAEAKAAAACAhgFwhgKAiqAAABAAAA0AsAAGQAAAACFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXAAQABRcXFxcXFxcXFxcXAP//SUkqAAgAAAAOAAABAwABAAAAEAAAAAEBAwABAAAAEAAAAAIBAwADAAAAtgAAAAMBAwABAAAAAQAAAAYBAwABAAAAAgAAAA8BAgAJAAAAvAAAAAgIYBcIYCgIqgAAAQAAANALAABkAAAAAhcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXTU0AKgAAAAgACQAAAQEAzwBXAAEAAoglAQIAAAAAAAAAVwAAAFdgKAiq3wABAIYA0AsAAGQAAAAAAA4BAwABAAAXFxcXFxcAEAAAAAEBAwABAAAAAAAOAQMAARcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcABAAFFxcAAAAXFxAX"

    /// fuzz-tiff: IFD0 overlaps the GPS IFD, so wiping it zeroed part of another GPSInfo pointer,
    /// which then pointed at a GPS IFD that was not wiped (stripping again changed the file).
    static let tiffWhosePointersChangeWhenWiped =
        "SUkqAAgAAABHYPcoYAg4YPr6+gAAAAEBAwABAAAAEAA+ABcBBAABAAAAAAMAAGmHBAABAAAA0AAAACWIBAABAAAA9gAAnf///wAIAAgACABMb2NhZm90bwAAVGVzdENhbSAxAAEAA5ACABQAAADiSUkqAD8AAAAOAAAAAAAAAwAAABYBAwABAAAAEAAAABcBBAABAAAAAAMAAGmHBAABAAAA0AQABQBgKH5IYDhIYEgWACWIBAABAAAA/QAAAAAAAAAIAAgACABMb2NhZm90bwAAVGVzdENhbSAwAAF8AAOQDgAAAQMAAQAAABAAMjAyNDowNTowMSAxMDowMDowMAAFAAAAAQAESUkqAAgAAAAOAAABAwABAAAAEAAAAAEBAwABAAAAEAAAAAIBAwADAAAAtgAAAAMBAwABAAAABAAFAAEAAAAGAQMAAQAAAAIAAAAPAQIACQAAALwAAAAQAQIACgAAAMYAAAARAQQAAQAAAGgBAAASAQEAAQAAAAYAAAAVAQMAAQAAAAMAAAAWAQMAAQAAABAAAACXAQQAAQAAAAADAABphwQAAQAAAAIDAAABAQMAAAEAAgACAAABAABJSSoACAAAAA4AAAEDAAEAAAAQAAAAAQEDAAEAAExvY2Fmb3RvAABUZXN0Q2FtegDGAAAAEQEEAAEAAABoAQAAEgEDAAEAAAAGAAAAFQEDAAEAAAADAAAAFgEDAAEAAgAQAAAAFwEEAAEAAAAAAwAAaYcEAAEAAADQAAAAJYgEAElJKgAIaYcAAAAOAAABAwABAAAAEAAAAAEBAwABAAAAEAAAAAIBAwADAAAAtgAARXhpZgAAAAAAAQAAAAYBAwABACsAAgAAAA8BAgAJAAAAvAAAABABAgAKAAAAxgAAABEBAAEEAABoAAEAABIBAwABAAAABgAAABUBAwABAAAAAwAAABYBAz0AAQAAABAAAAAXAQQAAQAAAAADAABphwQAAQAAANAAAAAliAQAJYgAAGFtegDGAAAAEQEEAAEAAABoAQAAEgEDAAEAAAAGAAAAFQEDAAEAAAADAAAAFgEDAAEAAgAQAAAAFwEEAAEAAAAAAwAAaYcEAAEAAADQAAAAJYgEAElJKgAIaYcAAAAOAAABAwABAAAAEAAAAAEBAwABAAAAEAAAAAIBAwADbSAxAAEAA5ACABQAAADiSUkqAD8AAAAOAAAAAAAAAwAAABYBAwABAAAAEAAAABcBBAABAAAAAAMAAGmHBAABAAAA0AAAR1BTTG9uZ2l0dWRlACWIBAABAAAA/QAAAAAAAAAIAAAAAAMAAGmHBAABAAAA0AAAACWIBAABAAAA9gAAAAAAAAAIAAgACABMb2NhZm90bwAAVGVzdENhbSAxAAEAA5ACABQAAADiAAAAAAAAADIwMjR3AQA6MDU6MEn3FwEAAAADAAAAFgEDAAEAAAAQAGAI/wAAAQAAADERADAAOiAxMDoAAAAXAQQAAQAAAAADAABphwQAAQAAANAAAAAliAQAAQAAAPYAAAAAAAAACAAIAAgATG9jYWZvdG8AADhgyB4eyB4eyB4eqDhguDhgyDhg2Dhg6Dhg9zhgCEhgF0hgKEhgOEhgSEhgWEhgyB4eyB4eyB4eyB4eyB4euEhgyEhg2Ehg6Ehg90hgCFhgF1hgKFhgOFhgSFhgWFhgaFhgeFhgiFhgmFhgqFhguFhgyFhg2Fhg6Fhg91hgCGhgF2hgKGhgOGhgSGhgWGhgaGhgeGhgiGhgmGhgqGhguGhgyGhg2GhgBAAAAAIDAAABAAIAAgABADAwEDowMAAFAAAAAQAEAAABBAD/////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////AQAAAGgBAAASATEgMTA6MDA6MDAABQAAAAEABAAAAAIDAAABAAgAAgAAAE4AAAACAAUAAwAAADgBAAADAAIAAgAAAEUAAAEAAAD2AAAASUkqAAgACAAIAExvY2FmeXRvAABUZXN0AAAA0AAAACWIBAAAAwACiCUAAABFAAAABAAFAAMAKgsAAAAAAAAA//////////////////////////////////9DYW0gMQABAAOQAgAUAAAA4klJKgA/AAAAAAQABQADAAAAUAEAAAAAAAAwAAAAAQAAADMAAEkqAAgAAAAOAAABAwBdAAAAAABJSSoACAAXYLgXYMgXYNgXYABMb2PoYWY="

    @Test func gpsPointersChangedByTheWipeAreFollowed() throws {
        let input = [UInt8](try #require(Data(base64Encoded: Self.tiffWhosePointersChangeWhenWiped)))
        let once = try Media.strippingLocation(from: input, type: .tiff)
        #expect(!EXIF.fields(of: once).hasGPSIFD)
        #expect(try Media.strippingLocation(from: once, type: .tiff) == once)
    }

    @Test func tiffWithAGPSIFDOutsideIFD0IsRefusedNotReturned() throws {
        let input = [UInt8](try #require(Data(base64Encoded: Self.tiffWithGPSOutsideIFD0)))
        #expect(EXIF.fields(of: input).hasGPSIFD)
        let error = #expect(throws: MediaError.self) { try Media.strippingLocation(from: input, type: .tiff) }
        #expect(error?.code == .unsupported)
    }

    @Test func everyGPSIFDLinkedFromIFD0IsWiped() throws {
        let fuzzed = [UInt8](try #require(Data(base64Encoded: Self.tiffWithTwoGPSInfoEntries)))
        let once = try Media.strippingLocation(from: fuzzed, type: .tiff)
        #expect(!EXIF.fields(of: once).hasGPSIFD)
        #expect(try Media.strippingLocation(from: once, type: .tiff) == once)

        // Big-endian TIFF: IFD0 (at 8) links GPS IFDs at 38 and 68, each with GPSLatitudeRef
        // "N" and GPSLongitudeRef "E" inline.
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8] + Bytes.be16(2)
        tiff +=
            [0x88, 0x25, 0, 4, 0, 0, 0, 1] + Bytes.be32(38) + [0x88, 0x25, 0, 4, 0, 0, 0, 1] + Bytes.be32(68)
            + Bytes.be32(0)
        for _ in 0..<2 {
            tiff +=
                Bytes.be16(2) + [0, 1, 0, 2, 0, 0, 0, 2, 0x4E, 0, 0, 0] + [0, 3, 0, 2, 0, 0, 0, 2, 0x45, 0, 0, 0]
                + Bytes.be32(0)
        }
        #expect(EXIF.fields(of: tiff).hasGPSIFD)
        let out = try Media.strippingLocation(from: tiff, type: .tiff)
        #expect(out.count == tiff.count)
        #expect(out[38..<68].allSatisfy { $0 == 0 } && out[68..<98].allSatisfy { $0 == 0 })
        #expect(out[..<38] == tiff[..<38])  // IFD0 and its GPSInfo pointers stay
    }

    /// Out-of-line GPS values may overlap: 20,000 entries each covering a 4 MiB file were zeroed
    /// one after the other (80 billion writes); each byte is now zeroed once.
    @Test(.timeLimit(.minutes(1))) func overlappingGPSValuesAreZeroedOnce() throws {
        let size = 4 << 20
        let entries = 20_000
        var tiff: [UInt8] =
            [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8] + Bytes.be16(1) + [0x88, 0x25, 0, 4, 0, 0, 0, 1] + Bytes.be32(26)
            + Bytes.be32(0)
        tiff += Bytes.be16(entries)
        // RATIONALs over the whole file
        for _ in 0..<entries { tiff += [0, 2, 0, 5] + Bytes.be32((size - 8) / 8) + Bytes.be32(8) }
        tiff += Bytes.be32(0)
        tiff += [UInt8](repeating: 0x11, count: size - tiff.count)
        let out = try Media.strippingLocation(from: tiff, type: .tiff)
        #expect(out.count == tiff.count)
        #expect(out[8...].allSatisfy { $0 == 0 })
    }

    /// fuzz-heif (inputs written from reading the box parser, run through the target): a `meta`
    /// box of 8 bytes, and an `infe` box whose item type lies past its end, crashed the process
    /// with "Range requires lowerBound <= upperBound".
    @Test func heifBoxesTooSmallForTheirFieldsAreNotACrash() throws {
        let ftyp = Bytes.be32(24) + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { Bytes.be32(8 + body.count) + Array(type.utf8) + body }

        let emptyMeta = ftyp + box("meta", [])
        let error = #expect(throws: MediaError.self) { try Media.strippingLocation(from: emptyMeta, type: .heic) }
        #expect(error?.code == .undecodable)

        // infe (version 2, item 1) ends right after its protection index; the next four bytes of
        // the file, outside the box, say "mime".
        let infe = box("infe", [2, 0, 0, 0, 0, 1, 0, 0])
        let shortInfe = ftyp + box("meta", [0, 0, 0, 0] + box("iinf", [0, 0, 0, 0, 0, 1] + infe)) + Array("mime".utf8)
        #expect(try Media.strippingLocation(from: shortInfe, type: .heic) == shortInfe)
    }

    @Test func aBlockLeftEmptyByRemovingGPSCanBeStrippedAgain() throws {
        let input = [UInt8](try #require(Data(base64Encoded: Self.exifWithOnlyGPS)))
        #expect(EXIF.fields(of: input).hasGPSIFD)
        let block = try #require(try EXIF.removingGPS(from: input))
        #expect(!EXIF.fields(of: block).hasGPSIFD)
        #expect(try EXIF.removingGPS(from: block) == nil)

        // The same through a JPEG: a stripped photo strips again to itself.
        let app1 = EXIF.prefix + input
        let jpeg: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xE1] + Bytes.be16(app1.count + 2) + app1 + [0xFF, 0xDA, 0, 2, 1, 2, 3, 0xFF, 0xD9]
        let once = try Media.strippingLocation(from: jpeg, type: .jpeg)
        #expect(try Media.strippingLocation(from: once, type: .jpeg) == once)
    }

    @Test func emptyTIFFStructuresHoldNoGPSButUnreadableBlocksStillFail() throws {
        // IFD0 with no entries and no next IFD, as libexif writes it, in both byte orders.
        #expect(try EXIF.removingGPS(from: [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0]) == nil)
        #expect(
            try EXIF.removingGPS(from: EXIF.prefix + [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == nil)
        // IFD0 outside the block, or an empty IFD0 that links to another IFD: still damaged.
        #expect(throws: MediaError.self) {
            try EXIF.removingGPS(from: [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0])
        }
        #expect(throws: MediaError.self) {
            try EXIF.removingGPS(from: [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 99, 0, 0])
        }
    }
}
