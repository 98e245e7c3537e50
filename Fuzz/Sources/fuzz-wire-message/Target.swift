// WireMessage.decode on one decrypted transport message (at most 65519 bytes, as the Noise
// transport delivers it). Properties: errors are WireError; a decoded message re-encodes and
// decodes to itself; an OFFER that the receiver's OfferAssembler accepts keeps its invariants.
import FuzzSupport
import LocafotoFormats
import LocafotoWire

func fuzz(_ input: [UInt8]) {
    guard input.count <= WireProtocol.maxMessageLength else { return }
    let message: WireMessage
    do {
        message = try WireMessage.decode(input)
    } catch {
        checkError(error, isOneOf: [WireError.self], "WireMessage.decode")
        return
    }
    check(message.kind.rawValue == input[0], "decoded kind \(message.kind) from type byte \(input[0])")
    do {
        let again = try WireMessage.decode(try message.encoded())
        check(again == message, "decode(encode(m)) != m for \(message.kind)")
    } catch let e as WireError where e.code == .tooLarge {
        // Re-encoding may be longer than the input (e.g. "1e2" read as 100): refused, not sent.
    } catch {
        check(false, "re-encoding a decoded \(message.kind) failed: \(error)")
    }
    if case .itemData(let d) = message {
        check(
            WireMessage.itemDataHeader(item: d.item, offset: d.offset) + d.data == input, "ITEM_DATA header round trip")
    }
    if case .offer(let offer) = message {
        var assembler = OfferAssembler(acceptsPreviews: true, acceptsLatePreviews: true)
        do {
            if let assembled = try assembler.add(offer) {
                check(assembled.items.count == offer.totalItems, "assembled item count")
                check(assembled.totalBytes == offer.totalBytes, "assembled total bytes")
                check(
                    assembled.items.allSatisfy { ItemKind.isValid($0.kind) && !$0.name.isEmpty },
                    "assembled items valid")
                check(assembled.from.map { $0.name.utf8.count <= Hello.maxNameBytes } ?? true, "sanitized sender name")
                let previews = assembled.items.compactMap(\.preview)
                check(
                    previews.count <= PreviewImage.maxPerOffer,
                    "more than \(PreviewImage.maxPerOffer) previews accepted")
                check(
                    previews.allSatisfy { (1...PreviewImage.maxBytes).contains($0.size) && $0.hash.utf8.count == 64 },
                    "preview fields")
                check(previews.isEmpty || assembled.signature == nil, "a relayed offer with previews was accepted")
                let late = assembled.items.filter { $0.latePreview == true }
                check(
                    previews.count + late.count <= PreviewImage.maxPerOffer,
                    "more than \(PreviewImage.maxPerOffer) previews, late ones counted")
                check(late.allSatisfy { $0.preview == nil }, "an item with both a preview and a late one")
                check(late.isEmpty || assembled.to == nil, "a relayed offer with late previews was accepted")
            } else {
                check(offer.more, "assembler waits for more parts only when more: true")
            }
        } catch {
            checkError(error, isOneOf: [WireError.self], "OfferAssembler.add")
        }
    }
}

@_cdecl("fuzz_wire_message_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
