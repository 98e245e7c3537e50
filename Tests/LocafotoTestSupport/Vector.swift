import Foundation
import Testing

/// A protocol vector file (`protocol/vectors/*.json`, written by independent code), or any value
/// in it, read as the JSON it is: one reader for every test target instead of a Decodable copy of
/// each file's layout in each.
///
/// A field is reached by its name in the file (`v.initiator.ed25519Seed.bytes`). A missing field,
/// or one of another type than the test reads, throws a `VectorError` naming the file and the place
/// in it, so a test that misreads a vector fails and says where. A JSON key that is also the name of
/// a member below (`path`, `string`, `bytes`, ...) is read with the subscript: `v["string"]`.
@dynamicMemberLookup
public struct Vector: Sendable, CustomTestStringConvertible {
    /// Where the value stands: `handshake.json: cases[1].initiator`.
    public let path: String
    /// The value; nil when the field is absent.
    public let json: JSONValue?

    public init(path: String, json: JSONValue?) {
        self.path = path
        self.json = json
    }

    /// A file of `protocol/vectors`.
    public static func load(_ file: String) throws -> Vector {
        let data = try Data(contentsOf: Checkout.vectorURL(file))
        return Vector(path: file, json: try JSONDecoder().decode(JSONValue.self, from: data))
    }

    /// The entries of the array `key` in a vector file, for `@Test(arguments:)`. Empty when the file
    /// or the key cannot be read (a crash while the tests are listed would say nothing): keep the
    /// list in a `static let` that a test of the suite also counts, so that an empty list fails.
    public static func entries(_ file: String, _ key: String) -> [Vector] {
        (try? load(file)[key].elements) ?? []
    }

    public subscript(dynamicMember key: String) -> Vector { self[key] }

    public subscript(key: String) -> Vector {
        let place = path.hasSuffix(".json") ? "\(path): \(key)" : "\(path).\(key)"
        guard case .object(let fields)? = json else { return Vector(path: place, json: nil) }
        return Vector(path: place, json: fields[key])
    }

    /// The value, or nil when the field is absent or null (the vectors' optional fields).
    public var ifPresent: Vector? {
        switch json {
        case nil, .null?: nil
        default: self
        }
    }

    public var string: String { get throws { try read("a string") { if case .string(let s) = $0 { s } else { nil } } } }

    /// A hex string's bytes.
    public var bytes: [UInt8] {
        get throws {
            let text = try string
            guard text.utf8.count.isMultiple(of: 2), text.allSatisfy(\.isHexDigit) else {
                throw mismatch("hex digits in pairs")
            }
            var out: [UInt8] = []
            out.reserveCapacity(text.utf8.count / 2)
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                guard let byte = UInt8(text[index..<next], radix: 16) else { throw mismatch("hex digits") }
                out.append(byte)
                index = next
            }
            return out
        }
    }

    public var int: Int { get throws { try integer(Int.self) } }
    public var int64: Int64 { get throws { try integer(Int64.self) } }
    public var uint64: UInt64 { get throws { try integer(UInt64.self) } }

    /// A JSON integer that `T` holds exactly.
    public func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try read("an integer that fits \(T.self)") {
            switch $0 {
            case .int(let i): T(exactly: i)
            case .uint(let u): T(exactly: u)
            default: nil
            }
        }
    }

    /// The value as `get` reads it, or an error naming the place and what was expected there.
    func read<T>(_ expected: String, _ get: (JSONValue) -> T?) throws -> T {
        guard let json, let value = get(json) else { throw mismatch(expected) }
        return value
    }

    public var bool: Bool { get throws { try read("true or false") { if case .bool(let b) = $0 { b } else { nil } } } }

    public var elements: [Vector] {
        get throws {
            let array = try read("an array") { if case .array(let a) = $0 { a } else { nil } }
            return array.enumerated().map { Vector(path: "\(path)[\($0.offset)]", json: $0.element) }
        }
    }

    public var strings: [String] { get throws { try elements.map { try $0.string } } }

    public var object: [String: JSONValue] {
        get throws { try read("an object") { if case .object(let o) = $0 { o } else { nil } } }
    }

    /// The value decoded as a type of the code under test (a `BundleMetadata`, a `PreviewInfo`).
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        guard let json else { throw mismatch("a value") }
        return try JSONDecoder().decode(T.self, from: JSONEncoder().encode(json))
    }

    /// The vector's own `name` where it has one, so a failing case names itself.
    public var testDescription: String {
        if case .object(let o)? = json, case .string(let name)? = o["name"] { return name }
        return path
    }

    func mismatch(_ expected: String) -> VectorError {
        VectorError(path: path, problem: json.map { "expected \(expected), found \($0)" } ?? "absent")
    }
}

public struct VectorError: Error, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "vector \(path): \(problem)" }
}

/// Any JSON value: what a vector file holds, and what a decoded message is compared with.
public enum JSONValue: Codable, Equatable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Int64.self) {
            self = .int(v)
        } else if let v = try? c.decode(UInt64.self) {
            self = .uint(v)
        } else if let v = try? c.decode(Double.self) {
            self = .double(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .uint(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .array(let v): try c.encode(v)
        case .object(let v): try c.encode(v)
        }
    }

    public static func integer(_ v: some BinaryInteger) -> JSONValue {
        if let i = Int64(exactly: v) { return .int(i) }
        return .uint(UInt64(v))
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .int(let i): "\(i)"
        case .uint(let u): "\(u)"
        case .double(let d): "\(d)"
        case .string(let s): s.debugDescription
        case .array(let a): "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o):
            "{" + o.keys.sorted().map { "\($0.debugDescription):\(o[$0]!)" }.joined(separator: ",") + "}"
        }
    }
}
