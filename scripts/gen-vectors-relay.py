#!/usr/bin/env python3
"""Generates protocol/vectors/relay-signatures.json: the offer signature and the decision receipt
(protocol/formats.md) and the wire messages added for resume and relay (protocol/messages.md),
written from the documents with PyNaCl and Python's json module, never with the Swift code.

    pip install pynacl
    python3 scripts/gen-vectors-relay.py            # rewrites the file
    python3 scripts/gen-vectors-relay.py --check    # regenerates in memory, fails if the file differs

Deterministic: Ed25519 signatures are (RFC 8032), and the seeds are fixed.
"""

import argparse
import base64
import hashlib
import json
import os
import struct
import sys

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "protocol", "vectors", "relay-signatures.json")

OFFER_DOMAIN = b"LOCAFOTO-OFFER-SIG-V1\x00"
DECISION_DOMAIN = b"LOCAFOTO-DECISION-SIG-V1\x00"
PREVIEW_DOMAIN = b"LOCAFOTO-PREVIEW-SIG-V1\x00"
MAX_MESSAGE = 65535 - 16
KIND = {"OFFER": 0x01, "DECISION": 0x02, "ITEM_RESULT": 0x06, "COLLECT": 0x0B, "QUEUE": 0x0C, "RECEIPTS": 0x0D}
OFFER_ID = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6"


def h(b):
    return b.hex()


def b64(b):
    return base64.b64encode(b).decode("ascii")


def key(label):
    """A fixed Ed25519 key from a label (readable and reproducible)."""
    return SigningKey(hashlib.sha256(b"locafoto relay vector: " + label.encode()).digest())


ALICE, BOB, CAROL = key("alice"), key("bob"), key("carol")  # sender, recipient, a third party / relay


def pk(k):
    return bytes(k.verify_key)


def field(b):
    return struct.pack(">I", len(b)) + b


def u64(n):
    return field(struct.pack(">Q", n))


def offer_signing_input(offer_id, sender_pk, recipient_pk, items):
    """formats.md "Offer signature": domain, then u32-length-prefixed fields."""
    out = OFFER_DOMAIN + field(offer_id.encode()) + field(sender_pk) + field(recipient_pk)
    out += u64(len(items)) + u64(sum(i["size"] for i in items))
    for i in items:
        out += field(i["id"].encode()) + field(i["name"].encode()) + field(i["kind"].encode())
        out += u64(i["size"]) + field(bytes.fromhex(i["hash"]))
    return out


def decision_signing_input(offer_id, sender_pk, recipient_pk, decision):
    """formats.md "Decision receipt"."""
    return DECISION_DOMAIN + field(offer_id.encode()) + field(sender_pk) + field(recipient_pk) + field(decision.encode())


def verifies(public, message, signature):
    try:
        VerifyKey(public).verify(message, signature)
        return True
    except BadSignatureError:
        return False


def blake(data):
    return hashlib.blake2b(data, digest_size=32).hexdigest()


ITEMS_ONE = [{"id": "11111111-2222-4333-8444-555555555555", "name": "IMG_0001.jpg", "kind": "jpeg", "size": 3145728,
              "hash": blake(b"photo 1")}]
ITEMS_TWO = ITEMS_ONE + [{"id": "a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3", "name": "Plage d'\u00e9t\u00e9 \U0001F30A.heic",
                          "kind": "heic", "size": 0, "hash": blake(b"")}]
# Three maximum-size items: totalBytes needs more than 32 bits.
ITEMS_BIG = [{"id": "0000000%d-0000-4000-8000-000000000000" % n, "name": "film-%d.lfs" % n, "kind": "lfs",
              "size": 1 << 32, "hash": blake(b"big %d" % n)} for n in range(3)]


def offer_signatures():
    out = []

    def case(name, *, offer_id=OFFER_ID, signer=ALICE, sender=ALICE, recipient=BOB, items, signed_recipient=None):
        """`signer` signs claiming `sender`'s key, for `signed_recipient` (default: `recipient`);
        the vector asks to verify with `sender` for `recipient`."""
        signed = offer_signing_input(offer_id, pk(sender), pk(signed_recipient or recipient), items)
        signature = signer.sign(signed).signature
        checked = offer_signing_input(offer_id, pk(sender), pk(recipient), items)
        out.append({"name": name, "offer": offer_id, "senderPublicKey": h(pk(sender)), "signerSeed": h(bytes(signer)),
                    "recipientPublicKey": h(pk(recipient)), "totalItems": len(items),
                    "totalBytes": sum(i["size"] for i in items), "items": items, "signingInput": h(checked),
                    "signature": h(signature), "valid": verifies(pk(sender), checked, signature)})

    case("one item, alice to bob", items=ITEMS_ONE)
    case("two items, non-ASCII name, empty item", items=ITEMS_TWO)
    case("three 4 GiB lfs items (totalBytes over 32 bits), bob to alice", signer=BOB, sender=BOB, recipient=ALICE,
         items=ITEMS_BIG)
    case("invalid: signed by carol, claims alice", signer=CAROL, items=ITEMS_ONE)
    case("invalid: signed for carol, delivered to bob", signed_recipient=CAROL, items=ITEMS_ONE)
    assert [c["valid"] for c in out] == [True, True, True, False, False]
    return out


def preview_signing_input(offer_id, sender_pk, recipient_pk, previews):
    """formats.md "Preview signature": domain, offer id, keys, then per preview index, size, hash."""
    out = PREVIEW_DOMAIN + field(offer_id.encode()) + field(sender_pk) + field(recipient_pk)
    for p in previews:
        out += u64(p["item"]) + u64(p["size"]) + field(bytes.fromhex(p["hash"]))
    return out


def preview_signatures():
    out = []

    def case(name, previews, *, signer=ALICE, sender=ALICE, recipient=BOB, signed_previews=None):
        signed = preview_signing_input(OFFER_ID, pk(sender), pk(recipient), signed_previews or previews)
        signature = signer.sign(signed).signature
        checked = preview_signing_input(OFFER_ID, pk(sender), pk(recipient), previews)
        out.append({"name": name, "offer": OFFER_ID, "senderPublicKey": h(pk(sender)), "signerSeed": h(bytes(signer)),
                    "recipientPublicKey": h(pk(recipient)), "previews": previews, "signingInput": h(checked),
                    "signature": h(signature), "valid": verifies(pk(sender), checked, signature)})

    one = [{"item": 0, "size": 1234, "hash": blake(b"preview 0")}]
    two = one + [{"item": 2, "size": 16384, "hash": blake(b"preview 2")}]
    case("one preview, alice to bob", one)
    case("previews of items 0 and 2", two)
    case("invalid: the relay swapped item 2's preview", [two[0], dict(two[1], hash=blake(b"another"))], signed_previews=two)
    case("invalid: signed by carol, claims alice", one, signer=CAROL)
    assert [c["valid"] for c in out] == [True, True, False, False]
    return out


def decision_receipts():
    out = []

    def case(name, decision, *, signer=BOB, recipient=BOB, sender=ALICE, offer_id=OFFER_ID):
        signed = decision_signing_input(offer_id, pk(sender), pk(recipient), decision)
        signature = signer.sign(signed).signature
        out.append({"name": name, "offer": offer_id, "senderPublicKey": h(pk(sender)), "signerSeed": h(bytes(signer)),
                    "recipientPublicKey": h(pk(recipient)), "decision": decision, "signingInput": h(signed),
                    "signature": h(signature), "valid": verifies(pk(recipient), signed, signature)})

    case("accepted", "accepted")
    case("rejected", "rejected")
    case("expired", "expired")
    case("invalid: made up by the relay (carol)", "accepted", signer=CAROL)
    assert [c["valid"] for c in out] == [True, True, True, False]
    return out


def canonical_json(body):
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def to_body(kind, fields):
    """The JSON body of a message from its 'fields' (byte fields hex there, base64 on the wire)."""
    body = json.loads(json.dumps(fields))
    if kind == "OFFER":
        for k in ("to", "signature"):
            if k in body:
                body[k] = b64(bytes.fromhex(body[k]))
        if "from" in body:
            body["from"]["ed25519"] = b64(bytes.fromhex(body["from"]["ed25519"]))
    elif kind == "DECISION" and "receipt" in body:
        body["receipt"] = b64(bytes.fromhex(body["receipt"]))
    elif kind == "RECEIPTS":
        for r in body["receipts"]:
            r["to"] = b64(bytes.fromhex(r["to"]))
            if "receipt" in r:
                r["receipt"] = b64(bytes.fromhex(r["receipt"]))
    return body


def messages(offers, receipts):
    vectors = []

    def msg(name, kind, fields, wire_body=None):
        body = to_body(kind, fields)
        if wire_body is None:
            # As another implementation may write it: keys reversed, spaces, \\u escapes.
            wire = json.dumps(dict(reversed(list(body.items()))), separators=(", ", ": "), ensure_ascii=True).encode()
        else:
            wire = wire_body.encode("utf-8")
        enc = bytes([KIND[kind]]) + wire
        canon = bytes([KIND[kind]]) + canonical_json(body)
        assert len(enc) <= MAX_MESSAGE and len(canon) <= MAX_MESSAGE
        vectors.append({"name": name, "type": kind, "hex": h(enc), "fields": fields, "canonical": h(canon)})

    one, two = offers[0], offers[1]
    base = {"offer": OFFER_ID, "more": False}
    msg("OFFER, deposit (to + signature, sender = handshake peer)", "OFFER",
        dict(base, items=ITEMS_ONE, totalItems=1, totalBytes=one["totalBytes"], to=one["recipientPublicKey"],
             signature=one["signature"]))
    msg("OFFER, delivery (to + from + signature)", "OFFER",
        dict(base, items=ITEMS_TWO, totalItems=2, totalBytes=two["totalBytes"], to=two["recipientPublicKey"],
             signature=two["signature"], **{"from": {"ed25519": two["senderPublicKey"], "name": "Alice \u2019s Mac"}}))
    msg("DECISION accepted with resume and completed", "DECISION",
        {"offer": OFFER_ID, "decision": "accepted", "resume": [{"item": 2, "offset": 1048576}],
         "completed": [{"item": 0, "status": "imported", "photo": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"},
                       {"item": 1, "status": "queued"}]})
    msg("DECISION accepted with a receipt", "DECISION",
        {"offer": OFFER_ID, "decision": "accepted", "receipt": receipts[0]["signature"]})
    msg("DECISION rejected with a receipt, null lists", "DECISION",
        {"offer": OFFER_ID, "decision": "rejected", "code": 8, "receipt": receipts[1]["signature"]},
        wire_body=json.dumps({"resume": None, "completed": None, "offer": OFFER_ID, "decision": "rejected", "code": 8,
                              "receipt": b64(bytes.fromhex(receipts[1]["signature"]))}))
    msg("ITEM_RESULT held", "ITEM_RESULT", {"offer": OFFER_ID, "item": 0, "status": "held"})
    msg("COLLECT offers", "COLLECT", {"want": "offers"})
    msg("COLLECT receipts, unknown field", "COLLECT", {"want": "receipts"}, wire_body='{"since": 5, "want": "receipts"}')
    msg("QUEUE empty", "QUEUE", {"offers": 0})
    msg("QUEUE 3", "QUEUE", {"offers": 3})
    msg("RECEIPTS, none, more", "RECEIPTS", {"receipts": [], "more": True})
    bob = receipts[0]["recipientPublicKey"]
    msg("RECEIPTS, delivered / expired with nulls", "RECEIPTS",
        {"receipts": [
            {"offer": OFFER_ID, "to": bob, "state": "delivered", "decision": "accepted", "receipt": receipts[0]["signature"],
             "items": [{"item": 0, "status": "imported"}, {"item": 1, "status": "failed", "code": 9, "message": "tag"}],
             "at": "2026-11-21T10:00:00Z"},
            {"offer": "5f6e7d8c-9bab-4cde-8f01-23456789abcd", "to": bob, "state": "expired", "items": [],
             "at": "2026-11-28T10:00:00Z"}],
         "more": False},
        wire_body=json.dumps({"more": False, "receipts": [
            {"at": "2026-11-21T10:00:00Z", "offer": OFFER_ID, "to": b64(bytes.fromhex(bob)), "state": "delivered",
             "decision": "accepted", "receipt": b64(bytes.fromhex(receipts[0]["signature"])),
             "items": [{"item": 0, "status": "imported", "code": None}, {"item": 1, "status": "failed", "code": 9,
                                                                         "message": "tag"}]},
            {"offer": "5f6e7d8c-9bab-4cde-8f01-23456789abcd", "to": b64(bytes.fromhex(bob)), "state": "expired",
             "decision": None, "receipt": None, "items": [], "at": "2026-11-28T10:00:00Z"}]}))
    return vectors


def invalid_messages(receipts):
    out = []

    def bad(name, kind, text):
        out.append({"name": name, "hex": h(bytes([KIND[kind]]) + text.encode()), "error": "protocol_violation"})

    to = b64(bytes.fromhex(receipts[0]["recipientPublicKey"]))
    expired = {"offer": OFFER_ID, "to": to, "state": "expired", "items": [], "at": "2026-11-21T10:00:00Z"}
    bad("COLLECT, unknown want", "COLLECT", '{"want":"photos"}')
    bad("COLLECT, want missing", "COLLECT", "{}")
    bad("QUEUE, negative", "QUEUE", '{"offers":-1}')
    bad("QUEUE, offers is a string", "QUEUE", '{"offers":"1"}')
    bad("RECEIPTS, 101 receipts", "RECEIPTS", json.dumps({"receipts": [expired] * 101, "more": True}))
    bad("RECEIPTS, more missing", "RECEIPTS", json.dumps({"receipts": []}))
    bad("RECEIPTS, to of 31 bytes", "RECEIPTS", json.dumps({"receipts": [dict(expired, to=b64(bytes(31)))], "more": False}))
    bad("RECEIPTS, receipt of 63 bytes", "RECEIPTS",
        json.dumps({"receipts": [dict(expired, receipt=b64(bytes(63)))], "more": False}))
    bad("RECEIPTS, unknown state", "RECEIPTS", json.dumps({"receipts": [dict(expired, state="lost")], "more": False}))
    bad("RECEIPTS, unknown item status", "RECEIPTS",
        json.dumps({"receipts": [dict(expired, items=[{"item": 0, "status": "gone"}])], "more": False}))
    bad("DECISION, resume offset is a string", "DECISION",
        json.dumps({"offer": OFFER_ID, "decision": "accepted", "resume": [{"item": 0, "offset": "5"}]}))
    bad("DECISION, completed status unknown", "DECISION",
        json.dumps({"offer": OFFER_ID, "decision": "accepted", "completed": [{"item": 0, "status": "done"}]}))
    bad("ITEM_RESULT, status HELD", "ITEM_RESULT", json.dumps({"offer": OFFER_ID, "item": 0, "status": "HELD"}))
    return out


def invalid_offers(offers):
    """Relayed offers that decode but that a receiver's offer assembly refuses (all protocol_violation)."""
    one = offers[0]
    good = {"offer": OFFER_ID, "items": ITEMS_ONE, "more": False, "totalItems": 1, "totalBytes": one["totalBytes"],
            "to": one["recipientPublicKey"], "signature": one["signature"],
            "from": {"ed25519": one["senderPublicKey"], "name": "alice"}}
    out = []

    def bad(name, *parts):
        out.append({"name": name, "parts": [h(bytes([KIND["OFFER"]]) + canonical_json(to_body("OFFER", p))) for p in parts],
                    "error": "protocol_violation"})

    def without(d, *keys):
        return {k: v for k, v in d.items() if k not in keys}

    bad("to of 31 bytes", dict(good, to=one["recipientPublicKey"][:62]))
    bad("signature of 63 bytes", dict(good, signature=one["signature"][:126]))
    bad("from.ed25519 of 33 bytes", dict(good, **{"from": {"ed25519": one["senderPublicKey"] + "00", "name": "alice"}}))
    bad("signature without to", without(good, "to", "from"))
    bad("to without signature", without(good, "signature", "from"))
    bad("from without to and signature", without(good, "to", "signature"))
    two = [dict(i, id=i["id"][:-1] + str(n)) for n, i in enumerate(ITEMS_ONE * 2)]
    first = dict(good, items=two[:1], more=True, totalItems=2, totalBytes=2 * one["totalBytes"])
    second = dict(first, items=two[1:], more=False)
    bad("split offer, second part without the relay fields", first, without(second, "to", "from", "signature"))
    bad("split offer, second part with another signature", first, dict(second, signature="00" * 64))
    bad("split offer, second part with another from name", first, dict(second, **{"from": {"ed25519": one["senderPublicKey"],
                                                                                        "name": "mallory"}}))
    return out


def generate():
    offers = offer_signatures()
    receipts = decision_receipts()
    return {
        "description": "Relay and resume (protocol/formats.md 'Offer signature', 'Decision receipt'; protocol/"
                       "messages.md). 'offerSignatures', 'decisionReceipts' and 'previewSignatures': the signing input (hex) built from "
                       "the inputs, and an Ed25519 signature by signerSeed; 'valid' says whether it verifies with the "
                       "sender (offer) or recipient (receipt) key named. 'messages': as wire-messages.json ('hex' as a "
                       "peer may send it, 'fields' decoded with byte fields as hex, 'canonical' sorted keys, no "
                       "spaces, raw UTF-8). 'invalid': messages refused when decoded; 'invalidOffers': OFFER parts "
                       "that decode but are refused by offer assembly. Generated by scripts/gen-vectors-relay.py.",
        "offerSignatureDomain": h(OFFER_DOMAIN),
        "decisionReceiptDomain": h(DECISION_DOMAIN),
        "offerSignatures": offers,
        "decisionReceipts": receipts,
        "previewSignatureDomain": h(PREVIEW_DOMAIN),
        "previewSignatures": preview_signatures(),
        "messages": messages(offers, receipts),
        "invalid": invalid_messages(receipts),
        "invalidOffers": invalid_offers(offers),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="fail if the file on disk differs from a fresh generation")
    args = p.parse_args()
    text = json.dumps(generate(), indent=2, ensure_ascii=True) + "\n"
    if args.check:
        try:
            with open(OUTPUT, encoding="utf-8") as f:
                same = f.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            sys.exit("stale vector file (run scripts/gen-vectors-relay.py): relay-signatures.json")
        print("relay-signatures.json is up to date")
        return
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")


if __name__ == "__main__":
    main()
