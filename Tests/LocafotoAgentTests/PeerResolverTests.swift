import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoDiscovery
import LocafotoErrors
import LocafotoFormats
import LocafotoTestSupport
import Testing

@testable import LocafotoAgent
@testable import LocafotoNode
@testable import LocafotoPeers

@Suite("Naming peers")
struct PeerResolverTests {
    static func peer(_ name: String) -> (OnlinePeer, PeerRecord) {
        let key = SigningKey.generate().publicKey
        let fp = Fingerprint(publicKey: key)
        let online = OnlinePeer(
            fingerprint: fp, name: name,
            endpoints: [
                PeerEndpoint(address: "127.0.0.1", port: 1, family: "ipv4", instanceName: name, interfaceIndex: 1)
            ], lastSeen: Date())
        let known = PeerRecord(
            fingerprint: fp.description, publicKey: Data(key.bytes), name: name, trust: .known, firstSeen: Date(),
            lastSeen: Date(),
            lastAddress: nil)
        return (online, known)
    }

    @Test func byNameCaseInsensitive() throws {
        let (bob, _) = Self.peer("Bob")
        #expect(try PeerResolver.resolve("bob", online: [bob], known: []).fingerprint == bob.fingerprint)
    }

    @Test func byFingerprintPrefixAnySpelling() throws {
        let (bob, _) = Self.peer("bob")
        let (carol, _) = Self.peer("carol")
        let canonical = bob.fingerprint.description
        for q in [
            String(canonical.prefix(5)), String(canonical.prefix(9)).lowercased(), canonical,
            canonical.replacingOccurrences(of: "-", with: " "),
        ] {
            #expect(
                try PeerResolver.resolve(q, online: [bob, carol], known: []).fingerprint == bob.fingerprint,
                "query \(q)")
        }
    }

    /// protocol/vectors/fingerprint.json `prefixes` (made by scripts/gen-vectors.py from
    /// formats.md "Fingerprint"): whether a prefix names the peer, the 4-character minimum and
    /// the ASCII-only case folding included.
    @Test("fingerprint prefixes of protocol/vectors/fingerprint.json")
    func fingerprintPrefixVectors() throws {
        let prefixes = try Vector.load("fingerprint.json").prefixes.elements
        #expect(prefixes.count >= 20)
        for p in prefixes {
            let fp = try Fingerprint(parsing: p.fingerprint.string)
            let (prefix, matches) = (try p.prefix.string, try p.matches.bool)
            let peer = OnlinePeer(
                fingerprint: fp, name: "peer",
                endpoints: [
                    PeerEndpoint(address: "127.0.0.1", port: 1, family: "ipv4", instanceName: "peer", interfaceIndex: 1)
                ],
                lastSeen: Date())
            let named = (try? PeerResolver.resolve(prefix, online: [peer], known: []))?.fingerprint == fp
            #expect(named == matches, "prefix '\(prefix)'")
        }
    }

    @Test func ambiguousNameListsCandidates() throws {
        let (a, _) = Self.peer("photo")
        let (b, _) = Self.peer("photo")
        do {
            _ = try PeerResolver.resolve("photo", online: [a, b], known: [])
            Issue.record("expected an ambiguity error")
        } catch let e as AgentError {
            #expect(e.code == .ambiguous)
            #expect(e.message.contains(a.fingerprint.description) && e.message.contains(b.fingerprint.description))
        }
    }

    @Test func knownNameWithNewKeyIsRefusedLoudly() throws {
        let (_, oldBob) = Self.peer("bob")
        let (impostor, _) = Self.peer("bob")
        do {
            _ = try PeerResolver.resolve("bob", online: [impostor], known: [oldBob])
            Issue.record("expected a refusal")
        } catch let e as AgentError {
            #expect(e.code == .identityMismatch)
            #expect(e.message.contains("REFUSED"))
            #expect(e.message.contains(oldBob.fingerprint))
        }
    }

    @Test func unknownName() throws {
        #expect(throws: AgentError.self) { try PeerResolver.resolve("nobody", online: [], known: []) }
        #expect(throws: AgentError.self) { try PeerResolver.resolve("  ", online: [], known: []) }
    }

    @Test func directoryTracksAppearAndDisappearAndIgnoresBadTXT() throws {
        let own = Fingerprint(publicKey: SigningKey.generate().publicKey)
        let other = Fingerprint(publicKey: SigningKey.generate().publicKey)
        let dir = PeerDirectory(own: own, clock: SystemClock())
        func svc(_ txt: [String: String], iface: Int32 = 1) -> DiscoveryTestEvent {
            .resolved(
                .init(
                    instanceName: "x", interfaceIndex: iface, family: .ipv4, hostName: "h", address: "10.0.0.1",
                    port: 5, txt: txt, isLocal: false, isOwn: false))
        }
        dir.apply(svc(["v": "1", "fp": own.description, "name": "me"]))
        dir.apply(svc(["v": "2", "fp": other.description, "name": "future"]))
        dir.apply(svc(["v": "1", "fp": "NOT-A-FINGERPRINT", "name": "bad"]))
        #expect(dir.online.isEmpty)
        dir.apply(svc(["v": "1", "fp": other.description, "name": "bob"]))
        dir.apply(svc(["v": "1", "fp": other.description, "name": "bob"], iface: 2))
        #expect(dir.online(other)?.endpoints.count == 2)
        dir.apply(.removed(instanceName: "x", interfaceIndex: 1, family: .ipv4))
        #expect(dir.online(other)?.endpoints.count == 1)
        dir.apply(.removed(instanceName: "x", interfaceIndex: 2, family: .ipv4))
        #expect(dir.online(other) == nil)
    }
}

typealias DiscoveryTestEvent = DiscoveryEvent
