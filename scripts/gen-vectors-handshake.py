#!/usr/bin/env python3
"""Generates protocol/vectors/handshake.json: complete Locafoto handshakes (protocol/handshake.md)
with fixed keys, byte for byte, made with the independent Python `noiseprotocol` library, PyNaCl
and hashlib from the documents, never with the Swift code.

    pip install noiseprotocol pynacl cryptography
    python3 scripts/gen-vectors-handshake.py            # rewrites the file
    python3 scripts/gen-vectors-handshake.py --check    # regenerates in memory, fails if the file differs

Deterministic: every key (Ed25519 seeds, ephemerals) is fixed, and Noise with fixed keys is.
The agent speaks exactly one Noise suite, Noise_XX_25519_ChaChaPoly_BLAKE2b, so that is the only
suite here.
"""

import argparse
import base64
import hashlib
import json
import os
import struct
import sys
import unicodedata
import warnings

from nacl import bindings as sodium
from noise.connection import Keypair, NoiseConnection

# noiseprotocol warns whenever an ephemeral key is set; fixed ephemerals are what vectors are.
warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "protocol", "vectors", "handshake.json")

PROTOCOL_NAME = b"Noise_XX_25519_ChaChaPoly_BLAKE2b"
HASHLEN = 64  # BLAKE2b (Noise rev 34 §12.8)
DHLEN = 32
TAGLEN = 16
PROLOGUE = b"LOCAFOTO/1"
PAIRING_DOMAIN = b"LOCAFOTO-PAIRING-V1"
MAX_HELLO = 4096
MAX_NAME = 63
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
TYPES = {"OFFER": 0x01, "DECISION": 0x02, "PING": 0x08, "PONG": 0x09}
OFFER_ID = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6"


def h(b):
    return bytes(b).hex()


def b64(b):
    return base64.b64encode(b).decode("ascii")


def label_bytes(label):
    return hashlib.sha256(b"locafoto handshake vector: " + label.encode()).digest()


def frame(message):
    """framing.md: u16 big-endian length, then the Noise message."""
    assert 1 <= len(message) <= 65535
    return struct.pack(">H", len(message)) + message


# --- fingerprints (formats.md "Fingerprint"), as in scripts/interop/python_peer.py ------------

def luhn32(group):
    factor, total = 2, 0
    for ch in reversed(group):
        addend = factor * B32.index(ch)
        addend = addend // 32 + addend % 32
        total += addend
        factor = 1 if factor == 2 else 2
    return B32[(32 - total % 32) % 32]


def fingerprint(ed25519_public):
    d = hashlib.sha256(ed25519_public).digest()[:15]
    b = base64.b32encode(d).decode("ascii")
    assert len(b) == 24 and "=" not in b
    return "-".join(g + luhn32(g) for g in (b[i:i + 6] for i in range(0, 24, 6)))


# --- pairing code (handshake.md "Pairing code") ----------------------------------------------

def pairing_code(handshake_hash):
    d = hashlib.blake2b(PAIRING_DOMAIN + handshake_hash, digest_size=32).digest()
    s = "%06d" % (int.from_bytes(d[:4], "big") % 1_000_000)
    return s[:3] + " " + s[3:]


# --- display names (handshake.md "HELLO payload"; messages.md "Peer text") -------------------

def unsafe(ch):
    c = unicodedata.category(ch)
    if c in ("Cc", "Zl", "Zp", "Cs"):
        return True
    if c == "Cf":
        return not (ch in "\u200c\u200d" or 0xE0020 <= ord(ch) <= 0xE007F)
    return False


WHITE_SPACE = " \t" + "".join(chr(c) for c in range(0x80, 0x3001) if unicodedata.category(chr(c)) == "Zs")


def cut_name(raw):
    """Drop unsafe scalars, keep whole characters (extended grapheme clusters, UAX #29 as the
    `regex` module's \\X segments them) up to 63 UTF-8 bytes; the first that does not fit ends it."""
    import regex
    kept = "".join(ch for ch in raw if not unsafe(ch))
    out = ""
    for g in regex.findall(r"\X", kept):
        if len((out + g).encode()) > MAX_NAME:
            break
        out += g
    return kept, out


def sanitize_name(raw):
    """The cut name with white space (Zs, tab) trimmed at both ends; `unnamed` if nothing is left."""
    return cut_name(raw)[1].strip(WHITE_SPACE) or "unnamed"


# --- identities ------------------------------------------------------------------------------

class Party:
    """A node: its Ed25519 identity, the X25519 static key derived from it (protocol/README.md "Identity in one paragraph"),
    and, for one handshake, an ephemeral key."""

    def __init__(self, label, ephemeral_label=None):
        self.label = label
        self.seed = label_bytes("ed25519 seed " + label)
        self.public, sk64 = sodium.crypto_sign_seed_keypair(self.seed)
        self.x25519_private = sodium.crypto_sign_ed25519_sk_to_curve25519(sk64)
        self.x25519_public = sodium.crypto_sign_ed25519_pk_to_curve25519(self.public)
        assert sodium.crypto_scalarmult_base(self.x25519_private) == self.x25519_public
        if ephemeral_label is not None:
            e = bytearray(label_bytes("ephemeral " + ephemeral_label))
            e[0] &= 248  # clamped as RFC 7748 does anyway, so no reader wonders
            e[31] &= 127
            e[31] |= 64
            self.ephemeral_private = bytes(e)
            self.ephemeral_public = sodium.crypto_scalarmult_base(self.ephemeral_private)

    def describe(self):
        out = {"ed25519Seed": h(self.seed), "ed25519Public": h(self.public),
               "x25519StaticPrivate": h(self.x25519_private), "x25519StaticPublic": h(self.x25519_public),
               "fingerprint": fingerprint(self.public)}
        if hasattr(self, "ephemeral_private"):
            out["ephemeralPrivate"] = h(self.ephemeral_private)
            out["ephemeralPublic"] = h(self.ephemeral_public)
        return out


def canonical_hello(ed25519_public, name, caps):
    """The bytes the agent sends: keys sorted, no spaces, raw UTF-8 (like every JSON wire message)."""
    body = {"v": 1, "ed25519": b64(ed25519_public), "name": name, "caps": caps}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def parse_hello(raw, remote_static):
    """handshake.md "HELLO payload" and "Identity binding", as a receiver applies them: returns
    (identity as seen, None) or (None, error name)."""
    if len(raw) > MAX_HELLO:
        return None, "protocol_violation"
    try:
        hello = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "protocol_violation"
    if not isinstance(hello, dict):
        return None, "protocol_violation"
    v = hello.get("v")
    # A JSON number whose value is an integer in the signed 64-bit range: 1, 1.0, 1e0 (json reads
    # a number with a fraction or an exponent as a float, an IEEE double), not 1.5 or 1e19.
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())) \
            or not -2 ** 63 <= v < 2 ** 63:
        return None, "protocol_violation"
    if not isinstance(hello.get("ed25519"), str):
        return None, "protocol_violation"
    try:
        key = base64.b64decode(hello["ed25519"], validate=True)
    except ValueError:
        return None, "protocol_violation"
    if not isinstance(hello.get("name"), str):
        return None, "protocol_violation"
    caps = hello.get("caps")
    if caps is None:
        caps = []
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
        return None, "protocol_violation"
    if v != 1:
        return None, "unsupported_version"
    if len(key) != 32:
        return None, "protocol_violation"
    try:
        x = sodium.crypto_sign_ed25519_pk_to_curve25519(key)
    except Exception:
        return None, "identity_mismatch"
    if x != remote_static:
        return None, "identity_mismatch"
    return {"ed25519Public": h(key), "fingerprint": fingerprint(key), "name": sanitize_name(hello["name"]),
            "caps": caps}, None


# --- the handshake ---------------------------------------------------------------------------

def connection(party, initiator):
    n = NoiseConnection.from_name(PROTOCOL_NAME)
    n.set_as_initiator() if initiator else n.set_as_responder()
    n.set_prologue(PROLOGUE)
    n.set_keypair_from_private_bytes(Keypair.STATIC, party.x25519_private)
    n.set_keypair_from_private_bytes(Keypair.EPHEMERAL, party.ephemeral_private)
    n.start_handshake()
    return n


def current_h(n):
    state = getattr(n.noise_protocol, "symmetric_state", None)
    return bytes(state.h) if state is not None else n.get_handshake_hash()


def initial_state():
    """InitializeSymmetric (Noise §5.2): a name of at most HASHLEN bytes is padded with zeros to
    HASHLEN, not hashed; then MixHash(prologue). Checked against the library."""
    assert len(PROTOCOL_NAME) == 33 and len(PROTOCOL_NAME) <= HASHLEN
    h0 = PROTOCOL_NAME + bytes(HASHLEN - len(PROTOCOL_NAME))
    h1 = hashlib.blake2b(h0 + PROLOGUE).digest()
    probe = NoiseConnection.from_name(PROTOCOL_NAME)
    probe.set_as_initiator()
    probe.set_prologue(PROLOGUE)
    probe.set_keypair_from_private_bytes(Keypair.STATIC, bytes(range(32)))
    probe.start_handshake()
    state = probe.noise_protocol.symmetric_state
    assert bytes(state.h) == h1 and bytes(state.ck) == h0, "noiseprotocol disagrees with Noise §5.2"
    return h0, h1


PATTERNS = ["-> e", "<- e, ee, s, es", "-> s, se"]


def handshake(initiator, responder, init_hello, resp_hello, *, stop_after=3):
    """Runs the XX handshake (or its first `stop_after` messages) between two noiseprotocol
    connections; returns the message records and the two connections."""
    i, r = connection(initiator, True), connection(responder, False)
    payloads = [b"", resp_hello, init_hello]
    records = []
    for step in range(stop_after):
        writer, reader = (i, r) if step % 2 == 0 else (r, i)
        message = bytes(writer.write_message(payloads[step]))
        assert bytes(reader.read_message(message)) == payloads[step]
        hw, hr = current_h(writer), current_h(reader)
        assert hw == hr
        records.append({"pattern": PATTERNS[step], "payload": h(payloads[step]), "message": h(message),
                        "length": len(message), "frame": h(frame(message)), "hAfter": h(hw)})
    # Message 1 by hand (Noise §5.3): MixHash(e.public_key), then EncryptAndHash of the empty
    # payload without a key is MixHash(empty).
    h1 = hashlib.blake2b(PROTOCOL_NAME + bytes(HASHLEN - len(PROTOCOL_NAME)) + PROLOGUE).digest()
    h2 = hashlib.blake2b(hashlib.blake2b(h1 + initiator.ephemeral_public).digest()).digest()
    assert records[0]["message"] == h(initiator.ephemeral_public) and records[0]["hAfter"] == h(h2)
    # Exact lengths (handshake.md): e; e + encrypted s + encrypted HELLO; encrypted s + HELLO.
    expected = [DHLEN, DHLEN + DHLEN + TAGLEN + len(resp_hello) + TAGLEN, DHLEN + TAGLEN + len(init_hello) + TAGLEN]
    assert [rec["length"] for rec in records] == expected[:stop_after]
    return records, i, r


def transport(i, r, offer_body, decision_body):
    """The first transport messages after Split(): the initiator sends with c1, the responder with
    c2, each with its own nonce from 0 (ChaChaPoly: 32 zero bits, then the counter little-endian)."""
    def json_message(kind, body):
        return bytes([TYPES[kind]]) + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    plan = [("initiator", 0, "PING", bytes([TYPES["PING"]])),
            ("responder", 0, "PONG", bytes([TYPES["PONG"]])),
            ("initiator", 1, "OFFER", json_message("OFFER", offer_body)),
            ("responder", 1, "DECISION", json_message("DECISION", decision_body))]
    out = []
    for sender, nonce, kind, plaintext in plan:
        a, b = (i, r) if sender == "initiator" else (r, i)
        ciphertext = bytes(a.encrypt(plaintext))
        assert len(ciphertext) == len(plaintext) + TAGLEN
        assert bytes(b.decrypt(ciphertext)) == plaintext
        out.append({"from": sender, "nonce": nonce, "type": kind, "plaintext": h(plaintext), "ciphertext": h(ciphertext),
                    "frame": h(frame(ciphertext))})
    return out


def side(party, hello, canonical):
    return dict(party.describe(), name=party.label, hello=h(hello), helloText=hello.decode("utf-8"),
                canonicalHello=canonical)


def complete_case(name, description, initiator, responder, init_hello, resp_hello, *, init_canonical, resp_canonical,
                  offer_body, decision_body):
    records, i, r = handshake(initiator, responder, init_hello, resp_hello)
    assert i.handshake_finished and r.handshake_finished
    hh = i.get_handshake_hash()
    assert hh == r.get_handshake_hash() and len(hh) == HASHLEN and bytes.fromhex(records[-1]["hAfter"]) == hh
    init_sees, err = parse_hello(resp_hello, responder.x25519_public)
    assert err is None
    resp_sees, err = parse_hello(init_hello, initiator.x25519_public)
    assert err is None
    return {"name": name, "description": description,
            "initiator": side(initiator, init_hello, init_canonical),
            "responder": side(responder, resp_hello, resp_canonical),
            "messages": records, "handshakeHash": h(hh), "pairingCode": pairing_code(hh),
            "initiatorLearns": init_sees, "responderLearns": resp_sees,
            "transport": transport(i, r, offer_body, decision_body)}


def offer_body():
    item = {"id": "11111111-2222-4333-8444-555555555555", "name": "IMG_0001.jpg", "kind": "jpeg", "size": 3145728,
            "hash": hashlib.blake2b(b"photo 1", digest_size=32).hexdigest()}
    return {"offer": OFFER_ID, "items": [item], "more": False, "totalItems": 1, "totalBytes": 3145728}


def hello_checks(alice, mallory):
    """HELLO payloads alone, as alice's peer reads them (rs = alice's X25519 key): the table of
    handshake.md "HELLO payload"."""
    key = b64(alice.public)
    assert "+" in key and key.endswith("=")
    out = []

    def check(name, payload, expect):
        if isinstance(payload, dict):
            payload = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        raw = payload.encode("utf-8") if isinstance(payload, str) else payload
        learned, err = parse_hello(raw, alice.x25519_public)
        entry = {"name": name, "hello": h(raw), "remoteStatic": h(alice.x25519_public)}
        if err is None:
            entry["learns"] = learned
            assert expect == "ok" or expect == learned["name"], (name, learned)
        else:
            entry["error"] = err
            assert expect == err, (name, err)
        out.append(entry)

    base = {"v": 1, "ed25519": key, "name": "alice"}
    check("minimal: caps absent", base, "alice")
    check("caps null", dict(base, caps=None), "alice")
    check("unknown field and caps", dict(base, caps=["resume", "x-future"], future={"a": [1]}), "alice")
    check("empty name", dict(base, name=""), "unnamed")
    check("a name of unsafe scalars and spaces only", dict(base, name="\u202e \u0007\u2028 \u00a0"), "unnamed")
    check("name with white space around and a line break inside", dict(base, name="  al\nice\t "), "alice")
    check("64 ASCII bytes: cut to 63", dict(base, name="a" * 64), "a" * 63)
    # Cuts that fall inside a character of several scalars (handshake.md "HELLO payload", step 2,
    # and its conservative rule): the whole character goes.
    for label, name in [
        ("Latin e + combining acute at the cut", "a" * 61 + "e\u0301x"),
        ("Latin precomposed e-acute fits", "a" * 61 + "\u00e9x"),
        ("an unsafe scalar inside a character is dropped first", "a" * 61 + "e\u202e\u0301"),
        ("emoji ZWJ family at the cut", "a" * 50 + "\U0001F468\u200d\U0001F469\u200d\U0001F467"),
        ("emoji tag sequence (Scotland) at the cut",
         "a" * 40 + "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"),
        ("emoji with a skin-tone modifier at the cut", "a" * 57 + "\U0001F44D\U0001F3FD"),
        ("heart with variation selector 16 at the cut", "a" * 59 + "\u2764\ufe0f"),
        ("two flags: regional indicators cut in pairs", "a" * 49 + "\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA"),
        ("a flag then an odd regional indicator", "a" * 55 + "\U0001F1EB\U0001F1F7\U0001F1E9"),
        ("Hangul syllables", "\ud55c" * 22),
        ("Hangul conjoining jamo L V T at the cut", "a" * 57 + "\u1112\u1161\u11ab"),
        ("Hangul LV syllable + T + T jamo at the cut", "a" * 55 + "\ud558\u11ab\u11a8"),
        ("Devanagari consonant + vowel sign at the cut", "a" * 59 + "\u0915\u093f"),
        ("Devanagari conjunct KA VIRAMA SSA (Unicode 15.1 GB9c)", "a" * 55 + "\u0915\u094d\u0937"),
        ("Thai consonant + SARA AM at the cut", "a" * 59 + "\u0e01\u0e33"),
        ("space + combining mark: trimmed after the cut, the mark stays", " \u0301" + "b" * 10),
    ]:
        check("name: " + label, dict(base, name=name), sanitize_name(name))
    check("4096 bytes (JSON padded with spaces)", json.dumps(base) + " " * (4096 - len(json.dumps(base))), "alice")
    check("over 4096 bytes (JSON padded with spaces)", json.dumps(base) + " " * (4097 - len(json.dumps(base))),
          "protocol_violation")
    check("not JSON", "hello", "protocol_violation")
    check("not UTF-8", b'{"v":1,"ed25519":"' + key.encode() + b'","name":"\xff"}', "protocol_violation")
    check("a JSON array", json.dumps([base]), "protocol_violation")
    check("v missing", {k: x for k, x in base.items() if k != "v"}, "protocol_violation")
    check("v a string", dict(base, v="1"), "protocol_violation")
    check("v true", dict(base, v=True), "protocol_violation")
    check("v 1.5", dict(base, v=1.5), "protocol_violation")
    check("v 1.0: a JSON number with an integer value", dict(base, v=1.0), "alice")
    check("v 1e0: an exponent, the integer 1", '{"v":1e0,"ed25519":"%s","name":"alice"}' % key, "alice")
    check("v 10e-1: the integer 1", '{"v":10e-1,"ed25519":"%s","name":"alice"}' % key, "alice")
    check("v 1e19: an integer beyond the signed 64-bit range", '{"v":1e19,"ed25519":"%s","name":"alice"}' % key,
          "protocol_violation")
    check("v 9223372036854775808 (2^63): beyond the signed 64-bit range",
          '{"v":9223372036854775808,"ed25519":"%s","name":"alice"}' % key, "protocol_violation")
    check("ed25519 missing", {k: x for k, x in base.items() if k != "ed25519"}, "protocol_violation")
    check("ed25519 without its padding", dict(base, ed25519=key.rstrip("=")), "protocol_violation")
    check("ed25519 in the URL-safe alphabet", dict(base, ed25519=key.replace("+", "-").replace("/", "_")),
          "protocol_violation")
    check("ed25519 with a space", dict(base, ed25519=key[:8] + " " + key[8:]), "protocol_violation")
    check("name missing", {k: x for k, x in base.items() if k != "name"}, "protocol_violation")
    check("name null", dict(base, name=None), "protocol_violation")
    check("name a number", dict(base, name=5), "protocol_violation")
    check("caps a string", dict(base, caps="resume"), "protocol_violation")
    check("caps with a number", dict(base, caps=["resume", 1]), "protocol_violation")
    check("v 2", dict(base, v=2), "unsupported_version")
    check("v 0", dict(base, v=0), "unsupported_version")
    check("v 2.0", dict(base, v=2.0), "unsupported_version")
    check("v -9223372036854775808 (-2^63)", dict(base, v=-2 ** 63), "unsupported_version")
    check("v 2 and a key of 31 bytes: the version is checked first", dict(base, v=2, ed25519=b64(alice.public[:31])),
          "unsupported_version")
    check("ed25519 of 31 bytes", dict(base, ed25519=b64(alice.public[:31])), "protocol_violation")
    check("ed25519 of 33 bytes", dict(base, ed25519=b64(alice.public + b"\0")), "protocol_violation")
    check("ed25519 of another key (mallory's)", dict(base, ed25519=b64(mallory.public)), "identity_mismatch")
    check("ed25519 the neutral point (small order: no X25519 form)", dict(base, ed25519=b64(b"\x01" + bytes(31))),
          "identity_mismatch")
    return out


def generate():
    h0, h1 = initial_state()
    cases, failures = [], []

    # 1. Both HELLOs as the agent writes them.
    alice, bob = Party("alice", "alice 1"), Party("bob", "bob 1")
    alice_hello = canonical_hello(alice.public, "alice", ["resume"])
    bob_hello = canonical_hello(bob.public, "Bob\u2019s Mac", ["preview", "resume"])
    cases.append(complete_case(
        "alice (initiator) and bob (responder), HELLOs as the agent writes them",
        "Both payloads are canonical: keys sorted, no spaces, raw UTF-8 (bob's name has U+2019).",
        alice, bob, alice_hello, bob_hello, init_canonical=True, resp_canonical=True,
        offer_body=offer_body(), decision_body={"offer": OFFER_ID, "decision": "accepted"}))

    # 2. The responder's HELLO as another implementation may write it, with a name to sanitize.
    alice2, dave = Party("alice", "alice 2"), Party("dave", "dave 2")
    raw_name = ("\u200b Dave\u202e\u2019s \U0001F4F7 Pixel\u0007 \u2014 "
                "Trois-Rivi\u00e8res, L\u00e9vis, Qu\u00e9bec, \u00e9t\u00e9, Montr\u00e9al")
    assert len(raw_name.encode()) > MAX_NAME
    shown = sanitize_name(raw_name)
    kept, cut = cut_name(raw_name)
    # The 63rd byte is inside a 2-byte character, which goes; the leading space is trimmed after the cut.
    assert len(cut.encode()) == MAX_NAME - 1 and len(kept[len(cut)].encode()) == 2 and cut[0] == " " \
        and shown == cut[1:], (cut, shown)
    dave_hello = json.dumps({"v": 1, "name": raw_name, "ed25519": b64(dave.public), "caps": ["resume", "teleport"],
                             "x-note": "unknown fields are ignored"}, separators=(", ", ": "), ensure_ascii=True).encode()
    alice2_hello = canonical_hello(alice2.public, "alice", [])
    case = complete_case(
        "alice (initiator) and dave (responder): dave's HELLO in another spelling, its name sanitized",
        "Dave's HELLO has its keys in another order, spaces, \\u escapes (a surrogate pair among them), an unknown "
        "field and an unknown cap, and a name of %d bytes with unsafe scalars (U+200B, U+202E, U+0007): the "
        "initiator drops those, keeps whole characters up to 63 bytes (the 63rd byte is inside an e-acute, which "
        "goes), trims the leading space (initiatorLearns.name). Alice's HELLO is canonical, with an empty caps "
        "list." % len(raw_name.encode()),
        alice2, dave, alice2_hello, dave_hello, init_canonical=True, resp_canonical=False,
        offer_body=offer_body(), decision_body={"offer": OFFER_ID, "decision": "rejected", "code": 3,
                                                "message": "not now"})
    assert case["initiatorLearns"]["name"] == shown and case["initiatorLearns"]["caps"] == ["resume", "teleport"]
    cases.append(case)

    # Identity mismatch: a HELLO naming mallory's Ed25519 key, sent under another Noise static key.
    mallory = Party("mallory")

    def mismatch(name, description, at, init_hello, resp_hello):
        records, i, r = handshake(alice, bob, init_hello, resp_hello, stop_after=at)
        # rs, as the reader's Noise state authenticated it: the liar's own static key.
        payload, rs = (resp_hello, bob.x25519_public) if at == 2 else (init_hello, alice.x25519_public)
        _, err = parse_hello(payload, rs)
        assert err == "identity_mismatch"
        sender, receiver = ("responder", "initiator") if at == 2 else ("initiator", "responder")
        return {"name": name, "description": description,
                "initiator": side(alice, init_hello, True), "responder": side(bob, resp_hello, True),
                "helloKey": dict(mallory.describe(), name=mallory.label),
                "messages": records, "failsAt": at, "detectedBy": receiver, "liar": sender,
                "error": "identity_mismatch", "thenSent": []}

    failures.append(mismatch(
        "message 3: alice's HELLO names mallory's key",
        "Messages 1 and 2 are those of the first case. Message 3 is valid Noise (it decrypts), but the Ed25519 key "
        "in its HELLO maps to mallory's X25519 key, not to rs (alice's static key). The responder MUST close the TCP "
        "connection at once and send nothing: no ERROR, no transport message ('thenSent' is empty).",
        3, canonical_hello(mallory.public, "alice", ["resume"]), bob_hello))
    failures.append(mismatch(
        "message 2: bob's HELLO names mallory's key",
        "Message 1 is that of the first case. Message 2 is valid Noise, but its HELLO's Ed25519 key is mallory's, "
        "not the one behind bob's static key. The initiator MUST close the TCP connection without sending message 3 "
        "(it has no transport keys; 'thenSent' is empty).",
        2, alice_hello, canonical_hello(mallory.public, "Bob\u2019s Mac", ["preview", "resume"])))

    return {
        "description": "Locafoto handshakes (protocol/handshake.md) byte for byte, generated by "
                       "scripts/gen-vectors-handshake.py with the Python noiseprotocol library, PyNaCl and hashlib "
                       "(independent of the Swift code). The agent speaks exactly one Noise suite, so this is the "
                       "only one. Keys: each party's Ed25519 seed and public key, the X25519 static key pair derived "
                       "from it (crypto_sign_ed25519_sk_to_curve25519 / _pk_to_curve25519), and its ephemeral key "
                       "pair (fixed here; a real handshake draws a fresh one). 'messages': each handshake message as "
                       "sent ('message', without the frame length; 'frame', with the u16 big-endian length), its "
                       "plaintext 'payload' (empty, then the responder's HELLO, then the initiator's) and h after it. "
                       "'hello' is each party's HELLO payload exactly as sent; 'canonicalHello' says whether it is "
                       "the agent's own spelling (keys sorted, no spaces, raw UTF-8), which receivers must not rely "
                       "on: they parse JSON. '...Learns': the peer identity each side derives from the other's "
                       "HELLO (fingerprint per formats.md, name sanitized). 'transport': the first transport "
                       "messages after Split() (initiator sends with c1, responder with c2, nonces from 0), each a "
                       "wire message (messages.md) 'plaintext' and its 'ciphertext' (with the 16-byte tag) and "
                       "'frame'. 'identityMismatch': handshakes that a receiver MUST abort. 'helloChecks': HELLO "
                       "payloads as a receiver decrypts them, checked against the remote static key named: "
                       "'learns' what an accepted one yields, or 'error' the reason a receiver aborts "
                       "(handshake.md 'HELLO payload'; the name is only reported locally, nothing is sent).",
        "suites": [PROTOCOL_NAME.decode()],
        "protocolName": PROTOCOL_NAME.decode(),
        "protocolNameHex": h(PROTOCOL_NAME),
        "protocolNameLength": len(PROTOCOL_NAME),
        "hashLen": HASHLEN,
        "initialH": h(h0),
        "initialHNote": "InitializeSymmetric (Noise rev 34 section 5.2): the 33-byte name is at most HASHLEN (64) "
                        "bytes, so h is the name padded with zero bytes to 64, not HASH(name); ck = h.",
        "prologue": PROLOGUE.decode(),
        "prologueHex": h(PROLOGUE),
        "hAfterPrologue": h(h1),
        "pairingDomain": PAIRING_DOMAIN.decode(),
        "cases": cases,
        "identityMismatch": failures,
        "helloChecks": hello_checks(alice, mallory),
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
            sys.exit("stale vector file (run scripts/gen-vectors-handshake.py): handshake.json")
        print("handshake.json is up to date")
        return
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")


if __name__ == "__main__":
    main()
