import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoInbox
import LocafotoNode
import LocafotoReceiving
import LocafotoTestSupport
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoPeers

@Suite("Pairing codes")
struct PairingTests {
    /// protocol/vectors/pairing.json (made with Python hashlib), and the codes of the complete
    /// handshakes in protocol/vectors/handshake.json.
    @Test(arguments: [("pairing.json", "vectors", "code", 3), ("handshake.json", "cases", "pairingCode", 2)])
    func vectors(file: String, list: String, code: String, count: Int) throws {
        let vectors = try Vector.load(file)[list].elements
        #expect(vectors.count == count)
        for v in vectors {
            #expect(PairingCode.code(handshakeHash: try v.handshakeHash.bytes) == (try v[code].string))
        }
    }

    @Test("both ends of a handshake show the same code; another handshake gives another code")
    func bothSidesAgree() async throws {
        let (alice, bob) = try await TestNode.aliceSeeingBob()
        defer {
            alice.stop()
            bob.stop()
        }
        let mine = try await alice.agent.controllers.peers.pair("bob")
        #expect(mine.fingerprint == bob.agent.identity.fingerprint.description)
        let theirs = try #require(
            bob.agent.pairing.recent.first { $0.fingerprint == alice.agent.identity.fingerprint.description })
        #expect(mine.code == theirs.code)
        #expect(mine.code.count == 7 && mine.code.dropFirst(3).first == " ")
        let again = try await alice.agent.controllers.peers.pair("bob")
        #expect(again.code != mine.code)  // fresh ephemeral keys, fresh hash (equal by chance: 1 in 10⁶)
        #expect(try bob.agent.store.offers().isEmpty)
    }
}
