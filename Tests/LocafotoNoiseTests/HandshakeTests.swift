import LocafotoCrypto
import LocafotoErrors
import LocafotoNoise
import Testing

/// Every protocol this implementation supports (4 patterns + XXpsk3, 2 ciphers, 2 hashes).
let allProtocols: [NoiseProtocolName] = [NoisePattern.nn, .kk, .ik, .xx, .xxpsk3].flatMap { pattern in
    [NoiseCipher.chaChaPoly, .aesGCM].flatMap { cipher in
        [NoiseHash.sha256, .blake2b].map { NoiseProtocolName(pattern: pattern, cipher: cipher, hash: $0) }
    }
}

/// Protocols whose first message carries its payload in clear (no DH, no psk before it): a
/// shortened payload there is indistinguishable from a shorter payload, by design.
func firstPayloadIsCleartext(_ name: NoiseProtocolName) -> Bool {
    !name.pattern.messages[0].contains { [.ee, .es, .se, .ss, .psk].contains($0) } && !name.pattern.isPSK
}

@Suite("Handshake")
struct HandshakeTests {
    /// Two parties with freshly generated keys run a whole handshake and talk both ways.
    @Test(arguments: allProtocols)
    func freshHandshakeAndTransport(_ name: NoiseProtocolName) throws {
        let iStatic = X25519SecretKey.generate()
        let rStatic = X25519SecretKey.generate()
        let needsStatic = name.pattern.name != "NN"
        let psks = (0..<name.pattern.pskCount).map { _ in SecretBytes(randomCount: 32) }
        let initiator = try HandshakeState(
            protocol: name, initiator: true, prologue: Array("locafoto/1".utf8),
            staticKey: needsStatic ? iStatic : nil,
            remoteStaticKey: name.pattern.responderPreMessage.contains(.s) ? rStatic.publicKey : nil, psks: psks)
        let responder = try HandshakeState(
            protocol: name, initiator: false, prologue: Array("locafoto/1".utf8),
            staticKey: needsStatic ? rStatic : nil,
            remoteStaticKey: name.pattern.initiatorPreMessage.contains(.s) ? iStatic.publicKey : nil, psks: psks)
        #expect(initiator.isMyTurnToWrite && !responder.isMyTurnToWrite)

        let messages = try runHandshake(initiator, responder) { Array("payload \($0)".utf8) }
        #expect(messages.count == name.pattern.messages.count)
        #expect(initiator.isComplete && responder.isComplete)
        #expect(!initiator.isMyTurnToWrite && !responder.isMyTurnToWrite)
        #expect(initiator.handshakeHash == responder.handshakeHash)
        #expect(initiator.handshakeHash.count == (name.hash == .sha256 ? 32 : 64))
        if needsStatic {
            #expect(initiator.remoteStaticKey == rStatic.publicKey)
            #expect(responder.remoteStaticKey == iStatic.publicKey)
        } else {
            #expect(initiator.remoteStaticKey == nil && responder.remoteStaticKey == nil)
        }

        var (iSend, iReceive) = try initiator.split()
        var (rSend, rReceive) = try responder.split()
        for size in [0, 1, 17, 1000, 65535 - 16] {
            let a = SecureRandom.bytes(size)
            #expect(try rReceive.decrypt(ciphertext: iSend.encrypt(plaintext: a)) == a)
            let b = SecureRandom.bytes(size)
            #expect(try iReceive.decrypt(ciphertext: rSend.encrypt(plaintext: b)) == b)
        }
        #expect(iSend.nonce == 5 && rReceive.nonce == 5 && rSend.nonce == 5 && iReceive.nonce == 5)

        // The in-place fast path produces exactly what the array API produces at the same nonce.
        let plaintext = SecureRandom.bytes(300)
        var copy = iSend
        let viaArray = try copy.encrypt(plaintext: plaintext)
        var buffer = plaintext + [UInt8](repeating: 0, count: 16)
        try buffer.withUnsafeMutableBytes { b in
            try iSend.encrypt(UnsafeRawBufferPointer(rebasing: b[0..<300]), into: b)
        }
        #expect(buffer == viaArray)
        try buffer.withUnsafeMutableBytes { b in
            try rReceive.decrypt(UnsafeRawBufferPointer(b), into: UnsafeMutableRawBufferPointer(rebasing: b[0..<300]))
        }
        #expect(Array(buffer[0..<300]) == plaintext)
    }

    /// Locafoto's own protocol with Ed25519-derived static keys, as the agent will use it.
    @Test func locafotoWithIdentityKeys() throws {
        let alice = SigningKey.generate()
        let bob = SigningKey.generate()
        let initiator = try HandshakeState(
            protocol: .locafoto, initiator: true, prologue: [], staticKey: alice.agreementKey())
        let responder = try HandshakeState(
            protocol: .locafoto, initiator: false, prologue: [], staticKey: bob.agreementKey())
        try runHandshake(initiator, responder)
        #expect(initiator.remoteStaticKey == (try bob.publicKey.agreementKey()))
        #expect(responder.remoteStaticKey == (try alice.publicKey.agreementKey()))
    }

    @Test func bitFlipInEncryptedMessageFails() throws {
        let name = NoiseProtocolName.locafoto
        let (i0, r0) = try fixedPair(name)
        let messages = try runHandshake(i0, r0) { Array("hello \($0)".utf8) }
        // Message 2 (responder → initiator): e, encrypted s, encrypted payload. Any flipped bit
        // breaks an AEAD tag — in e via the DH and the hash, elsewhere directly.
        for index in messages[1].indices {
            let (initiator, responder) = try fixedPair(name)
            _ = try responder.readMessage(initiator.writeMessage(payload: Array("hello 0".utf8)))
            var flipped = try responder.writeMessage(payload: Array("hello 1".utf8))
            #expect(flipped == messages[1])
            flipped[index] ^= 0x01 << (index % 8)
            expectNoiseError(.decryptFailed) { try initiator.readMessage(flipped) }
            // The handshake is aborted for good.
            expectNoiseError(.handshakeFailed) { try initiator.readMessage(messages[1]) }
            expectNoiseError(.handshakeFailed) { try initiator.writeMessage(payload: []) }
            expectNoiseError(.handshakeFailed) { try initiator.split() }
            #expect(!initiator.isComplete)
        }
    }

    @Test func bitFlipInCleartextFirstMessageFailsLater() throws {
        let name = NoiseProtocolName.locafoto
        for index in 0..<(32 + 5) {
            let (initiator, responder) = try fixedPair(name)
            var first = try initiator.writeMessage(payload: Array("hello".utf8))
            first[index] ^= 0x80
            // Nothing in message 1 is authenticated yet; the altered transcript shows at message 2.
            _ = try responder.readMessage(first)
            let second = try responder.writeMessage(payload: [])
            expectNoiseError(.decryptFailed) { try initiator.readMessage(second) }
        }
    }

    @Test(arguments: allProtocols)
    func truncatedHandshakeMessagesFail(_ name: NoiseProtocolName) throws {
        for payloadLength in [0, 10] {
            let payload = [UInt8](repeating: 0x42, count: payloadLength)
            let messages = try { () throws -> [[UInt8]] in
                let (i, r) = try fixedPair(name)
                return try runHandshake(i, r) { _ in payload }
            }()
            for (k, message) in messages.enumerated() {
                for length in 0..<message.count {
                    let (initiator, responder) = try fixedPair(name)
                    // Replay up to message k, then feed a truncated message k.
                    for j in 0..<k {
                        let (w, r) = j % 2 == 0 ? (initiator, responder) : (responder, initiator)
                        _ = try r.readMessage(w.writeMessage(payload: payload))
                    }
                    let reader = k % 2 == 0 ? responder : initiator
                    let truncated = Array(message[0..<length])
                    do {
                        let result = try reader.readMessage(truncated)
                        // Only a cleartext payload can be shortened undetected (Noise has no length
                        // fields): then the result must be the shortened payload.
                        #expect(
                            k == 0 && firstPayloadIsCleartext(name) && payloadLength > 0,
                            "\(name) message \(k) accepted at \(length)/\(message.count) bytes")
                        #expect(payload.starts(with: result))
                    } catch let error as NoiseError {
                        #expect(error.code == .invalidMessage || error.code == .decryptFailed, "\(error)")
                        if error.code == .invalidMessage {
                            // A length error leaves the handshake intact: the real message still works.
                            #expect(try reader.readMessage(message) == payload)
                        }
                    }
                }
            }
        }
    }

    @Test func overLengthMessagesAreRefused() throws {
        let (initiator, responder) = try fixedPair(.locafoto)
        // 32 bytes of e plus a payload of 65504 is exactly 65536: one too many.
        expectNoiseError(.invalidMessage) { try initiator.writeMessage(payload: [UInt8](repeating: 1, count: 65504)) }
        expectNoiseError(.invalidMessage) { try responder.readMessage([UInt8](repeating: 1, count: 65536)) }
        // Neither error changed any state: the largest legal message still goes through.
        let largest = [UInt8](repeating: 7, count: 65503)
        let message = try initiator.writeMessage(payload: largest)
        #expect(message.count == HandshakeState.maxMessageLength)
        #expect(try responder.readMessage(message) == largest)
        // Message 2 carries 32 + 48 + 16 bytes besides its payload.
        expectNoiseError(.invalidMessage) {
            try responder.writeMessage(payload: [UInt8](repeating: 1, count: 65535 - 96 + 1))
        }
        let second = try responder.writeMessage(payload: [UInt8](repeating: 2, count: 65535 - 96))
        #expect(second.count == 65535)
        #expect(try initiator.readMessage(second).count == 65535 - 96)
    }

    @Test(arguments: allProtocols)
    func wrongPrologueFails(_ name: NoiseProtocolName) throws {
        let (initiator, _) = try fixedPair(name, prologue: Array("v1".utf8))
        let (_, responder) = try fixedPair(name, prologue: Array("v2".utf8))
        do {
            try runHandshake(initiator, responder)
            Issue.record("handshake with different prologues succeeded")
        } catch let error as NoiseError {
            #expect(error.code == .decryptFailed)
        }
    }

    @Test func wrongPreSharedStaticKeyFails() throws {
        let name = try NoiseProtocolName(parsing: "Noise_IK_25519_ChaChaPoly_BLAKE2b")
        let initiator = try HandshakeState(
            protocol: name, initiator: true, prologue: [], staticKey: .generate(),
            remoteStaticKey: X25519SecretKey.generate().publicKey)  // not the responder's key
        let responder = try HandshakeState(protocol: name, initiator: false, prologue: [], staticKey: .generate())
        let first = try initiator.writeMessage(payload: [])
        expectNoiseError(.decryptFailed) { try responder.readMessage(first) }
    }

    @Test func wrongPSKFails() throws {
        let name = try NoiseProtocolName(parsing: "Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        let initiator = try HandshakeState(
            protocol: name, initiator: true, prologue: [], staticKey: .generate(), psks: [SecretBytes(randomCount: 32)])
        let responder = try HandshakeState(
            protocol: name, initiator: false, prologue: [], staticKey: .generate(), psks: [SecretBytes(randomCount: 32)]
        )
        _ = try responder.readMessage(initiator.writeMessage(payload: []))
        _ = try initiator.readMessage(responder.writeMessage(payload: []))
        let third = try initiator.writeMessage(payload: [])
        expectNoiseError(.decryptFailed) { try responder.readMessage(third) }
    }

    @Test func lowOrderEphemeralIsRejected() throws {
        let (initiator, responder) = try fixedPair(.locafoto)
        _ = try responder.readMessage(initiator.writeMessage(payload: []))
        var second = try responder.writeMessage(payload: [])
        for i in 0..<32 { second[i] = 0 }  // the all-zero point: DH output would be all zeros
        expectNoiseError(.invalidKey) { try initiator.readMessage(second) }
    }

    @Test func turnsAndCompletion() throws {
        let (initiator, responder) = try fixedPair(.locafoto)
        expectNoiseError(.outOfOrder) { try responder.writeMessage(payload: []) }
        expectNoiseError(.outOfOrder) { try initiator.readMessage([UInt8](repeating: 0, count: 32)) }
        expectNoiseError(.handshakeIncomplete) { try initiator.split() }
        try runHandshake(initiator, responder)
        expectNoiseError(.handshakeComplete) { try initiator.writeMessage(payload: []) }
        expectNoiseError(.handshakeComplete) { try responder.readMessage([]) }
        _ = try initiator.split()
        expectNoiseError(.outOfOrder) { try initiator.split() }
        // The handshake hash stays available for channel binding after the split.
        #expect(initiator.handshakeHash == responder.handshakeHash)
    }

    @Test func splitGivesInitiatorC1AndResponderC2() throws {
        let (initiator, responder) = try fixedPair(.locafoto)
        try runHandshake(initiator, responder)
        var (iSend, iReceive) = try initiator.split()
        var (rSend, rReceive) = try responder.split()
        let m = Array("x".utf8)
        // Sending on one direction's key must not be readable with the other direction's key.
        let c = try iSend.encrypt(plaintext: m)
        expectNoiseError(.decryptFailed) { try iReceive.decrypt(ciphertext: c) }
        #expect(try rReceive.decrypt(ciphertext: c) == m)
        let d = try rSend.encrypt(plaintext: m)
        #expect(c != d)
        #expect(try iReceive.decrypt(ciphertext: d) == m)
    }

    @Test func initialisationChecksKeys() throws {
        let xx = NoiseProtocolName.locafoto
        let ik = try NoiseProtocolName(parsing: "Noise_IK_25519_ChaChaPoly_BLAKE2b")
        let kk = try NoiseProtocolName(parsing: "Noise_KK_25519_ChaChaPoly_BLAKE2b")
        let psk = try NoiseProtocolName(parsing: "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b")
        let nn = try NoiseProtocolName(parsing: "Noise_NN_25519_ChaChaPoly_BLAKE2b")
        let key = X25519SecretKey.generate()
        expectNoiseError(.missingKey) {
            try HandshakeState(protocol: xx, initiator: true, prologue: [], staticKey: nil)
        }
        expectNoiseError(.missingKey) {
            try HandshakeState(protocol: xx, initiator: false, prologue: [], staticKey: nil)
        }
        expectNoiseError(.missingKey) {
            try HandshakeState(protocol: ik, initiator: true, prologue: [], staticKey: key)
        }
        expectNoiseError(.missingKey) {
            try HandshakeState(protocol: kk, initiator: false, prologue: [], staticKey: key)
        }
        expectNoiseError(.invalidArgument) {
            try HandshakeState(
                protocol: xx, initiator: true, prologue: [], staticKey: key, remoteStaticKey: key.publicKey)
        }
        expectNoiseError(.invalidArgument) {
            try HandshakeState(
                protocol: ik, initiator: false, prologue: [], staticKey: key, remoteStaticKey: key.publicKey)
        }
        expectNoiseError(.missingKey) {
            try HandshakeState(protocol: psk, initiator: true, prologue: [], staticKey: key)
        }
        expectNoiseError(.missingKey) {
            try HandshakeState(
                protocol: xx, initiator: true, prologue: [], staticKey: key, psks: [SecretBytes(randomCount: 32)])
        }
        expectNoiseError(.invalidKey) {
            try HandshakeState(
                protocol: psk, initiator: true, prologue: [], staticKey: key, psks: [SecretBytes(randomCount: 31)])
        }
        // NN needs no key at all; a static key is accepted and simply unused.
        _ = try HandshakeState(protocol: nn, initiator: true, prologue: [], staticKey: nil)
        _ = try HandshakeState(protocol: nn, initiator: true, prologue: [], staticKey: key)
    }

    @Test func injectedKeysAreNotZeroedAfterCompletion() throws {
        let iStatic = X25519SecretKey.generate()
        let ephemeral = X25519SecretKey.generate()
        let before = ephemeral.secret.unsafeCopy()
        let staticBefore = iStatic.secret.unsafeCopy()
        let initiator = try HandshakeState(
            protocol: .locafoto, initiator: true, prologue: [], staticKey: iStatic, ephemeralKey: ephemeral)
        let responder = try HandshakeState(protocol: .locafoto, initiator: false, prologue: [], staticKey: .generate())
        try runHandshake(initiator, responder)
        // The caller's keys are the caller's: dropped by the handshake, not wiped under its feet.
        #expect(ephemeral.secret.unsafeCopy() == before)
        #expect(iStatic.secret.unsafeCopy() == staticBefore)
    }
}
