import LocafotoCrypto
import LocafotoFormats

// The offer signature (formats.md) applied to wire offers: what a depositor signs, what a relay
// and a recipient check.

extension OfferItem {
    /// The item as the offer signature covers it; nil when `hash` is not 64 hex digits (the
    /// assembler refuses such items, so an assembled offer always converts).
    public var signedItem: OfferSignature.Item? {
        guard let hash, hash.utf8.count == 64, let raw = Hex.decode(hash) else { return nil }
        return (id: id, name: name, kind: kind, size: size, hash: raw)
    }
}

extension Offer {
    /// The offer signature of a whole offer (all parts) from `sender` to `recipient`.
    public static func signature(id: String, items: [OfferItem], sender: SigningKey, recipient: SigningPublicKey) throws
        -> [UInt8]
    {
        let signed = try items.map {
            guard let s = $0.signedItem else {
                throw WireError(.protocolViolation, "item \($0.id) has no valid hash to sign")
            }
            return s
        }
        return OfferSignature.sign(
            offerID: id, sender: sender, recipient: recipient, totalItems: items.count,
            totalBytes: items.reduce(Int64(0)) { $0 + $1.size }, items: signed)
    }
}

extension PreviewInfo {
    /// Index, size and raw hash as the preview signature covers them.
    static func signed(_ items: [OfferItem]) -> [PreviewSignature.Preview]? {
        var out: [PreviewSignature.Preview] = []
        for (i, item) in items.enumerated() {
            guard let p = item.preview else { continue }
            guard let raw = Hex.decode(p.hash), raw.count == 32 else { return nil }
            out.append((index: i, size: p.size, hash: raw))
        }
        return out
    }
}

extension Offer {
    /// The preview signature of a relayed offer's items (those with `preview`), or nil when none has one.
    public static func previewSignature(id: String, items: [OfferItem], sender: SigningKey, recipient: SigningPublicKey)
        throws -> [UInt8]?
    {
        guard let previews = PreviewInfo.signed(items) else {
            throw WireError(.protocolViolation, "a preview hash is not 64 hex digits")
        }
        guard !previews.isEmpty else { return nil }
        return PreviewSignature.sign(offerID: id, sender: sender, recipient: recipient, previews: previews)
    }
}

extension AssembledOffer {
    /// True when the offer carries `to` and a `signature` that `signer` made over this offer for
    /// `to`. `signer` is `from.ed25519` for a delivered offer, the handshake peer for a deposit.
    /// The caller still checks that `to` is the intended recipient (its own key, for a delivery).
    public func hasValidSignature(by signer: SigningPublicKey) -> Bool {
        guard let to, let signature, let recipient = try? SigningPublicKey(bytes: to) else { return false }
        let signed = items.compactMap(\.signedItem)
        guard signed.count == items.count else { return false }
        return OfferSignature.verify(
            signature, offerID: id, sender: signer, recipient: recipient, totalItems: items.count,
            totalBytes: totalBytes, items: signed)
    }

    /// True when every preview the items announce is vouched for: by the session (a direct
    /// offer), or for a relayed one by a `previewSignature` that `signer` made for `to`.
    public func previewsAreVouched(by signer: SigningPublicKey?) -> Bool {
        guard to != nil else { return true }
        guard let previews = PreviewInfo.signed(items) else { return false }
        if previews.isEmpty { return true }  // nothing to vouch for
        guard let signer, let to, let previewSignature, let recipient = try? SigningPublicKey(bytes: to) else {
            return false
        }
        return PreviewSignature.verify(
            previewSignature, offerID: id, sender: signer, recipient: recipient, previews: previews)
    }

    /// The original sender's key of a delivered offer (nil for direct and deposit offers).
    public var fromKey: SigningPublicKey? {
        from.flatMap { try? SigningPublicKey(bytes: $0.ed25519.bytes) }
    }
}
