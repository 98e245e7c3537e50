import Foundation
import LocafotoControl
import LocafotoControlServer
import LocafotoCrypto
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoVault
import LocafotoWire

/// Control API for organising the vault (protocol/control-api.md "Organising"): queries,
/// batch operations on a selection, albums, photo details, thumbnails and batch export.

extension Agent {
    func decodeBody<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        try ControlJSON.decode(type, body)
    }
}
