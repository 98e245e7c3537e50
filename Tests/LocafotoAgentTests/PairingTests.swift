import Foundation
import LocafotoCrypto
@testable import LocafotoPeers
import LocafotoTestSupport
import Testing
@testable import LocafotoAgent
@testable import LocafotoControlServer

@Suite("Pairing codes")
struct PairingTests {
    @Test("vectors from protocol/vectors/pairing.json (made with Python hashlib)")
    func vectors() throws {
        struct File: Decodable {
            struct V: Decodable { var handshakeHash: String; var code: String }
            var vectors: [V]
        }
        let file = try Checkout.vectors(File.self, "pairing.json")
        #expect(file.vectors.count == 3)
        for v in file.vectors {
            #expect(PairingCode.code(handshakeHash: try #require(Hex.decode(v.handshakeHash))) == v.code)
        }
    }

    @Test("the codes of the complete handshakes in protocol/vectors/handshake.json")
    func handshakeVectors() throws {
        struct File: Decodable {
            struct Case: Decodable { var handshakeHash: String; var pairingCode: String }
            var cases: [Case]
        }
        let file = try Checkout.vectors(File.self, "handshake.json")
        #expect(file.cases.count == 2)
        for c in file.cases {
            #expect(PairingCode.code(handshakeHash: try #require(Hex.decode(c.handshakeHash))) == c.pairingCode)
        }
    }

    @Test("both ends of a handshake show the same code; another handshake gives another code")
    func bothSidesAgree() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer { alice.stop(); bob.stop() }
        let mine = try await alice.agent.peersController.pair("bob")
        #expect(mine.fingerprint == bob.agent.identity.fingerprint.description)
        let theirs = try #require(
            bob.agent.pairing.recent.first { $0.fingerprint == alice.agent.identity.fingerprint.description })
        #expect(mine.code == theirs.code)
        #expect(mine.code.count == 7 && mine.code.dropFirst(3).first == " ")
        let again = try await alice.agent.peersController.pair("bob")
        #expect(again.code != mine.code)  // fresh ephemeral keys, fresh hash (equal by chance: 1 in 10⁶)
        #expect(try bob.agent.store.offers().isEmpty)
    }
}
