import LocafotoCrypto
import LocafotoErrors
import LocafotoNoise
import LocafotoTestSupport
import Testing

/// Hex to bytes, failing the test (not crashing) on bad input.
func unhex(_ s: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let bytes = Hex.decode(s) else {
        Issue.record("invalid hex in test data: \(s.prefix(40))", sourceLocation: sourceLocation)
        return []
    }
    return bytes
}

/// A raw 32-byte X25519 secret, as the vectors give them.
func secretKey(_ hex: String) throws -> X25519SecretKey {
    try X25519SecretKey(secret: SecretBytes(copying: unhex(hex)))
}

func publicKey(_ hex: String) throws -> X25519PublicKey {
    try X25519PublicKey(bytes: unhex(hex))
}

/// Expects `body` to throw a NoiseError with `code`.
func expectNoiseError<R>(
    _ code: NoiseError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    expectThrows(code, sourceLocation: sourceLocation, body)
}

/// Fixed keys so that a handshake transcript is reproducible (needed to rebuild a receiver at a
/// given message after an aborting error).
enum Fixed {
    static let initiatorStatic = "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1"
    static let responderStatic = "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893"
    static let initiatorEphemeral = "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a"
    static let responderEphemeral = "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b"
    static let psk = "54686973206973206d7920417573747269616e20706572737065637469766521"
}

/// A deterministic initiator/responder pair for `name` with the fixed keys above.
func fixedPair(_ name: NoiseProtocolName, prologue: [UInt8] = Array("prologue".utf8)) throws
    -> (initiator: HandshakeState, responder: HandshakeState)
{
    let iStatic = try secretKey(Fixed.initiatorStatic)
    let rStatic = try secretKey(Fixed.responderStatic)
    let usesStatic = name.pattern.name.hasPrefix("NN") == false
    let iKnowsR = name.pattern.responderPreMessage.contains(.s)
    let rKnowsI = name.pattern.initiatorPreMessage.contains(.s)
    let psks = (0..<name.pattern.pskCount).map { _ in SecretBytes(copying: unhex(Fixed.psk)) }
    let initiator = try HandshakeState(
        protocol: name, initiator: true, prologue: prologue, staticKey: usesStatic ? iStatic : nil,
        ephemeralKey: try secretKey(Fixed.initiatorEphemeral),
        remoteStaticKey: iKnowsR ? rStatic.publicKey : nil, psks: psks)
    let responder = try HandshakeState(
        protocol: name, initiator: false, prologue: prologue, staticKey: usesStatic ? rStatic : nil,
        ephemeralKey: try secretKey(Fixed.responderEphemeral),
        remoteStaticKey: rKnowsI ? iStatic.publicKey : nil, psks: psks)
    return (initiator, responder)
}

/// Runs a whole handshake between two states, returning the messages exchanged.
@discardableResult
func runHandshake(_ initiator: HandshakeState, _ responder: HandshakeState, payload: (Int) -> [UInt8] = { _ in [] })
    throws -> [[UInt8]]
{
    var messages: [[UInt8]] = []
    var index = 0
    while !initiator.isComplete || !responder.isComplete {
        let (writer, reader) = initiator.isMyTurnToWrite ? (initiator, responder) : (responder, initiator)
        let message = try writer.writeMessage(payload: payload(index))
        #expect(try reader.readMessage(message) == payload(index))
        messages.append(message)
        index += 1
        guard index < 10 else {
            Issue.record("handshake did not complete")
            break
        }
    }
    return messages
}
