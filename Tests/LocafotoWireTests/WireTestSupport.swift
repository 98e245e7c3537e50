import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoTestSupport
import LocafotoWire
import Testing

/// Helpers shared by the wire tests.
enum WireTestSupport {
    /// The WireErrorCode thrown by `body`; nil when nothing is thrown. Any other error fails the
    /// test: the wire layer throws only WireError.
    static func code(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> WireErrorCode? {
        do {
            try body()
            return nil
        } catch let e as WireError {
            return e.code
        } catch {
            Issue.record("expected a WireError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The WireErrorCode name thrown by `body`, "ok" if nothing is thrown, or a description of
    /// any other error type (always a failure: the wire layer must only throw WireError).
    static func outcome(_ body: () throws -> Void) -> String {
        LocafotoTestSupport.outcome(WireError.self, name: \.code.name, body)
    }

    /// A lowercase RFC 4122-shaped UUID made from a number (deterministic test ids).
    static func uuid(_ n: Int, variant: Int = 0) -> String {
        let h = String(UInt64(n), radix: 16)
        let tail = String(repeating: "0", count: max(0, 12 - h.count)) + h
        let v = String(UInt64(variant), radix: 16)
        let head = String(repeating: "0", count: max(0, 8 - v.count)) + v
        return "\(head)-0000-4000-8000-\(tail)"
    }

    static let offerID = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6"

    static func hash(_ n: Int) -> String { Hex.encode(ContentHash.of(Array("photo \(n)".utf8))) }

    static func item(_ n: Int, size: Int64 = 1000, name: String? = nil, kind: String = "jpeg") -> OfferItem {
        OfferItem(id: uuid(n, variant: 1), name: name ?? "IMG_\(n).jpg", kind: kind, size: size, hash: hash(n))
    }

    static func offer(_ items: [OfferItem], id: String = offerID) -> Offer {
        Offer(
            offer: id, items: items, more: false, totalItems: items.count, totalBytes: items.reduce(0) { $0 + $1.size })
    }

    typealias RNG = SplitMix64
}

extension WireMessage.Kind {
    /// The name used in messages.md and the vectors.
    var protocolName: String {
        switch self {
        case .offer: "OFFER"
        case .decision: "DECISION"
        case .itemStart: "ITEM_START"
        case .itemData: "ITEM_DATA"
        case .itemEnd: "ITEM_END"
        case .itemResult: "ITEM_RESULT"
        case .error: "ERROR"
        case .ping: "PING"
        case .pong: "PONG"
        case .done: "DONE"
        case .collect: "COLLECT"
        case .queue: "QUEUE"
        case .receipts: "RECEIPTS"
        case .preview: "PREVIEW"
        }
    }
}

/// A decoded message as plain JSON values, written out by hand per message type (independent
/// of the Codable conformances under test): byte fields as hex, absent optionals omitted.
func fields(of message: WireMessage) -> [String: JSONValue] {
    func opt(_ d: inout [String: JSONValue], _ key: String, _ v: JSONValue?) {
        if let v { d[key] = v }
    }
    switch message {
    case .offer(let o):
        var relay: [String: JSONValue] = [:]
        opt(&relay, "to", o.to.map { .string(Hex.encode($0.bytes)) })
        opt(
            &relay, "from",
            o.from.map { .object(["ed25519": .string(Hex.encode($0.ed25519.bytes)), "name": .string($0.name)]) })
        opt(&relay, "signature", o.signature.map { .string(Hex.encode($0.bytes)) })
        return relay.merging([
            "offer": .string(o.offer),
            "items": .array(
                o.items.map { item in
                    var fields: [String: JSONValue] = [
                        "id": .string(item.id), "name": .string(item.name), "kind": .string(item.kind),
                        "size": .integer(item.size),
                    ]
                    opt(&fields, "hash", item.hash.map { .string($0) })
                    opt(
                        &fields, "preview",
                        item.preview.map { .object(["size": .integer($0.size), "hash": .string($0.hash)]) })
                    opt(&fields, "latePreview", item.latePreview.map { .bool($0) })
                    return .object(fields)
                }),
            "more": .bool(o.more), "totalItems": .integer(o.totalItems), "totalBytes": .integer(o.totalBytes),
        ]) { $1 }
    case .decision(let d):
        var out: [String: JSONValue] = ["offer": .string(d.offer), "decision": .string(d.decision.rawValue)]
        opt(&out, "code", d.code.map { .integer($0.rawValue) })
        opt(&out, "message", d.message.map { .string($0) })
        opt(
            &out, "resume",
            d.resume.map { .array($0.map { .object(["item": .integer($0.item), "offset": .integer($0.offset)]) }) })
        opt(
            &out, "completed",
            d.completed.map {
                .array(
                    $0.map { c in
                        var o: [String: JSONValue] = ["item": .integer(c.item), "status": .string(c.status.rawValue)]
                        opt(&o, "photo", c.photo.map { .string($0) })
                        return .object(o)
                    })
            })
        opt(&out, "receipt", d.receipt.map { .string(Hex.encode($0.bytes)) })
        return out
    case .itemStart(let s):
        var meta: [String: JSONValue] = [
            "originalSize": .integer(s.metadata.originalSize), "format": .string(s.metadata.format),
        ]
        opt(&meta, "captureDate", s.metadata.captureDate.map { .string($0) })
        opt(&meta, "width", s.metadata.width.map { .integer($0) })
        opt(&meta, "height", s.metadata.height.map { .integer($0) })
        opt(&meta, "name", s.metadata.name.map { .string($0) })
        return [
            "offer": .string(s.offer), "item": .integer(s.item), "photo": .string(s.photo),
            "algorithm": .string(s.algorithm),
            "iv": .string(Hex.encode(s.iv.bytes)), "encryptedKey": .string(Hex.encode(s.encryptedKey.bytes)),
            "offset": .integer(s.offset), "metadata": .object(meta),
        ]
    case .itemData(let d):
        return ["item": .integer(d.item), "offset": .integer(d.offset), "data": .string(Hex.encode(d.data))]
    case .itemEnd(let e):
        return [
            "offer": .string(e.offer), "item": .integer(e.item), "authTag": .string(Hex.encode(e.authTag.bytes)),
            "signature": .string(Hex.encode(e.signature.bytes)),
        ]
    case .itemResult(let r):
        var out: [String: JSONValue] = [
            "offer": .string(r.offer), "item": .integer(r.item), "status": .string(r.status.rawValue),
        ]
        opt(&out, "code", r.code.map { .integer($0.rawValue) })
        opt(&out, "message", r.message.map { .string($0) })
        opt(&out, "photo", r.photo.map { .string($0) })
        return out
    case .error(let e):
        var out: [String: JSONValue] = ["code": .integer(e.code.rawValue), "message": .string(e.message)]
        opt(&out, "offer", e.offer.map { .string($0) })
        return out
    case .done(let d):
        return ["offer": .string(d.offer)]
    case .collect(let c):
        return ["want": .string(c.want.rawValue)]
    case .queue(let q):
        return ["offers": .integer(q.offers)]
    case .receipts(let r):
        return [
            "more": .bool(r.more),
            "receipts": .array(
                r.receipts.map { rc in
                    var o: [String: JSONValue] = [
                        "offer": .string(rc.offer), "to": .string(Hex.encode(rc.to.bytes)),
                        "state": .string(rc.state.rawValue),
                        "at": .string(rc.at),
                        "items": .array(
                            rc.items.map { i in
                                var io: [String: JSONValue] = [
                                    "item": .integer(i.item), "status": .string(i.status.rawValue),
                                ]
                                opt(&io, "code", i.code.map { .integer($0.rawValue) })
                                opt(&io, "message", i.message.map { .string($0) })
                                return .object(io)
                            }),
                    ]
                    opt(&o, "decision", rc.decision.map { .string($0.rawValue) })
                    opt(&o, "receipt", rc.receipt.map { .string(Hex.encode($0.bytes)) })
                    return .object(o)
                }),
        ]
    case .preview(let p):
        return ["item": .integer(p.item), "sealed": .string(Hex.encode(p.sealed))]
    case .ping, .pong:
        return [:]
    }
}
