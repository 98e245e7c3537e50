import Foundation

/// What the CLI reads of the control API's long lists, decoded with `JSONDecoder` (fields it
/// does not show are skipped). A row that lacks a required field is an error, never a blank.
struct PhotoRow: Decodable {
    var id: String
    var name: String?
    var format: String
    var originalSize: Int64
    var captureDate: String?
    var importDate: String?
    var senderName: String?
    var tags: [String]?
    var isFavorite: Bool?
}

/// Any JSON value, skipped: counts a page's elements without building them.
struct SkippedJSON: Decodable {
    init(from decoder: any Decoder) throws {}
}
