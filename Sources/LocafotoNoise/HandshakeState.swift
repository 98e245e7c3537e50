import LocafotoCrypto
import LocafotoErrors

/// §5.3: the handshake state machine — a SymmetricState plus the DH keys (s, e, rs, re) and the
/// remaining message patterns. Pure: bytes in, bytes out, no I/O.
///
/// Not Sendable: owned by one task. After an error while processing a message the handshake is
/// aborted (§5: "If a decryption error occurs the handshake has failed"), its secrets are zeroed,
/// and every later call throws `handshakeFailed`. Errors detected before any state changes
/// (wrong turn, wrong length) leave it untouched.
public final class HandshakeState {
    /// §3: every Noise message is at most 65535 bytes.
    public static let maxMessageLength = 65535
    /// DHLEN for 25519.
    static let dhLength = 32

    public let protocolName: NoiseProtocolName
    public let isInitiator: Bool

    private var symmetric: SymmetricState
    private var s: X25519SecretKey?
    private var e: X25519SecretKey?
    /// Whether `e` was generated here (then it is zeroed at the end) or injected by the caller.
    private var ephemeralIsOwned = false
    private var rs: X25519PublicKey?
    private var re: X25519PublicKey?
    private var psks: [SecretBytes]
    private var nextMessage = 0

    private enum Phase { case handshaking, complete, split, failed }
    private var phase = Phase.handshaking
    private var transport: (send: CipherState, receive: CipherState)?
    private var pattern: NoisePattern { protocolName.pattern }

    /// Initialize() of §5.3.
    ///
    /// - Parameters:
    ///   - staticKey: `s`; required when the pattern sends it, pre-shares it or uses it in a DH.
    ///   - ephemeralKey: `e`, for test vectors only; nil generates a fresh one when the "e" token comes.
    ///   - remoteStaticKey / remoteEphemeralKey: `rs` / `re`, only for keys the pattern pre-shares
    ///     (KK, IK). Keys the pattern transmits must be left empty (§5.3: "which must be empty").
    ///   - psks: one 32-byte key per "psk" token, in order.
    public init(
        protocol protocolName: NoiseProtocolName, initiator: Bool, prologue: [UInt8],
        staticKey: X25519SecretKey?, ephemeralKey: X25519SecretKey? = nil,
        remoteStaticKey: X25519PublicKey? = nil, remoteEphemeralKey: X25519PublicKey? = nil,
        psks: [SecretBytes] = []
    ) throws {
        let pattern = protocolName.pattern
        let myPre = initiator ? pattern.initiatorPreMessage : pattern.responderPreMessage
        let theirPre = initiator ? pattern.responderPreMessage : pattern.initiatorPreMessage

        // Which of my keys the pattern will touch: sending it, pre-sharing it, or a DH with it.
        // In "xy" the initiator's key is x and the responder's is y.
        let tokens = pattern.messages.enumerated().flatMap { index, tokens in
            tokens.map { (token: $0, mine: (index % 2 == 0) == initiator) }
        }
        let needsStatic =
            myPre.contains(.s)
            || tokens.contains { item in
                switch item.token {
                case .s: item.mine
                case .ss: true
                case .se: initiator
                case .es: !initiator
                default: false
                }
            }
        if needsStatic && staticKey == nil {
            throw NoiseError(.missingKey, "\(protocolName.pattern.name) needs this party's static key")
        }
        if myPre.contains(.e) && ephemeralKey == nil {
            throw NoiseError(.missingKey, "\(protocolName.pattern.name) pre-shares this party's ephemeral key")
        }
        if theirPre.contains(.s) != (remoteStaticKey != nil) {
            throw remoteStaticKey == nil
                ? NoiseError(.missingKey, "\(pattern.name) needs the peer's static key beforehand")
                : NoiseError(.invalidArgument, "\(pattern.name) transmits the peer's static key; do not pass one")
        }
        if theirPre.contains(.e) != (remoteEphemeralKey != nil) {
            throw remoteEphemeralKey == nil
                ? NoiseError(.missingKey, "\(pattern.name) needs the peer's ephemeral key beforehand")
                : NoiseError(.invalidArgument, "\(pattern.name) transmits the peer's ephemeral key; do not pass one")
        }
        guard psks.count == pattern.pskCount else {
            throw NoiseError(
                .missingKey, "\(pattern.name) needs \(pattern.pskCount) pre-shared key(s), got \(psks.count)")
        }
        if let bad = psks.first(where: { $0.count != 32 }) {
            throw NoiseError(.invalidKey, "a pre-shared key must be 32 bytes, got \(bad.count)")
        }

        self.protocolName = protocolName
        isInitiator = initiator
        s = staticKey
        e = ephemeralKey
        rs = remoteStaticKey
        re = remoteEphemeralKey
        self.psks = psks
        symmetric = SymmetricState(
            protocolName: protocolName.name, cipher: protocolName.cipher, hash: protocolName.hash)
        symmetric.mixHash(prologue)
        // Pre-message public keys, the initiator's first, each in listed order.
        let initiatorKeys = initiator ? (s?.publicKey, e?.publicKey) : (rs, re)
        let responderKeys = initiator ? (rs, re) : (s?.publicKey, e?.publicKey)
        for (pre, keys) in [(pattern.initiatorPreMessage, initiatorKeys), (pattern.responderPreMessage, responderKeys)]
        {
            for token in pre {
                // Validated above: every listed key is present.
                if token == .s, let key = keys.0 { symmetric.mixHash(key.bytes) }
                if token == .e, let key = keys.1 { mixEphemeral(key) }
            }
        }
    }

    // MARK: State

    /// True once the last handshake message has been written or read.
    public var isComplete: Bool { phase == .complete || phase == .split }

    /// True when the next handshake message is ours to write.
    public var isMyTurnToWrite: Bool {
        phase == .handshaking && (nextMessage % 2 == 0) == isInitiator
    }

    /// `rs`: the peer's static key, once known (pre-shared or received).
    public var remoteStaticKey: X25519PublicKey? { rs }

    /// `h` (GetHandshakeHash()): after completion, a unique identifier of this session for channel
    /// binding; it is public, not a key.
    public var handshakeHash: [UInt8] { symmetric.h }

    /// After completion: (send, receive) from this party's point of view (the initiator sends with
    /// c1). Hands the CipherStates over exactly once, so that no nonce is ever used twice.
    public func split() throws -> (send: CipherState, receive: CipherState) {
        switch phase {
        case .handshaking: throw NoiseError(.handshakeIncomplete, "split() before the handshake completed")
        case .failed: throw NoiseError(.handshakeFailed, "the handshake failed; there is nothing to split")
        case .split: throw NoiseError(.outOfOrder, "split() was already called; the CipherStates were handed over")
        case .complete:
            let result = transport!
            transport = nil
            phase = .split
            return result
        }
    }

    // MARK: WriteMessage / ReadMessage

    /// WriteMessage(payload): the next handshake message, tokens then the (possibly encrypted) payload.
    public func writeMessage(payload: [UInt8]) throws -> [UInt8] {
        try checkTurn(writing: true)
        let total = messageOverhead() + payload.count
        guard total <= Self.maxMessageLength else {
            throw NoiseError(.invalidMessage, "handshake message would be \(total) bytes; the maximum is 65535")
        }
        return try aborting {
            var message: [UInt8] = []
            message.reserveCapacity(total)
            for token in pattern.messages[nextMessage] {
                switch token {
                case .e:
                    let key = e ?? X25519SecretKey.generate()
                    if e == nil { ephemeralIsOwned = true }
                    e = key
                    message += key.publicKey.bytes
                    mixEphemeral(key.publicKey)
                case .s:
                    message += try symmetric.encryptAndHash(s!.publicKey.bytes)
                default:
                    try process(token)
                }
            }
            message += try symmetric.encryptAndHash(payload)
            finishMessage()
            return message
        }
    }

    /// ReadMessage(message): processes the peer's handshake message and returns its payload.
    public func readMessage(_ message: [UInt8]) throws -> [UInt8] {
        try checkTurn(writing: false)
        guard message.count <= Self.maxMessageLength else {
            throw NoiseError(.invalidMessage, "handshake message of \(message.count) bytes; the maximum is 65535")
        }
        let minimum = messageOverhead()
        guard message.count >= minimum else {
            throw NoiseError(
                .invalidMessage,
                "handshake message \(nextMessage + 1) of \(pattern.name) needs at least \(minimum) bytes, got \(message.count)"
            )
        }
        return try aborting {
            var offset = 0
            // Bounds were checked against messageOverhead(); this guard only keeps a future bug
            // from becoming a crash.
            func take(_ count: Int) throws -> [UInt8] {
                guard message.count - offset >= count else {
                    throw NoiseError(.invalidMessage, "handshake message is truncated")
                }
                defer { offset += count }
                return Array(message[offset..<offset + count])
            }
            for token in pattern.messages[nextMessage] {
                switch token {
                case .e:
                    let key = try X25519PublicKey(bytes: take(Self.dhLength))
                    re = key
                    mixEphemeral(key)
                case .s:
                    let length = Self.dhLength + (symmetric.cipherState.hasKey ? CipherState.tagLength : 0)
                    rs = try X25519PublicKey(bytes: symmetric.decryptAndHash(take(length)))
                default:
                    try process(token)
                }
            }
            let payload = try symmetric.decryptAndHash(take(message.count - offset))
            finishMessage()
            return payload
        }
    }

    // MARK: Token processing

    /// "e" also calls MixKey(e.public_key) in psk handshakes (§9.2), so nothing is encrypted under
    /// a key that does not depend on a fresh ephemeral.
    private func mixEphemeral(_ key: X25519PublicKey) {
        symmetric.mixHash(key.bytes)
        if pattern.isPSK { symmetric.mixKey(key.bytes) }
    }

    /// The DH tokens and "psk", which read and write the same way.
    private func process(_ token: NoiseToken) throws {
        switch token {
        case .ee: try mixDH(e, re)
        // "es": initiator's ephemeral with responder's static; "se" the reverse.
        case .es: isInitiator ? try mixDH(e, rs) : try mixDH(s, re)
        case .se: isInitiator ? try mixDH(s, re) : try mixDH(e, rs)
        case .ss: try mixDH(s, rs)
        case .psk: symmetric.mixKeyAndHash(psks.removeFirst())
        case .e, .s: preconditionFailure("handled by the caller")
        }
    }

    private func mixDH(_ local: X25519SecretKey?, _ remote: X25519PublicKey?) throws {
        // Both are present: init checked the pattern's keys, and tokens come in pattern order.
        guard let local, let remote else {
            throw NoiseError(.missingKey, "a DH token found a key missing (invalid pattern)")
        }
        let shared: SecretBytes
        do {
            shared = try local.sharedSecret(with: remote)
        } catch {
            throw NoiseError(.invalidKey, "the peer's public key is a low-order point; DH refused")
        }
        symmetric.mixKey(shared)
    }

    /// Bytes this message carries besides the payload plaintext: public keys, and a 16-byte tag
    /// after each field encrypted once a key exists. Computed without touching the state.
    private func messageOverhead() -> Int {
        var hasKey = symmetric.cipherState.hasKey
        var size = 0
        for token in pattern.messages[nextMessage] {
            switch token {
            case .e:
                size += Self.dhLength
                if pattern.isPSK { hasKey = true }
            case .s:
                size += Self.dhLength + (hasKey ? CipherState.tagLength : 0)
            case .ee, .es, .se, .ss, .psk:
                hasKey = true
            }
        }
        return size + (hasKey ? CipherState.tagLength : 0)
    }

    private func checkTurn(writing: Bool) throws {
        switch phase {
        case .handshaking: break
        case .complete, .split:
            throw NoiseError(.handshakeComplete, "the handshake is complete; use the transport CipherStates")
        case .failed:
            throw NoiseError(.handshakeFailed, "an earlier error aborted this handshake")
        }
        guard isMyTurnToWrite == writing else {
            throw NoiseError(
                .outOfOrder,
                writing
                    ? "it is the peer's turn to send handshake message \(nextMessage + 1)"
                    : "it is this party's turn to send handshake message \(nextMessage + 1)")
        }
    }

    /// Runs a state-changing step; any error aborts the handshake.
    private func aborting<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            phase = .failed
            eraseSecrets()
            throw error
        }
    }

    /// After the last message: Split(), then forget everything secret the handshake held.
    private func finishMessage() {
        nextMessage += 1
        guard nextMessage == pattern.messages.count else { return }
        let (c1, c2) = symmetric.split()
        transport = isInitiator ? (c1, c2) : (c2, c1)
        phase = .complete
        eraseSecrets()
    }

    /// Zeroes ck, k and a generated ephemeral; drops references to the caller's keys (static
    /// key, injected ephemeral, psks), which are theirs to keep or zero.
    private func eraseSecrets() {
        symmetric.clear()
        if ephemeralIsOwned { e?.secret.withUnsafeMutableBytes { secureZero($0) } }
        e = nil
        s = nil
        psks = []
    }
}
