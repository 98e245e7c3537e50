// Noise_XX_25519_ChaChaPoly_BLAKE2b handshake messages (protocol/handshake.md) read by
// HandshakeState, as responder (messages 1 and 3) and as initiator (message 2). Keys are fixed
// so every input replays the same way. The first byte picks the mode:
//   0: the responder reads message 1 from the fuzzer;
//   1: the initiator sent message 1 and reads message 2 from the fuzzer;
//   2: after real messages 1 and 2, the responder reads message 3 from the fuzzer;
//   3: a real handshake whose three payloads come from the fuzzer, with one fuzzer-chosen byte
//      of one message flipped (or none).
// Properties: errors are NoiseError; a failed handshake stays failed; message 1 carries its
// payload in clear; a tampered message is never accepted; a clean handshake delivers every
// payload and gives both sides matching hashes and transport keys.
import FuzzSupport
import LocafotoCrypto
import LocafotoNoise

func key(_ byte: UInt8) -> X25519SecretKey {
    try! X25519SecretKey(secret: SecretBytes(copying: [UInt8](repeating: byte, count: 32)))
}
let initiatorStatic = key(1)
let initiatorEphemeral = key(2)
let responderStatic = key(3)
let responderEphemeral = key(4)
let prologue = Array("LOCAFOTO/1".utf8)

func initiator() -> HandshakeState {
    try! HandshakeState(
        protocol: .locafoto, initiator: true, prologue: prologue, staticKey: initiatorStatic,
        ephemeralKey: initiatorEphemeral)
}
func responder() -> HandshakeState {
    try! HandshakeState(
        protocol: .locafoto, initiator: false, prologue: prologue, staticKey: responderStatic,
        ephemeralKey: responderEphemeral)
}

/// Reads `message`; on failure checks the error and that the handshake is now unusable.
func read(_ hs: HandshakeState, _ message: [UInt8], _ what: String) -> [UInt8]? {
    do {
        return try hs.readMessage(message)
    } catch {
        checkError(error, isOneOf: [NoiseError.self], what)
        let code = (error as! NoiseError).code
        if code != .invalidMessage && code != .outOfOrder {  // those are refused before any state change
            do {
                _ = try hs.writeMessage(payload: [])
                check(false, "\(what): a failed handshake accepted another message")
            } catch let e as NoiseError {
                check(
                    e.code == .handshakeFailed,
                    "\(what): after a failure the handshake reports \(e.code), not handshakeFailed")
            } catch {
                check(false, "\(what): \(error)")
            }
        }
        return nil
    }
}

func fuzz(_ input: [UInt8]) {
    var r = FuzzReader(input)
    switch r.byte() % 4 {
    case 0:
        let message = r.rest()
        let payload = read(responder(), message, "responder reading message 1")
        if message.count >= 32 && message.count <= HandshakeState.maxMessageLength {
            check(payload == Array(message[32...]), "message 1 payload is the bytes after the ephemeral key")
        } else {
            check(payload == nil, "a message 1 of \(message.count) bytes was accepted")
        }
    case 1:
        let i = initiator()
        _ = try! i.writeMessage(payload: [])
        if read(i, r.rest(), "initiator reading message 2") != nil {
            check(false, "initiator accepted a forged message 2")
        }
    case 2:
        let i = initiator()
        let s = responder()
        _ = try! s.readMessage(try! i.writeMessage(payload: []))
        _ = try! i.readMessage(try! s.writeMessage(payload: Array("{}".utf8)))
        if read(s, r.rest(), "responder reading message 3") != nil {
            check(false, "responder accepted a forged message 3")
        }
    default:
        let tamperMessage = Int(r.byte() % 4)  // 3: no tampering
        let tamperAt = r.u16()
        let tamperXor = r.byte() | 1
        let payloads = r.rest().split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
        let i = initiator()
        let s = responder()
        let parties = [i, s]
        var tampered = false
        for step in 0..<3 {
            let payload = step < payloads.count ? payloads[step] : []
            let writer = parties[step % 2]
            let reader = parties[(step + 1) % 2]
            var message: [UInt8]
            do {
                message = try writer.writeMessage(payload: payload)
            } catch {
                checkError(error, isOneOf: [NoiseError.self], "writeMessage")
                check(tampered || payload.count > 65535 - 96, "a payload of \(payload.count) bytes was refused")
                return
            }
            var at = -1
            if step == tamperMessage {
                at = tamperAt % message.count
                message[at] ^= tamperXor
                tampered = true
            }
            guard let got = read(reader, message, "reading message \(step + 1)") else {
                check(tampered, "a clean message \(step + 1) was refused")
                return
            }
            if tampered {
                // Message 1 has no key yet, so it reads; the altered transcript fails message 2.
                check(step == 0, "message \(step + 1) was accepted after tampering")
                check(at < 32 ? got == payload : got != payload, "tampered message 1 payload")
                continue
            }
            check(got == payload, "payload of message \(step + 1) changed in transit")
        }
        check(!tampered, "the handshake completed despite tampering")
        check(i.isComplete && s.isComplete, "handshake not complete after 3 messages")
        check(i.handshakeHash == s.handshakeHash, "handshake hashes differ")
        check(
            i.remoteStaticKey == responderStatic.publicKey && s.remoteStaticKey == initiatorStatic.publicKey,
            "static keys learnt")
        var (iSend, _) = try! i.split()
        var (_, sReceive) = try! s.split()
        let text = payloads.first ?? []
        do {
            let sealed = try iSend.encrypt(plaintext: text)
            let opened = try sReceive.decrypt(ciphertext: sealed)
            check(opened == text, "transport keys do not match")
        } catch {
            check(false, "transport: \(error)")
        }
    }
}

@_cdecl("fuzz_noise_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
