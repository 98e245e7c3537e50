import Foundation
import LocafotoCrypto
import LocafotoNoise
import Testing

/// The Noise test-vector format (as used by cacophony): hex strings throughout.
struct NoiseVector: Codable, Sendable, CustomTestStringConvertible {
    struct Message: Codable, Sendable {
        let payload: String
        let ciphertext: String
    }

    let protocolName: String
    let initPrologue: String
    let initPsks: [String]?
    let initStatic: String?
    let initEphemeral: String?
    let initRemoteStatic: String?
    let respPrologue: String
    let respPsks: [String]?
    let respStatic: String?
    let respEphemeral: String?
    let respRemoteStatic: String?
    let handshakeHash: String?
    let messages: [Message]

    var testDescription: String { protocolName }
}

struct NoiseVectorFile: Codable {
    let vectors: [NoiseVector]
}

enum Vectors {
    /// Every vector in the file; loading problems surface in `fileHasSupportedVectors`.
    static func load() throws -> [NoiseVector] {
        guard
            let url = Bundle.module.url(forResource: "cacophony-25519", withExtension: "json", subdirectory: "Vectors")
        else { throw CocoaError(.fileNoSuchFile) }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(NoiseVectorFile.self, from: Data(contentsOf: url)).vectors
    }

    /// The vectors whose protocol name this implementation supports.
    static var supported: [NoiseVector] {
        ((try? load()) ?? []).filter { (try? NoiseProtocolName(parsing: $0.protocolName)) != nil }
    }
}

@Suite("Cacophony test vectors")
struct VectorTests {
    /// Fails loudly if the file is missing, unreadable, or lacks a suite we claim to support.
    @Test func fileHasSupportedVectors() throws {
        let vectors = try Vectors.load()
        var counts: [String: Int] = [:]
        for v in vectors { counts[v.protocolName, default: 0] += 1 }
        for pattern in ["NN", "KK", "IK", "XX", "XXpsk3"] {
            for cipher in ["ChaChaPoly"] {
                for hash in ["SHA256", "BLAKE2b"] {
                    let name = "Noise_\(pattern)_25519_\(cipher)_\(hash)"
                    #expect(counts[name, default: 0] > 0, "no vector for \(name)")
                }
            }
        }
        #expect(counts["Noise_XX_25519_ChaChaPoly_BLAKE2b", default: 0] > 0, "no vector for Locafoto's own protocol")
        #expect(counts.keys.contains { $0.contains("AESGCM") }, "no AESGCM vector")
        // Every vector in the file must be one we run: a silently skipped vector is a hidden failure.
        for name in counts.keys {
            #expect(throws: Never.self, "unsupported vector \(name)") { try NoiseProtocolName(parsing: name) }
        }
        #expect(Vectors.supported.count == vectors.count)
    }

    @Test(arguments: Vectors.supported)
    func replay(_ v: NoiseVector) throws {
        let name = try NoiseProtocolName(parsing: v.protocolName)
        #expect(name.name == v.protocolName)

        let initiator = try HandshakeState(
            protocol: name, initiator: true, prologue: unhex(v.initPrologue),
            staticKey: v.initStatic.map(secretKey), ephemeralKey: v.initEphemeral.map(secretKey),
            remoteStaticKey: v.initRemoteStatic.map(publicKey),
            psks: (v.initPsks ?? []).map { SecretBytes(copying: unhex($0)) })
        let responder = try HandshakeState(
            protocol: name, initiator: false, prologue: unhex(v.respPrologue),
            staticKey: v.respStatic.map(secretKey), ephemeralKey: v.respEphemeral.map(secretKey),
            remoteStaticKey: v.respRemoteStatic.map(publicKey),
            psks: (v.respPsks ?? []).map { SecretBytes(copying: unhex($0)) })

        var initiatorCiphers: (send: CipherState, receive: CipherState)?
        var responderCiphers: (send: CipherState, receive: CipherState)?
        var handshakeMessages = 0

        // Cacophony convention for interactive patterns: message i is sent by the initiator when i
        // is even, during the handshake and after it alike.
        for (i, message) in v.messages.enumerated() {
            let payload = unhex(message.payload)
            let expected = unhex(message.ciphertext)
            let initiatorSends = i % 2 == 0
            if !initiator.isComplete {
                let (writer, reader) = initiatorSends ? (initiator, responder) : (responder, initiator)
                #expect(writer.isMyTurnToWrite && !reader.isMyTurnToWrite, "message \(i)")
                let ciphertext = try writer.writeMessage(payload: payload)
                #expect(Hex.encode(ciphertext) == Hex.encode(expected), "handshake message \(i)")
                #expect(try reader.readMessage(ciphertext) == payload, "handshake message \(i)")
                handshakeMessages += 1
                if initiator.isComplete {
                    #expect(responder.isComplete)
                    #expect(initiator.handshakeHash == responder.handshakeHash)
                    if let h = v.handshakeHash {
                        #expect(Hex.encode(initiator.handshakeHash) == h)
                    }
                    initiatorCiphers = try initiator.split()
                    responderCiphers = try responder.split()
                }
            } else {
                guard var ic = initiatorCiphers, var rc = responderCiphers else {
                    Issue.record("no transport CipherStates")
                    return
                }
                if initiatorSends {
                    let ciphertext = try ic.send.encrypt(plaintext: payload)
                    #expect(Hex.encode(ciphertext) == Hex.encode(expected), "transport message \(i)")
                    #expect(try rc.receive.decrypt(ciphertext: ciphertext) == payload)
                } else {
                    let ciphertext = try rc.send.encrypt(plaintext: payload)
                    #expect(Hex.encode(ciphertext) == Hex.encode(expected), "transport message \(i)")
                    #expect(try ic.receive.decrypt(ciphertext: ciphertext) == payload)
                }
                initiatorCiphers = ic
                responderCiphers = rc
            }
        }
        #expect(handshakeMessages == name.pattern.messages.count)
        #expect(initiator.isComplete && responder.isComplete)
        #expect(v.messages.count > handshakeMessages, "vector has no transport messages")

        // The peer's static key is learned (or was known) wherever the pattern has one.
        if let s = v.respStatic { #expect(initiator.remoteStaticKey == (try secretKey(s)).publicKey) }
        if let s = v.initStatic { #expect(responder.remoteStaticKey == (try secretKey(s)).publicKey) }
    }
}
