import LocafotoErrors

/// A token of a handshake pattern (§7.1).
public enum NoiseToken: String, Sendable, Hashable {
    case e, s, ee, es, se, ss, psk
}

/// A handshake pattern as data (§7): optional pre-messages, then message patterns that
/// alternate between initiator (even indices) and responder (odd indices).
///
/// Only interactive patterns whose tables are reproduced here (and tested against vectors) are
/// offered; the psk modifier (§9.2) can be applied to any of them.
public struct NoisePattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern's name as it appears in a protocol name, e.g. "XX" or "XXpsk3".
    public let name: String
    /// Keys the initiator's party is known to have before the handshake (§7.1: only "e", "s").
    public let initiatorPreMessage: [NoiseToken]
    /// Keys the responder's party is known to have before the handshake.
    public let responderPreMessage: [NoiseToken]
    /// The message patterns; message `i` is written by the initiator when `i` is even.
    public let messages: [[NoiseToken]]

    init(
        name: String, initiatorPreMessage: [NoiseToken] = [], responderPreMessage: [NoiseToken] = [],
        messages: [[NoiseToken]]
    ) {
        self.name = name
        self.initiatorPreMessage = initiatorPreMessage
        self.responderPreMessage = responderPreMessage
        self.messages = messages
    }

    public var description: String { name }

    /// True when the pattern contains a "psk" token, which switches the "e" token to also call
    /// MixKey (§9.2): that is what makes encrypting after a psk safe.
    public var isPSK: Bool { messages.contains { $0.contains(.psk) } }

    /// Number of pre-shared keys the handshake consumes, in order of the "psk" tokens.
    public var pskCount: Int { messages.reduce(0) { $0 + $1.filter { $0 == .psk }.count } }

    // §7.4 (fundamental interactive patterns) — the ones Locafoto uses.

    /// NN: no static keys.
    public static let nn = NoisePattern(name: "NN", messages: [[.e], [.e, .ee]])
    /// KK: both static keys known to the other side beforehand.
    public static let kk = NoisePattern(
        name: "KK", initiatorPreMessage: [.s], responderPreMessage: [.s],
        messages: [[.e, .es, .ss], [.e, .ee, .se]])
    /// IK: the responder's static key known beforehand; the initiator's sent immediately.
    public static let ik = NoisePattern(
        name: "IK", responderPreMessage: [.s],
        messages: [[.e, .es, .s, .ss], [.e, .ee, .se]])
    /// XX: static keys exchanged (encrypted) during the handshake. Locafoto's pattern.
    public static let xx = NoisePattern(name: "XX", messages: [[.e], [.e, .ee, .s, .es], [.s, .se]])
    /// XXpsk3: XX with a pre-shared key mixed in at the end of the third message (§9.2).
    public static let xxpsk3 = try! xx.withPSK(at: 3)

    /// The base patterns a protocol name may refer to.
    public static let fundamental: [NoisePattern] = [.nn, .kk, .ik, .xx]

    /// Applies the modifier "pskN" (§9.2): psk0 puts a "psk" token at the start of the first
    /// message, pskN (N ≥ 1) at the end of message N.
    public func withPSK(at position: Int) throws -> NoisePattern {
        guard position >= 0, position <= messages.count else {
            throw NoiseError(.unsupported, "psk\(position) is out of range for \(name) (\(messages.count) messages)")
        }
        var m = messages
        if position == 0 { m[0].insert(.psk, at: 0) } else { m[position - 1].append(.psk) }
        let isFirstModifier = !isPSK
        return NoisePattern(
            name: name + (isFirstModifier ? "" : "+") + "psk\(position)",
            initiatorPreMessage: initiatorPreMessage, responderPreMessage: responderPreMessage, messages: m)
    }

    /// Parses a pattern name such as "XX", "XXpsk3" or "NNpsk0+psk2" (modifiers in increasing order).
    public init(named text: String) throws {
        // The base name is the leading run of upper-case letters (§8: "NN", "XX", "IK", ...).
        let base = String(text.prefix { $0.isUppercase })
        guard let pattern = Self.fundamental.first(where: { $0.name == base }) else {
            throw NoiseError(
                .unsupported,
                "handshake pattern \"\(text)\" is not supported (supported: NN, KK, IK, XX and their psk variants)")
        }
        var result = pattern
        let rest = text.dropFirst(base.count)
        if !rest.isEmpty {
            var last = -1
            for modifier in rest.split(separator: "+", omittingEmptySubsequences: false) {
                // String(n) == digits rejects "+3", "03" and the like: one spelling per name.
                let digits = modifier.dropFirst(3)
                guard modifier.hasPrefix("psk"), let n = Int(digits), String(n) == digits, n > last
                else {
                    throw NoiseError(.unsupported, "pattern modifier \"\(modifier)\" in \"\(text)\" is not supported")
                }
                result = try result.withPSK(at: n)
                last = n
            }
        }
        self = result
    }
}
