/// A value a request gave that its type refuses, in words for the person who sent it. It is
/// thrown as the underlying error of a `DecodingError`, so that whoever decodes a request can
/// answer with these words rather than a decoder's.
public struct RefusedValue: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A closed set of names that a request may give, such as a sort order or an album action: an
/// enum whose raw values are the names. A name outside the set is refused with a message that
/// lists every name of the set (`RefusedValue`).
public protocol NamedChoice: RawRepresentable, CaseIterable, Codable, Sendable, Hashable
where RawValue == String {}

extension NamedChoice {
    /// "a, b or c": the names, as a message lists them.
    public static var names: String {
        let all = allCases.map(\.rawValue)
        guard all.count > 1 else { return all.joined() }
        return all.dropLast().joined(separator: ", ") + " or " + all.last!
    }

    /// `name` as a member of the set, or the error that says which names there are; `field` is
    /// what the request called it.
    public static func named(_ name: String, field: String) throws(RefusedValue) -> Self {
        guard let value = Self(rawValue: name) else { throw RefusedValue("\(field) must be \(names)") }
        return value
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try Self.named(name, field: decoder.codingPath.last?.stringValue ?? "the value")
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
