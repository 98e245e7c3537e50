import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoNoise
import LocafotoWire
import NIOCore

/// The authenticated peer at the other end of a completed handshake.
public struct PeerIdentity: Sendable, Equatable {
    public let publicKey: SigningPublicKey
    public let fingerprint: Fingerprint
    public let name: String
    public let caps: [String]

    package init(publicKey: SigningPublicKey, fingerprint: Fingerprint, name: String, caps: [String]) {
        self.publicKey = publicKey
        self.fingerprint = fingerprint
        self.name = name
        self.caps = caps
    }
}

/// The writing half of a Noise session: encrypts each wire message into one frame.
/// Used by exactly one task at a time (the session's task), which keeps nonces in order.
package struct SecureWriter {
    package let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    package var cipher: CipherState
    package let allocator: ByteBufferAllocator

    package mutating func send(_ message: WireMessage) async throws {
        let plain = try message.encoded()
        try await sendPlain(header: plain, body: [])
    }

    /// Frames `header ‖ body` as one transport message, encrypting in place in the outgoing
    /// buffer: one copy of the payload, no intermediate arrays on the hot path.
    package mutating func sendPlain(header: [UInt8], body: ArraySlice<UInt8>) async throws {
        let plainLength = header.count + body.count
        guard plainLength <= WireProtocol.maxMessageLength else {
            throw WireError(.tooLarge, "message of \(plainLength) bytes exceeds the Noise limit")
        }
        let frameLength = plainLength + 16
        var buffer = allocator.buffer(capacity: 2 + frameLength)
        buffer.writeInteger(UInt16(frameLength))
        buffer.writeBytes(header)
        if body.count > 0 { buffer.writeBytes(body) }
        buffer.writeRepeatingByte(0, count: 16)
        try buffer.withUnsafeMutableReadableBytes { raw in
            let payload = UnsafeMutableRawBufferPointer(rebasing: raw[2...])
            try cipher.encrypt(UnsafeRawBufferPointer(rebasing: payload[..<plainLength]), into: payload)
        }
        try await outbound.write(buffer)
    }

    package mutating func sendItemData(item: UInt32, offset: UInt64, bytes: ArraySlice<UInt8>) async throws {
        try await sendPlain(header: WireMessage.itemDataHeader(item: item, offset: offset), body: bytes)
    }
}

/// Turns frames into wire messages with the receive cipher.
package struct SecureReader {
    package var cipher: CipherState

    package mutating func open(_ frame: ByteBuffer) throws -> WireMessage {
        var frame = frame
        guard frame.readableBytes >= 17 else {
            throw WireError(.protocolViolation, "transport message shorter than its tag")
        }
        let plain = try frame.withUnsafeMutableReadableBytes { raw -> [UInt8] in
            try cipher.decrypt(
                UnsafeRawBufferPointer(raw), into: UnsafeMutableRawBufferPointer(rebasing: raw[..<(raw.count - 16)]))
            return Array(raw[..<(raw.count - 16)])
        }
        return try WireMessage.decode(plain)
    }
}

/// Runs the Noise XX handshake over frames (protocol/handshake.md) and checks that the Ed25519
/// key in the peer's HELLO is the one behind its Noise static key.
package enum Handshake {
    /// Any failure throws, and the caller closes the connection without sending anything more
    /// (handshake.md "Aborting"): no ERROR, as there are no transport keys yet.
    ///
    /// - Parameters:
    ///   - expected: for the initiator, the fingerprint the advertisement named. It is
    ///     checked as soon as the responder's HELLO arrives (message 2), before this node sends its
    ///     own identity in message 3, so an impostor never learns who was calling.
    ///   - ephemeral: for test vectors only (protocol/vectors/handshake.json): this side's Noise
    ///     ephemeral key. nil, as everywhere else, draws a fresh one from the CSPRNG; a fixed
    ///     ephemeral in a real session would destroy its forward secrecy.
    package static func run(
        initiator: Bool, key: X25519SecretKey, hello: Hello, expected: Fingerprint? = nil,
        ephemeral: X25519SecretKey? = nil,
        next: () async throws -> ByteBuffer?, write: ([UInt8]) async throws -> Void
    ) async throws -> (PeerIdentity, CipherState, CipherState, [UInt8]) {
        let hs = try HandshakeState(
            protocol: .locafoto, initiator: initiator, prologue: WireProtocol.prologue,
            staticKey: key, ephemeralKey: ephemeral)
        let myHello = try hello.encoded()
        var peer: PeerIdentity?
        // XX: -> e ; <- e, ee, s, es (responder HELLO) ; -> s, se (initiator HELLO)
        for step in 0..<3 {
            let iWrite = (step % 2 == 0) == initiator
            if iWrite {
                let payload: [UInt8] = step == 0 ? [] : Array(myHello)
                let m = try hs.writeMessage(payload: payload)
                try await write(Framing.frame(m))
            } else {
                guard let frame = try await next() else {
                    throw SessionError(.closed, "the peer closed the connection during the handshake")
                }
                let payload = try hs.readMessage(Array(frame.readableBytesView))
                if step == 0 {
                    guard payload.isEmpty else {
                        throw WireError(.protocolViolation, "handshake message 1 must carry no payload")
                    }
                    continue
                }
                guard let rs = hs.remoteStaticKey else {
                    throw SessionError(.internalError, "no remote key after message \(step + 1)")
                }
                let p = try verify(remoteHello: payload, remoteStatic: rs)
                if let expected, p.fingerprint != expected { throw PinningFailure(peer: p) }
                peer = p
            }
        }
        guard let peer else { throw SessionError(.internalError, "handshake finished without the peer's HELLO") }
        let (send, receive) = try hs.split()
        return (peer, send, receive, hs.handshakeHash)
    }

    package static func verify(remoteHello: [UInt8], remoteStatic: X25519PublicKey) throws -> PeerIdentity {
        guard remoteHello.count <= 4096, let hello = try? JSONDecoder().decode(Hello.self, from: Data(remoteHello))
        else {
            throw WireError(.protocolViolation, "the peer's HELLO is not valid JSON")
        }
        guard hello.v == WireProtocol.version else {
            throw WireError(
                .unsupportedVersion,
                "the peer speaks protocol version \(hello.v); this agent speaks \(WireProtocol.version)")
        }
        guard let key = try? SigningPublicKey(bytes: hello.ed25519.bytes) else {
            throw WireError(
                .protocolViolation, "the peer's HELLO ed25519 key is \(hello.ed25519.bytes.count) bytes, not 32")
        }
        // A key that is no curve point has no X25519 form: it cannot be the one behind `rs`.
        guard let agreement = try? key.agreementKey(), agreement == remoteStatic else {
            throw WireError(.identityMismatch, "the peer's Ed25519 key does not match its Noise static key")
        }
        return PeerIdentity(
            publicKey: key, fingerprint: Fingerprint(publicKey: key), name: DisplayName.sanitize(hello.name),
            caps: hello.caps)
    }
}

/// The responder proved a key other than the one its advertisement named.
package struct PinningFailure: Error {
    package let peer: PeerIdentity
}

/// A session that ended below the wire protocol: the peer went away, or this side broke.
/// (Protocol errors are `WireError`s; the agent words both for its user.)
package struct SessionError: Error, CustomStringConvertible {
    package enum Kind: Sendable { case closed, internalError }
    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
