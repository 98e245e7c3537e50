// The peer's HELLO (protocol/handshake.md), as the agent checks it after the Noise message
// that carries it: Handshake.verify(remoteHello:remoteStatic:). The remote static key is the
// X25519 form of the key in the HELLO vector ("alice"), so the fuzzer can reach acceptance.
// Properties: errors are WireError / CryptoError; an accepted HELLO's key is the one behind the
// Noise static key, its fingerprint is that key's, and its name is sanitized for display.
import Foundation
import FuzzSupport
import LocafotoCrypto
import LocafotoFormats
import LocafotoWire

@testable import LocafotoSession

let alice = try! SigningPublicKey(
    bytes: Hex.decode("ff8ca089c67a5551f3289ba1748bfe0d7bf3d2970bc5c2ceef5226e3807908ce")!)
let aliceStatic = try! alice.agreementKey()

func isDisplayable(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= Hello.maxNameBytes
        && !name.unicodeScalars.contains(where: isUnsafePeerText)
        && name == name.trimmingCharacters(in: .whitespaces)
}

func fuzz(_ input: [UInt8]) {
    guard input.count <= 65535 else { return }  // a Noise message holds at most 65535 bytes
    let peer: PeerIdentity
    do {
        peer = try Handshake.verify(remoteHello: input, remoteStatic: aliceStatic)
    } catch {
        checkError(error, isOneOf: [WireError.self, CryptoError.self], "Handshake.verify")
        return
    }
    check(input.count <= 4096, "a HELLO over 4096 bytes was accepted")
    // The binding is Ed25519 -> X25519 (protocol/handshake.md). The map forgets the sign bit
    // of x, so alice's key with its top bit flipped is accepted too (see Fuzz/RESULTS.md).
    check(
        (try? peer.publicKey.agreementKey()) == aliceStatic,
        "accepted a HELLO whose key is not behind the Noise static key")
    check(
        peer.publicKey.bytes.dropLast() == alice.bytes.dropLast()
            && peer.publicKey.bytes.last! & 0x7F == alice.bytes.last! & 0x7F,
        "accepted a key other than alice's (up to the sign bit)")
    check(peer.fingerprint == Fingerprint(publicKey: peer.publicKey), "fingerprint of the accepted key")
    check(isDisplayable(peer.name), "peer name not sanitized: \(peer.name.debugDescription)")
    check(
        DisplayName.sanitize(peer.name) == peer.name,
        "DisplayName.sanitize is not idempotent on \(peer.name.debugDescription)")
    // The same payload decoded as a HELLO re-encodes to an equal HELLO.
    if let hello = try? JSONDecoder().decode(Hello.self, from: Data(input)) {
        let again = try? JSONDecoder().decode(Hello.self, from: JSONEncoder().encode(hello))
        check(again == hello, "HELLO JSON round trip")
    }
}

@_cdecl("fuzz_hello_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
