import LocafotoNode
import LocafotoWire

/// What a peer is told of a failure here. Storage and internal failures carry local detail
/// (paths under the home, errno text, database messages) that belongs in this node's log, not
/// in the hands of whoever sent the photo; the peer gets the code and a fixed sentence.
package enum PeerFacing {
    package static func message(_ code: WireErrorCode, _ local: String, node: String = "the recipient") -> String {
        switch code {
        case .storageFailed: "\(node) could not store the item (disk full or a storage error); its log has the details"
        case .internalError: "\(node) failed internally; its log has the details"
        default: local
        }
    }
}
