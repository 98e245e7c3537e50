/// Hex encoding for keys, hashes and test vectors.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some ContiguousBytes) -> String {
        bytes.withUnsafeBytes { b in
            var out: [UInt8] = []
            out.reserveCapacity(b.count * 2)
            for x in b {
                out.append(digits[Int(x >> 4)])
                out.append(digits[Int(x & 0x0f)])
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Decodes lower- or upper-case hex; nil on odd length or a non-hex character.
    public static func decode(_ string: some StringProtocol) -> [UInt8]? {
        let u = Array(string.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}
