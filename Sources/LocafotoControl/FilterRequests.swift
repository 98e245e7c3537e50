import Foundation
import LocafotoQuery

/// `GET /v1/filters`: a filter's name and what it does (docs/usage.md "Filters" defines each exactly).
public struct FilterInfo: Codable, Sendable, Equatable {
    public var name: String
    public var description: String
    public init(name: String, description: String) {
        self.name = name
        self.description = description
    }
}

/// `POST /v1/photos/filter`: a filtered copy of each selected photo, added beside it.
public struct FilterRequest: Codable, Sendable, Equatable {
    public var selection: PhotoSelection
    public var filter: String
    /// Remove the GPS position from the copies (the originals keep theirs).
    public var stripLocation: Bool?
    /// JPEG quality of the copies, 60...100 (default 92).
    public var quality: Int?
    public init(selection: PhotoSelection, filter: String, stripLocation: Bool? = nil, quality: Int? = nil) {
        self.selection = selection
        self.filter = filter
        self.stripLocation = stripLocation
        self.quality = quality
    }
}

/// One photo of `POST /v1/photos/filter`: the original and its new filtered copy, or why not.
public struct FilteredPhoto: Codable, Sendable, Equatable {
    public var original: String
    public var photo: String?
    public var error: String?
    public init(original: String, photo: String? = nil, error: String? = nil) {
        self.original = original
        self.photo = photo
        self.error = error
    }
}

/// `POST /v1/compress`: seed 004's compression, in the vault.
public struct CompressRequest: Codable, Sendable, Equatable {
    public var selection: PhotoSelection
    /// 60...90, default 75.
    public var quality: Int?
    /// Longest side, default 1500 px (never enlarged).
    public var maxSide: Int?
    /// `jpeg` (default) or `heic` (where libvips has an HEIF encoder).
    public var format: String?
    public var stripLocation: Bool?
    /// The album the copies go to (created when missing); default "Compressed – NAME".
    public var album: String?
    /// Replace each original instead of adding a copy (the CLI asks first).
    public var replace: Bool?
    /// Change nothing: estimate what each photo would gain, largest gain first.
    public var dryRun: Bool?
    public init(
        selection: PhotoSelection, quality: Int? = nil, maxSide: Int? = nil, format: String? = nil,
        stripLocation: Bool? = nil,
        album: String? = nil, replace: Bool? = nil, dryRun: Bool? = nil
    ) {
        self.selection = selection
        self.quality = quality
        self.maxSide = maxSide
        self.format = format
        self.stripLocation = stripLocation
        self.album = album
        self.replace = replace
        self.dryRun = dryRun
    }
}

/// One photo of a compression: sizes before and after, what was saved, and the ratio after/before.
public struct CompressedPhoto: Codable, Sendable, Equatable {
    public var original: String
    public var name: String?
    /// The compressed photo (absent in a dry run, or when it was not made).
    public var photo: String?
    public var beforeBytes: Int64
    public var afterBytes: Int64?
    public var savedBytes: Int64?
    public var ratio: Double?
    /// Why the photo was left as it was (already smaller than its compressed form, undecodable, …).
    public var skipped: String?
    public init(
        original: String, name: String?, photo: String? = nil, beforeBytes: Int64, afterBytes: Int64? = nil,
        skipped: String? = nil
    ) {
        self.original = original
        self.name = name
        self.photo = photo
        self.beforeBytes = beforeBytes
        self.afterBytes = afterBytes
        if let afterBytes {
            savedBytes = beforeBytes - afterBytes
            ratio = beforeBytes > 0 ? Double(afterBytes) / Double(beforeBytes) : nil
        }
        self.skipped = skipped
    }
}

/// `POST /v1/compress`'s answer: per photo and in total (the photos compressed, or in a dry run
/// the estimate for each, largest gain first).
public struct CompressOutcome: Codable, Sendable, Equatable {
    public var dryRun: Bool
    /// The album the copies went to; absent with `replace` and in a dry run.
    public var album: String?
    public var replaced: Bool
    public var format: String
    public var quality: Int
    public var maxSide: Int
    public var photos: [CompressedPhoto]
    public var beforeBytes: Int64
    public var afterBytes: Int64
    public var savedBytes: Int64
    public var ratio: Double?
    public init(
        dryRun: Bool, album: String?, replaced: Bool, format: String, quality: Int, maxSide: Int,
        photos: [CompressedPhoto]
    ) {
        self.dryRun = dryRun
        self.album = album
        self.replaced = replaced
        self.format = format
        self.quality = quality
        self.maxSide = maxSide
        self.photos = photos
        let counted = photos.filter { $0.afterBytes != nil && $0.skipped == nil }
        beforeBytes = counted.reduce(0) { $0 + $1.beforeBytes }
        afterBytes = counted.reduce(0) { $0 + ($1.afterBytes ?? 0) }
        savedBytes = beforeBytes - afterBytes
        ratio = beforeBytes > 0 ? Double(afterBytes) / Double(beforeBytes) : nil
    }
}
