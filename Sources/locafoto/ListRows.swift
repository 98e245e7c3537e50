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

struct InboxRow: Decodable {
    struct Peer: Decodable {
        var name: String
        var fingerprint: String
        var trusted: Bool
    }
    struct Item: Decodable {
        var name: String
        var status: String
        var error: String?
    }
    var id: String
    var sender: Peer
    var via: Peer?
    var state: String
    var items: [Item]
    var itemCount: Int?
    /// Items with a preview (absent from agents before previews).
    var previews: Int?
    var totalBytes: Int64
    var receivedAt: String
    var connected: Bool?
}

/// Any JSON value, skipped: counts a page's elements without building them.
struct SkippedJSON: Decodable {
    init(from decoder: any Decoder) throws {}
}
