// Messages spoken with a relay (protocol/messages.md "Relay"): COLLECT, QUEUE, RECEIPTS and
// relayed OFFERs (deposit: to + signature; delivery: to + from + signature), possibly split
// into parts. The input is a sequence of wire messages separated by 0xFF (never part of a
// UTF-8 JSON body). Properties: errors are WireError / RelayError; relay messages round-trip;
// RECEIPTS stays within its limits; an offer the receiver's assembler accepts is one the relay
// accepts as a deposit (DepositOffer.validate), and its signature check does not crash.
import FuzzSupport
import LocafotoCrypto
import LocafotoRelay
import LocafotoWire

/// The handshake peer of a deposit (protocol/vectors/relay-signatures.json, "alice").
let depositor = try! SigningPublicKey(
    bytes: Hex.decode("707b4f2e39dbbb7de85262b4a67f4bd8984fdf58efd0392dfe7cf363c77e4b4f")!)

func fuzz(_ input: [UInt8]) {
    var assembler = OfferAssembler()
    for part in input.split(separator: 0xFF, maxSplits: 64, omittingEmptySubsequences: true) {
        guard part.count <= WireProtocol.maxMessageLength else { return }
        let message: WireMessage
        do {
            message = try WireMessage.decode(part)
        } catch {
            checkError(error, isOneOf: [WireError.self], "WireMessage.decode")
            continue
        }
        switch message {
        case .collect, .queue, .receipts:
            do {
                let again = try WireMessage.decode(try message.encoded())
                check(again == message, "relay message round trip")
            } catch let e as WireError where e.code == .tooLarge {
            } catch {
                check(false, "re-encoding a decoded \(message.kind) failed: \(error)")
            }
            if case .receipts(let r) = message {
                check(r.receipts.count <= Receipts.maxReceipts, "RECEIPTS over its limit decoded")
                check(
                    r.receipts.allSatisfy { $0.to.bytes.count == 32 && ($0.receipt?.bytes.count ?? 64) == 64 },
                    "receipt field lengths")
            }
            if case .queue(let q) = message { check(q.offers >= 0, "negative QUEUE decoded") }
        case .offer(let offer):
            let assembled: AssembledOffer?
            do {
                assembled = try assembler.add(offer)
            } catch {
                checkError(error, isOneOf: [WireError.self], "OfferAssembler.add")
                return  // the session ends at the first refused part
            }
            guard let assembled else { continue }
            checkRelayed(assembled)
            return
        default:
            continue
        }
    }
}

func checkRelayed(_ offer: AssembledOffer) {
    check((offer.to == nil) == (offer.signature == nil), "to and signature come together")
    guard let to = offer.to, let signature = offer.signature else {
        check(offer.from == nil, "a direct offer has no 'from'")
        return
    }
    check(to.count == 32 && signature.count == 64, "relay field lengths")
    let signer = offer.fromKey ?? depositor
    _ = offer.hasValidSignature(by: signer)
    if let from = offer.from {
        check(from.ed25519.bytes.count == 32, "from key length")
        check(from.name.utf8.count <= Hello.maxNameBytes, "from name is sanitized to 63 bytes")
        check(
            !from.name.unicodeScalars.contains(where: isUnsafePeerText), "from name keeps no control/format characters")
    }
    // What the relay stores for a deposit: the assembler's accepting it means the relay must too.
    let deposit = DepositOffer(
        offerID: offer.id, senderKey: signer.bytes, senderName: "alice", recipientKey: to, items: offer.items,
        totalBytes: offer.totalBytes, offerSignature: signature)
    do {
        try deposit.validate()
    } catch {
        check(false, "an offer accepted by OfferAssembler is refused by DepositOffer.validate: \(error)")
    }
}

@_cdecl("fuzz_relay_message_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
