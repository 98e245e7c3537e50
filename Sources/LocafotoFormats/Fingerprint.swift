import LocafotoCrypto
import LocafotoErrors

/// A node's human-readable identity: the first 120 bits of SHA-256(Ed25519 public key), in
/// RFC 4648 base32 as four groups of six characters, each followed by a Luhn mod 32 check
/// character: `MFRGGZ3-DFMRGCY-...`. A mistyped character is caught by the check character of
/// its group. Parsing tolerates case, spaces and dashes.
public struct Fingerprint: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public static let byteLength = 15
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    static let groupLength = 6
    static let groups = 4

    /// The 24 base32 characters without check characters or dashes.
    public let digest: String

    public init(publicKey: SigningPublicKey) {
        let hash = SHA256.hash(publicKey.bytes)
        digest = Fingerprint.base32(Array(hash.prefix(Fingerprint.byteLength)))
    }

    /// Parses the canonical form (with check characters), in any case, with or without dashes/spaces.
    public init(parsing text: String) throws {
        let chars = Fingerprint.normalise(text)
        let full = Fingerprint.groups * (Fingerprint.groupLength + 1)
        guard chars.count == full else {
            throw FormatError(
                .malformed,
                "a fingerprint has \(full) characters (besides dashes); got \(chars.count) in '\(text)'")
        }
        var digest: [UInt8] = []
        for g in 0..<Fingerprint.groups {
            let start = g * (Fingerprint.groupLength + 1)
            let group = Array(chars[start..<start + Fingerprint.groupLength])
            guard group.allSatisfy({ Fingerprint.alphabet.contains($0) }),
                Fingerprint.alphabet.contains(chars[start + Fingerprint.groupLength])
            else {
                throw FormatError(.malformed, "'\(text)' contains characters outside A-Z and 2-7")
            }
            guard Fingerprint.luhn32(group) == chars[start + Fingerprint.groupLength] else {
                throw FormatError(
                    .malformed, "group \(g + 1) of fingerprint '\(text)' fails its check character: a typo?")
            }
            digest += group
        }
        self.digest = String(decoding: digest, as: UTF8.self)
    }

    /// Canonical spelling: groups with their check characters, joined by dashes.
    public var description: String {
        let d = Array(digest.utf8)
        var parts: [String] = []
        for g in 0..<Fingerprint.groups {
            let group = Array(d[g * Fingerprint.groupLength..<(g + 1) * Fingerprint.groupLength])
            parts.append(String(decoding: group + [Fingerprint.luhn32(group)], as: UTF8.self))
        }
        return parts.joined(separator: "-")
    }

    /// The first group with its check character: enough to tell peers apart in logs and tables.
    public var short: String { String(description.prefix(Fingerprint.groupLength + 1)) }

    /// True if `prefix` (any case, dashes/spaces ignored) is a prefix of the canonical spelling.
    public func matches(prefix: String) -> Bool {
        let p = Fingerprint.normalise(prefix)
        guard !p.isEmpty else { return false }
        return Fingerprint.normalise(description).starts(with: p)
    }

    public static func < (a: Fingerprint, b: Fingerprint) -> Bool { a.digest < b.digest }

    public init(from decoder: any Decoder) throws {
        try self.init(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    public static func normalise(_ text: String) -> [UInt8] {
        text.utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }.map {
            (0x61...0x7A).contains($0) ? $0 - 0x20 : $0
        }
    }

    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer = 0
        var bits = 0
        for b in bytes {
            buffer = (buffer << 8) | Int(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Luhn mod N check character (N = 32) over base32 characters, rightmost doubled first.
    static func luhn32(_ chars: [UInt8]) -> UInt8 {
        let n = 32
        var factor = 2
        var sum = 0
        for c in chars.reversed() {
            let code = alphabet.firstIndex(of: c)!
            var addend = factor * code
            factor = factor == 2 ? 1 : 2
            addend = addend / n + addend % n
            sum += addend
        }
        return alphabet[(n - sum % n) % n]
    }
}
