import Foundation

/// One message inside one Noise transport message: a type byte, then the body.
/// JSON bodies (UTF-8) for control messages; ITEM_DATA is binary.
public enum WireMessage: Sendable, Equatable {
    case offer(Offer)
    case decision(Decision)
    case itemStart(ItemStart)
    case itemData(ItemData)
    case itemEnd(ItemEnd)
    case itemResult(ItemResult)
    case error(ErrorBody)
    case ping
    case pong
    case done(Done)
    case collect(Collect)
    case queue(Queue)
    case receipts(Receipts)
    case preview(Preview)

    public enum Kind: UInt8, Sendable, CaseIterable {
        case offer = 0x01
        case decision = 0x02
        case itemStart = 0x03
        case itemData = 0x04
        case itemEnd = 0x05
        case itemResult = 0x06
        case error = 0x07
        case ping = 0x08
        case pong = 0x09
        case done = 0x0A
        case collect = 0x0B
        case queue = 0x0C
        case receipts = 0x0D
        case preview = 0x0E

        /// The name protocol/messages.md gives it (ITEM_START), for errors and logs.
        public var name: String {
            String(describing: self).reduce(into: "") { name, c in
                if c.isUppercase { name += "_" }
                name += c.uppercased()
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .offer: .offer
        case .decision: .decision
        case .itemStart: .itemStart
        case .itemData: .itemData
        case .itemEnd: .itemEnd
        case .itemResult: .itemResult
        case .error: .error
        case .ping: .ping
        case .pong: .pong
        case .done: .done
        case .collect: .collect
        case .queue: .queue
        case .receipts: .receipts
        case .preview: .preview
        }
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    public func encoded() throws -> [UInt8] {
        var out: [UInt8] = [kind.rawValue]
        switch self {
        case .offer(let m): out += try Self.json(m)
        case .decision(let m): out += try Self.json(m)
        case .itemStart(let m): out += try Self.json(m)
        case .itemEnd(let m): out += try Self.json(m)
        case .itemResult(let m): out += try Self.json(m)
        case .error(let m): out += try Self.json(m)
        case .done(let m): out += try Self.json(m)
        case .collect(let m): out += try Self.json(m)
        case .queue(let m): out += try Self.json(m)
        case .receipts(let m):
            try m.validate()  // never send what the peer must refuse
            out += try Self.json(m)
        case .ping, .pong: break
        case .itemData(let d):
            out.reserveCapacity(ItemData.headerLength + d.data.count)
            Self.appendBE(&out, UInt64(d.item), 4)
            Self.appendBE(&out, d.offset, 8)
            out += d.data
        case .preview(let p):
            Self.appendBE(&out, UInt64(p.item), 4)
            out += p.sealed
        }
        guard out.count <= WireProtocol.maxMessageLength else {
            throw WireError(.tooLarge, "message of \(out.count) bytes exceeds \(WireProtocol.maxMessageLength)")
        }
        return out
    }

    /// Writes the ITEM_DATA header in front of `data` without building an intermediate message.
    public static func itemDataHeader(item: UInt32, offset: UInt64) -> [UInt8] {
        var out: [UInt8] = [Kind.itemData.rawValue]
        appendBE(&out, UInt64(item), 4)
        appendBE(&out, offset, 8)
        return out
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws -> WireMessage {
        guard bytes.count <= WireProtocol.maxMessageLength else {
            throw WireError(.tooLarge, "message of \(bytes.count) bytes exceeds \(WireProtocol.maxMessageLength)")
        }
        guard let first = bytes.first else { throw WireError(.protocolViolation, "empty message") }
        guard let kind = Kind(rawValue: first) else {
            throw WireError(.protocolViolation, "unknown message type 0x\(String(first, radix: 16))")
        }
        let body = bytes.dropFirst()
        switch kind {
        case .offer: return .offer(try json(body, kind))
        // Free text from the peer is made safe here, once, before anything shows or logs it.
        case .decision:
            var d: Decision = try json(body, kind)
            d.message = d.message.map { PeerText.message($0) }
            return .decision(d)
        case .itemStart: return .itemStart(try json(body, kind))
        case .itemEnd: return .itemEnd(try json(body, kind))
        case .itemResult:
            var r: ItemResult = try json(body, kind)
            r.message = r.message.map { PeerText.message($0) }
            return .itemResult(r)
        case .error:
            var e: ErrorBody = try json(body, kind)
            e.message = PeerText.message(e.message)
            return .error(e)
        case .done: return .done(try json(body, kind))
        case .collect: return .collect(try json(body, kind))
        case .queue: return .queue(try json(body, kind))
        case .receipts:
            var r: Receipts = try json(body, kind)
            for i in r.receipts.indices {
                for j in r.receipts[i].items.indices {
                    r.receipts[i].items[j].message = r.receipts[i].items[j].message.map { PeerText.message($0) }
                }
            }
            return .receipts(r)
        case .ping, .pong:
            guard body.isEmpty else { throw WireError(.protocolViolation, "\(kind) carries no body") }
            return kind == .ping ? .ping : .pong
        case .itemData:
            let b = Array(body)
            guard b.count >= 12 else {
                throw WireError(.protocolViolation, "ITEM_DATA shorter than its 12-byte header")
            }
            let item = b[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let offset = b[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .itemData(ItemData(item: item, offset: offset, data: Array(b[12...])))
        case .preview:
            let b = Array(body)
            guard b.count >= 4 else { throw WireError(.protocolViolation, "PREVIEW shorter than its 4-byte header") }
            let item = b[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return .preview(Preview(item: item, sealed: Array(b[4...])))
        }
    }

    private static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
        Array(try encoder.encode(value))
    }

    private static func json<T: Decodable>(_ body: some Collection<UInt8>, _ kind: Kind) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let e as WireError {
            throw e
        } catch {
            throw WireError(.protocolViolation, "malformed \(kind) message: \(Self.describe(error))")
        }
    }

    /// A short, safe description of a JSON decoding error (field path only, never the input).
    public static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let k, _): "missing field '\(k.stringValue)'"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "bad value at '\(c.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted(let c):
            c.codingPath.isEmpty
                ? "not valid JSON" : "bad value at '\(c.codingPath.map(\.stringValue).joined(separator: "."))'"
        default: "undecodable"
        }
    }

    static func appendBE(_ out: inout [UInt8], _ v: UInt64, _ n: Int) {
        for i in (0..<n).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }
}
