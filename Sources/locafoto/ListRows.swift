import Foundation
import LocafotoSending
import LocafotoTransfers

/// What the CLI reads of the control API's long lists, decoded with `JSONDecoder` (fields it
/// does not show are skipped). A row that lacks a required field is an error, never a blank.
struct PhotoRow: Decodable {
    var id: String
    var name: String?
    var format: String
    var originalBytes: Int64
    var capturedAt: String?
    var importedAt: String?
    var sender: Sender?
    var tags: [String]?
    var favorite: Bool?

    struct Sender: Decodable { var name: String }
}

/// Any JSON value, skipped: counts a page's elements without building them.
struct SkippedJSON: Decodable {
    init(from decoder: any Decoder) throws {}
}
