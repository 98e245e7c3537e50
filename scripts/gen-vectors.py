#!/usr/bin/env python3
"""Generates protocol/vectors/{fingerprint,bundle,wire-messages}.json with independent Python
libraries (PyNaCl, `cryptography`, hashlib), never with the Swift code, so that the Swift tests
check the implementation against the documents (protocol/formats.md, protocol/messages.md).

    pip install pynacl cryptography
    python3 scripts/gen-vectors.py            # rewrites the three files
    python3 scripts/gen-vectors.py --check    # regenerates in memory, fails if a file differs

Everything is deterministic: fixed seeds, photo keys, nonces and UUIDs. The sealed box
(`crypto_box_seal`) is randomized in libsodium; here it is built from its definition
(ephemeral_pk || crypto_box(m, BLAKE2b-192(ephemeral_pk || recipient_pk), ephemeral_sk,
recipient_pk)) with a fixed ephemeral key, and then opened with PyNaCl's own SealedBox to prove
it is a genuine sealed box. The Swift tests only OPEN these boxes, they never reproduce them.

After writing, every bundle vector is run through scripts/interop/verify_bundle.py (a separate
process): valid bundles must verify and decrypt to the vector's plaintext, invalid ones must be
refused.
"""

import argparse
import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import nacl.bindings as sodium
from nacl.public import PrivateKey, SealedBox
from nacl.signing import SigningKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "protocol", "vectors")
VERIFY_BUNDLE = os.path.join(ROOT, "scripts", "interop", "verify_bundle.py")


def h(b):
    return b.hex()


def b64(b):
    return base64.b64encode(b).decode("ascii")


def seed_from(label):
    """A fixed 32-byte seed derived from a label (so vectors are reproducible and readable)."""
    return hashlib.sha256(b"locafoto test vector: " + label.encode()).digest()


# ---------------------------------------------------------------------------------------------
# Fingerprints (formats.md "Fingerprint")

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def luhn_mod32(group):
    factor = 2
    total = 0
    for ch in reversed(group):
        addend = factor * ALPHABET.index(ch)
        factor = 1 if factor == 2 else 2
        total += addend // 32 + addend % 32
    return ALPHABET[(32 - total % 32) % 32]


def fp_digest(public_key):
    d = base64.b32encode(hashlib.sha256(public_key).digest()[:15]).decode("ascii")
    assert len(d) == 24 and "=" not in d
    return d


def fp_canonical(digest):
    groups = [digest[i:i + 6] for i in range(0, 24, 6)]
    return "-".join(g + luhn_mod32(g) for g in groups)


def fp_parse(text):
    """Reference parser: ASCII letters in any case, spaces and dashes ignored, every check verified."""
    chars = "".join(c.upper() if "a" <= c <= "z" else c for c in text if c not in "- ")
    if len(chars) != 28:
        raise ValueError("length")
    digest = ""
    for g in range(4):
        group, check = chars[g * 7:g * 7 + 6], chars[g * 7 + 6]
        if any(c not in ALPHABET for c in group + check):
            raise ValueError("alphabet")
        if luhn_mod32(group) != check:
            raise ValueError("check")
        digest += group
    return digest


MIN_PREFIX = 4  # formats.md "Fingerprint": a prefix names a peer with at least 4 characters left


def fp_prefix_matches(canonical, prefix):
    """Reference reading of a fingerprint prefix (formats.md "Fingerprint"): spaces and dashes
    dropped wherever they are, ASCII a-z upper-cased and nothing else folded, at least 4
    characters left, then the start of the canonical spelling without its dashes."""
    chars = "".join(c.upper() if "a" <= c <= "z" else c for c in prefix if c not in "- ")
    return len(chars) >= MIN_PREFIX and canonical.replace("-", "").startswith(chars)


def fp_accepts(text):
    try:
        fp_parse(text)
        return True
    except ValueError:
        return False


def fingerprint_vectors():
    keys = []
    rfc8032 = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    for name, seed in [("all-zero seed", bytes(32)), ("seed 00 01 .. 1f", bytes(range(32))),
                       ("RFC 8032 test 1 seed", rfc8032)] + \
            [(f"derived seed {i}", seed_from(f"fingerprint {i}")) for i in range(9)]:
        pk, _ = sodium.crypto_sign_seed_keypair(seed)
        keys.append((name, seed, pk))
    # One whose canonical form contains "SS", for the U+00DF (sharp s -> "SS") rejection below.
    for i in range(10_000):
        seed = seed_from(f"fingerprint with SS {i}")
        pk, _ = sodium.crypto_sign_seed_keypair(seed)
        if "SS" in fp_canonical(fp_digest(pk)):
            keys.append((f"derived seed 'fingerprint with SS {i}' (contains SS)", seed, pk))
            break
    # Fingerprints are defined over any 32 bytes; the Swift type only checks the length.
    keys.append(("all-zero public key (no seed)", None, bytes(32)))
    keys.append(("all-ones public key (no seed)", None, b"\xff" * 32))

    vectors = []
    for name, seed, pk in keys:
        digest = fp_digest(pk)
        canon = fp_canonical(digest)
        groups = canon.split("-")
        accepted = [canon, canon.lower(), "".join(groups), " ".join(groups), " ".join(groups).lower(),
                    "  " + canon[:10].lower() + canon[10:] + "  ", "-".join(canon.replace("-", "")[i:i + 4] for i in range(0, 28, 4)),
                    "--" + canon.replace("-", " - ") + "--"]
        for a in accepted:
            assert fp_parse(a) == digest, a
        vectors.append({
            "name": name,
            "seed": None if seed is None else h(seed),
            "publicKey": h(pk),
            "sha256": h(hashlib.sha256(pk).digest()),
            "digest": digest,
            "fingerprint": canon,
            "short": groups[0],
            "accepted": accepted,
        })

    base = vectors[0]["fingerprint"]
    rejected = []

    def reject(text, reason):
        assert not fp_accepts(text), (text, reason)
        rejected.append({"input": text, "reason": reason})

    def replace(s, i, c):
        return s[:i] + c + s[i + 1:]

    for g in range(4):
        i = g * 8 + 2  # a data character inside group g (8 = 7 chars + dash)
        c = base[i]
        sub = ALPHABET[(ALPHABET.index(c) + 1) % 32]
        reject(replace(base, i, sub), f"typo in group {g + 1} (data character)")
        reject(replace(base, i, sub).lower(), f"typo in group {g + 1}, lower case")
        j = g * 8 + 6  # the check character of group g
        reject(replace(base, j, ALPHABET[(ALPHABET.index(base[j]) + 7) % 32]), f"wrong check character in group {g + 1}")
    # An adjacent transposition inside a group (chosen so that it changes the group and is caught).
    for v in vectors:
        s = v["fingerprint"]
        done = False
        for i in range(5):
            if s[i] != s[i + 1]:
                t = s[:i] + s[i + 1] + s[i] + s[i + 2:]
                if not fp_accepts(t):
                    reject(t, "two adjacent characters swapped in group 1")
                    done = True
                    break
        if done:
            break
    # Check characters computed left to right instead of right to left.
    d = vectors[0]["digest"]
    wrong_dir = "-".join(d[k:k + 6] + luhn_mod32(d[k:k + 6][::-1]) for k in range(0, 24, 6))
    if wrong_dir != base:
        reject(wrong_dir, "check characters computed left to right")
    reject("", "empty")
    reject(base[:-1], "27 characters")
    reject(base + "A", "29 characters")
    reject(base.rsplit("-", 1)[0], "three groups only")
    reject(vectors[0]["digest"], "24 data characters without check characters")
    reject(base + "-" + base, "two fingerprints")
    for bad in "0189=@_é":
        reject(replace(base, 1, bad), f"non-alphabet character {bad!r}")
    reject(base.replace("-", "\t"), "tabs are not separators")
    reject(base.replace("-", "_"), "underscores are not separators")
    reject(base.replace("-", "."), "dots are not separators")
    # Unicode letters whose upper case is ASCII must not sneak in (Swift's uppercased() maps
    # 'ſ' -> 'S', 'ı' -> 'I', 'ß' -> 'SS').
    for v in vectors:
        s = v["fingerprint"]
        if "S" in s:
            reject(s.replace("S", "\u017f", 1), "U+017F LATIN SMALL LETTER LONG S in place of S")
            reject(s.lower().replace("s", "\u017f", 1), "long s in lower-case input")
            break
    for v in vectors:
        s = v["fingerprint"]
        if "I" in s:
            reject(s.replace("I", "\u0131", 1), "U+0131 LATIN SMALL LETTER DOTLESS I in place of I")
            break
    for v in vectors:
        s = v["fingerprint"]
        if "SS" in s:
            reject(s.replace("SS", "\u00df", 1), "U+00DF SHARP S in place of SS")
            break
    reject(replace(base, 0, "\uff21"), "full-width letter A")

    prefixes = []
    assert "S" in base[:7] and base[:7].isascii()
    upto_s = base[:base.index("S")]  # the first group up to its S, then U+017F in place of the S
    for p, ok in [(base[:4], True), (base[:4].lower(), True), (base[:7], True), (base[:8], True),
                  (base[:10].replace("-", ""), True), (base[:10].replace("-", " ").lower(), True), (base, True),
                  (base.replace("-", ""), True), ("", False), ("-", False), ("   ", False),
                  (replace(base[:6], 0, ALPHABET[(ALPHABET.index(base[0]) + 1) % 32]), False),
                  (base + "A", False), (base[1:5], False),
                  # the minimum: 3 characters are too few, also when spaces and dashes pad them to more
                  (base[:3], False), (base[:3].lower(), False), ("-".join(base[:3]), False),
                  (" ".join(base[:3]) + " ", False), ("-".join(base[:4]), True),
                  # no case folding beyond ASCII a-z: U+017F LATIN SMALL LETTER LONG S upper-cases to S
                  (upto_s.lower() + "\u017f", False), (upto_s + "\u017f", False), (upto_s.lower() + "s", True),
                  ("".join(chr(0xFF21 + ord(c) - ord("A")) if c.isalpha() else c for c in base[:4]), False)]:
        assert fp_prefix_matches(base, p) == ok, (p, ok)
        prefixes.append({"fingerprint": base, "prefix": p, "matches": ok})

    luhn = [{"group": g, "check": luhn_mod32(g)} for g in
            ["AAAAAA", "BBBBBB", "777777", "ABCDEF", "234567", "ZZZZZZ", "A2B3C4", "LOCAFO", "MFRGGZ", "QRSTUV"]]
    return {
        "description": "Fingerprints (protocol/formats.md 'Fingerprint'): SHA-256(Ed25519 public key)[0:15], "
                       "base32, 4 groups of 6 + Luhn mod 32 check character. 'prefixes': whether a prefix names "
                       "the fingerprint (spaces and dashes dropped, ASCII a-z upper-cased and nothing else folded, "
                       "at least 4 characters left, then the start of the canonical spelling without dashes). "
                       "Generated by scripts/gen-vectors.py with PyNaCl and hashlib.",
        "alphabet": ALPHABET,
        "vectors": vectors,
        "rejected": rejected,
        "prefixes": prefixes,
        "luhn": luhn,
    }


# ---------------------------------------------------------------------------------------------
# .locaphoto bundles (formats.md "The .locaphoto bundle")

ALG_BYTE = {"chacha20-poly1305": 0x02, "aes-256-gcm": 0x01}
DOMAIN = b"LOCAFOTO-BUNDLE-SIG-V2" + b"\x00"
assert len(DOMAIN) == 23


def u32(n):
    return struct.pack(">I", n)


def build_signing_input(f, *, domain=DOMAIN, length=u32):
    m = f["metadata"]
    parts = [
        f["version"].encode(),
        f["senderPublicKey"],
        f["recipientPublicKey"],
        f["photoID"].encode(),
        bytes([f["algorithmByte"]]),
        f["iv"],
        f["encryptedKey"],
        f["authTag"],
        m["originalSize"].to_bytes(8, "big"),
        m["format"].encode(),
        (m.get("captureDate") or "").encode(),
        b"" if m.get("width") is None else m["width"].to_bytes(4, "big"),
        b"" if m.get("height") is None else m["height"].to_bytes(4, "big"),
        (m.get("name") or "").encode(),
    ]
    return domain + b"".join(length(len(p)) + p for p in parts)


def seal_deterministic(message, recipient_ed25519_pk, ephemeral_sk):
    """libsodium crypto_box_seal with a chosen ephemeral key (see module docstring)."""
    rx = sodium.crypto_sign_ed25519_pk_to_curve25519(recipient_ed25519_pk)
    epk = sodium.crypto_scalarmult_base(ephemeral_sk)
    nonce = hashlib.blake2b(epk + rx, digest_size=24).digest()
    sealed = epk + sodium.crypto_box(message, nonce, rx, ephemeral_sk)
    assert len(sealed) == len(message) + 48
    return sealed


def open_sealed(sealed, recipient_seed):
    _, sk = sodium.crypto_sign_seed_keypair(recipient_seed)
    return SealedBox(PrivateKey(sodium.crypto_sign_ed25519_sk_to_curve25519(sk))).decrypt(sealed)


SENDER_SEED = seed_from("sender alice")
RECIPIENT_SEED = seed_from("recipient bob")
OTHER_SEED = seed_from("someone else carol")


def make_bundle(name, *, plaintext, metadata, photo_id, photo_key, iv, ephemeral, algorithm="chacha20-poly1305",
                sender_seed=SENDER_SEED, recipient_seed=RECIPIENT_SEED, style="pretty"):
    spk, _ = sodium.crypto_sign_seed_keypair(sender_seed)
    rpk, _ = sodium.crypto_sign_seed_keypair(recipient_seed)
    aead = ChaCha20Poly1305(photo_key) if algorithm == "chacha20-poly1305" else AESGCM(photo_key)
    sealed_ct = aead.encrypt(iv, plaintext, None)
    ciphertext, tag = sealed_ct[:-16], sealed_ct[-16:]
    encrypted_key = seal_deterministic(photo_key, rpk, ephemeral)
    assert open_sealed(encrypted_key, recipient_seed) == photo_key
    meta = dict(metadata)
    meta["originalSize"] = len(plaintext)
    b = {
        "name": name,
        "version": "2.0",
        "senderSeed": sender_seed,
        "senderPublicKey": spk,
        "recipientSeed": recipient_seed,
        "recipientPublicKey": rpk,
        "photoID": photo_id,
        "algorithm": algorithm,
        "algorithmByte": ALG_BYTE[algorithm],
        "photoKey": photo_key,
        "ephemeralSecret": ephemeral,
        "iv": iv,
        "encryptedKey": encrypted_key,
        "authTag": tag,
        "metadata": meta,
        "plaintext": plaintext,
        "ciphertext": ciphertext,
        "style": style,
    }
    sign(b)
    return b


def sign(b, *, seed=None, **tweaks):
    b["signingInput"] = build_signing_input(b, **tweaks)
    b["signature"] = SigningKey(seed or b["senderSeed"]).sign(b["signingInput"]).signature
    return b


def document(b, *, encrypted_data=True):
    m = b["metadata"]
    meta_keys = ["originalSize", "captureDate", "width", "height", "format", "name"]
    if b["style"] == "compact-omit":
        meta = {k: m[k] for k in meta_keys if m.get(k) is not None}
    else:
        meta = {k: m.get(k) for k in meta_keys}
    photo = {"id": b["photoID"], "algorithm": b["algorithm"]}
    if encrypted_data:
        photo["encryptedData"] = b64(b["ciphertext"])
    photo.update({"encryptedKey": b64(b["encryptedKey"]), "iv": b64(b["iv"]), "authTag": b64(b["authTag"])})
    sender = {"publicKey": b64(b["senderPublicKey"])}
    if b["style"] != "compact-omit":
        sender["fingerprint"] = fp_canonical(fp_digest(b["senderPublicKey"]))
    doc = {"version": b["version"], "photo": photo, "metadata": meta, "sender": sender,
           "recipient": {"publicKey": b64(b["recipientPublicKey"])}, "signature": b64(b["signature"])}
    if b["style"] == "reordered":
        doc = dict(reversed(list(doc.items())))
        doc["photo"] = dict(reversed(list(doc["photo"].items())))
    return doc


def file_text(b, doc=None):
    doc = doc if doc is not None else document(b)
    if b["style"] == "pretty":
        return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def bundle_record(b, text):
    m = b["metadata"]
    return {
        "name": b["name"],
        "senderSeed": h(b["senderSeed"]),
        "senderPublicKey": h(b["senderPublicKey"]),
        "senderFingerprint": fp_canonical(fp_digest(b["senderPublicKey"])),
        "recipientSeed": h(b["recipientSeed"]),
        "recipientPublicKey": h(b["recipientPublicKey"]),
        "recipientX25519PublicKey": h(sodium.crypto_sign_ed25519_pk_to_curve25519(b["recipientPublicKey"])),
        "photoID": b["photoID"],
        "algorithm": b["algorithm"],
        "photoKey": h(b["photoKey"]),
        "ephemeralSecret": h(b["ephemeralSecret"]),
        "iv": h(b["iv"]),
        "encryptedKey": h(b["encryptedKey"]),
        "authTag": h(b["authTag"]),
        "metadata": {k: m.get(k) for k in ["originalSize", "captureDate", "width", "height", "format", "name"]},
        "plaintext": h(b["plaintext"]),
        "ciphertext": h(b["ciphertext"]),
        "signingInput": h(b["signingInput"]),
        "signature": h(b["signature"]),
        "file": text,
    }


def fake_jpeg(n):
    return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes((i * 131 + 7) % 256 for i in range(n - 11))


def bundle_vectors():
    valid = []
    b1 = make_bundle(
        "JPEG, full metadata, non-ASCII name (\\u escapes in the file), 300 bytes",
        plaintext=fake_jpeg(300),
        metadata={"captureDate": "2025-11-15T10:30:00Z", "width": 4032, "height": 3024, "format": "JPEG",
                  "name": "Plage d'\u00e9t\u00e9 \U0001F30A.jpg"},
        photo_id="0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5b",
        photo_key=bytes(range(0x40, 0x60)), iv=bytes.fromhex("000000000102030405060708"),
        ephemeral=seed_from("ephemeral 1"), style="pretty")
    b2 = make_bundle(
        "PNG, empty photo, optional metadata null",
        plaintext=b"",
        metadata={"captureDate": None, "width": None, "height": None, "format": "PNG", "name": None},
        photo_id="5f6e7d8c-9bab-4cde-8f01-23456789abcd",
        photo_key=bytes(32), iv=bytes(12), ephemeral=seed_from("ephemeral 2"), style="compact")
    b3 = make_bundle(
        "HEIC, exactly 128 bytes (two whole ChaCha20 blocks), optional keys omitted, raw UTF-8, keys reordered",
        plaintext=b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(range(104)),
        metadata={"width": 1, "height": 1_000_000, "format": "HEIC", "name": "\u5199\u771f 1.heic"},
        photo_id="ffffffff-ffff-4fff-bfff-ffffffffffff",
        photo_key=b"\xff" * 32, iv=b"\xff" * 12, ephemeral=seed_from("ephemeral 3"), style="compact-omit")
    b4 = make_bundle(
        "aes-256-gcm (readers MAY refuse it; Swift opens it one-shot)",
        plaintext=b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(1, 50)),
        metadata={"captureDate": "1999-12-31T23:59:59Z", "width": 7, "height": 5, "format": "PNG", "name": "a"},
        photo_id="00000000-0000-4000-8000-000000000000",
        photo_key=bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"),
        iv=bytes.fromhex("cafebabefacedbaddecaf888"), ephemeral=seed_from("ephemeral 4"), algorithm="aes-256-gcm",
        style="reordered")
    for b in [b1, b2, b3, b4]:
        valid.append(bundle_record(b, file_text(b)))

    invalid = []

    def bad(name, error, text, seed=RECIPIENT_SEED):
        invalid.append({"name": name, "error": error, "recipientSeed": h(seed), "file": text})

    def variant(**changes):
        c = dict(b1)
        c["metadata"] = dict(b1["metadata"])
        c.update(changes)
        return c

    def with_doc(b, edit, resign=False):
        if resign:
            sign(b)
        d = document(b)
        edit(d)
        return file_text(b, d)

    # Decrypt-stage failures (the signature is valid).
    c = variant(ciphertext=bytes([b1["ciphertext"][0] ^ 0x01]) + b1["ciphertext"][1:])
    bad("ciphertext altered (first bit)", "tagMismatch", file_text(c))
    c = variant(ciphertext=b1["ciphertext"][:-1] + bytes([b1["ciphertext"][-1] ^ 0x80]))
    bad("ciphertext altered (last bit)", "tagMismatch", file_text(c))
    c = variant(ciphertext=b1["ciphertext"][:-1])
    bad("ciphertext one byte short of originalSize", "sizeMismatch", file_text(c))
    c = variant(ciphertext=b1["ciphertext"] + b"\x00")
    bad("ciphertext one byte longer than originalSize", "sizeMismatch", file_text(c))
    spk_other, _ = sodium.crypto_sign_seed_keypair(OTHER_SEED)
    c = sign(variant(recipientPublicKey=spk_other))
    bad("addressed to another recipient (validly signed)", "wrongRecipient", file_text(c))
    c = sign(variant(encryptedKey=seal_deterministic(b1["photoKey"], spk_other, seed_from("ephemeral x"))))
    bad("photo key sealed to another node's key (validly signed)", "wrongRecipient", file_text(c))
    ek = bytearray(b1["encryptedKey"])
    ek[40] ^= 0x04
    c = sign(variant(encryptedKey=bytes(ek)))
    bad("sealed box altered (validly signed)", "wrongRecipient", file_text(c))

    # Signature failures.
    c = variant(authTag=bytes([b1["authTag"][0] ^ 0x01]) + b1["authTag"][1:])
    bad("authTag altered after signing", "badSignature", file_text(c))
    sig = bytearray(b1["signature"])
    sig[63] ^= 0x10
    bad("signature altered", "badSignature", file_text(variant(signature=bytes(sig))))
    bad("signed without the 0x00 after the domain string", "badSignature",
        file_text(sign(variant(), domain=b"LOCAFOTO-BUNDLE-SIG-V2")))
    bad("signed with little-endian field lengths", "badSignature",
        file_text(sign(variant(), length=lambda n: struct.pack("<I", n))))
    bad("signed by another key than sender.publicKey", "badSignature", file_text(sign(variant(), seed=OTHER_SEED)))
    bad("metadata.name changed after signing", "badSignature",
        with_doc(variant(), lambda d: d["metadata"].update(name="IMG_0001.jpg")))
    bad("metadata.name removed after signing", "badSignature",
        with_doc(variant(), lambda d: d["metadata"].update(name=None)))
    bad("metadata.captureDate changed after signing", "badSignature",
        with_doc(variant(), lambda d: d["metadata"].update(captureDate="2025-11-15T10:30:01Z")))
    bad("metadata.width and height swapped after signing", "badSignature",
        with_doc(variant(), lambda d: d["metadata"].update(width=3024, height=4032)))
    bad("metadata.format changed after signing", "badSignature",
        with_doc(variant(), lambda d: d["metadata"].update(format="PNG")))
    c = variant(ciphertext=b1["ciphertext"][:-1])
    bad("metadata.originalSize and data shortened together after signing", "badSignature",
        with_doc(c, lambda d: d["metadata"].update(originalSize=len(c["ciphertext"]))))
    bad("iv changed after signing", "badSignature",
        with_doc(variant(), lambda d: d["photo"].update(iv=b64(bytes(12)))))
    bad("photo id changed after signing", "badSignature",
        with_doc(variant(), lambda d: d["photo"].update(id="0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5c")))
    bad("sender.publicKey replaced after signing", "badSignature",
        with_doc(variant(), lambda d: d["sender"].update(publicKey=b64(spk_other))))
    bad("sender and recipient swapped after signing", "badSignature",
        with_doc(variant(), lambda d: d.update(sender={"publicKey": d["recipient"]["publicKey"]},
                                               recipient={"publicKey": d["sender"]["publicKey"]})))
    # A recipient key replaced after signing: the signature fails before the recipient check.
    bad("recipient.publicKey replaced after signing (reader is the new recipient)", "badSignature",
        with_doc(variant(), lambda d: d["recipient"].update(publicKey=b64(spk_other))), seed=OTHER_SEED)

    # Structural failures (validly signed where a signature is possible).
    bad("photo id in upper case", "malformed", file_text(sign(variant(photoID=b1["photoID"].upper()))))
    bad("iv of 11 bytes", "malformed", file_text(sign(variant(iv=b1["iv"][:11]))))
    bad("authTag of 15 bytes", "malformed", file_text(sign(variant(authTag=b1["authTag"][:15]))))
    bad("encryptedKey of 79 bytes", "malformed", file_text(sign(variant(encryptedKey=b1["encryptedKey"][:79]))))
    bad("signature of 63 bytes", "malformed", with_doc(variant(), lambda d: d.update(signature=b64(b1["signature"][:63]))))
    bad("sender.publicKey of 31 bytes", "malformed",
        with_doc(variant(), lambda d: d["sender"].update(publicKey=b64(b1["senderPublicKey"][:31]))))
    bad("iv is not base64", "malformed", with_doc(variant(), lambda d: d["photo"].update(iv="AAAA*AAAAAAAAAAA")))
    bad("signature is not base64", "malformed", with_doc(variant(), lambda d: d.update(signature="%" * 88)))
    m = dict(b1["metadata"], name="photos/IMG_1.jpg")
    bad("metadata.name contains '/'", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], name="IMG\n1.jpg")
    bad("metadata.name contains a control character", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], name="IMG\x7f1.jpg")
    bad("metadata.name contains DEL (0x7f)", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], name="x" * 256)
    bad("metadata.name of 256 bytes", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], format="jpeg")
    bad("metadata.format in lower case", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], format="")
    bad("metadata.format empty", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], captureDate="2025-11-15T10:30:00+00:00")
    bad("metadata.captureDate with an offset instead of Z", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], width=0)
    bad("metadata.width 0", "malformed", file_text(sign(variant(metadata=m))))
    m = dict(b1["metadata"], height=1_000_001)
    bad("metadata.height above 1,000,000", "malformed", file_text(sign(variant(metadata=m))))
    bad("metadata.originalSize above 2^32", "tooLarge",
        with_doc(variant(), lambda d: d["metadata"].update(originalSize=(1 << 32) + 1)))
    bad("metadata.originalSize negative", "tooLarge", with_doc(variant(), lambda d: d["metadata"].update(originalSize=-1)))
    bad("version 3.0 (validly signed)", "unsupportedVersion", file_text(sign(variant(version="3.0"))))
    bad("algorithm xchacha20-poly1305", "unsupportedAlgorithm",
        with_doc(variant(), lambda d: d["photo"].update(algorithm="xchacha20-poly1305")))
    bad("encryptedData missing", "truncated", file_text(b1, document(b1, encrypted_data=False)))
    text = file_text(b1)
    bad("JSON cut in the middle", "malformed", text[: len(text) // 2])
    bad("top level is an array", "malformed", "[" + text + "]")
    bad("signature is null", "malformed", with_doc(variant(), lambda d: d.update(signature=None)))
    bad("metadata missing", "malformed", with_doc(variant(), lambda d: d.pop("metadata")))
    bad("metadata.originalSize is a string", "malformed",
        with_doc(variant(), lambda d: d["metadata"].update(originalSize=str(d["metadata"]["originalSize"]))))
    bad("empty file", "truncated", "")

    return {
        "description": ".locaphoto bundles (protocol/formats.md). 'vectors' are valid: decode, verify and open "
                       "with recipientSeed to get plaintext; 'signingInput' is the exact signed byte string. "
                       "'invalid' bundles must be refused with the FormatError code in 'error' (the first check "
                       "that fails, in the order of the table 'Errors, in the order this implementation checks them' "
                       "in formats.md; each has one fault). Sealed boxes use a fixed "
                       "ephemeral key (ephemeralSecret) so the file is reproducible; readers only open them. "
                       "Generated by scripts/gen-vectors.py with PyNaCl and cryptography.",
        "signingDomain": h(DOMAIN),
        "vectors": valid,
        "invalid": invalid,
    }


# ---------------------------------------------------------------------------------------------
# Wire messages (messages.md)

KIND = {"OFFER": 0x01, "DECISION": 0x02, "ITEM_START": 0x03, "ITEM_DATA": 0x04, "ITEM_END": 0x05,
        "ITEM_RESULT": 0x06, "ERROR": 0x07, "PING": 0x08, "PONG": 0x09, "DONE": 0x0A, "PREVIEW": 0x0E}
BYTES_FIELDS = {"ITEM_START": {"iv", "encryptedKey"}, "ITEM_END": {"authTag", "signature"}}
MAX_MESSAGE = 65535 - 16

OFFER_ID = "3f2c8a1e-7b4d-4c6e-9f10-a1b2c3d4e5f6"
ITEM_IDS = ["11111111-2222-4333-8444-555555555555", "a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3"]


def body_from_fields(kind, fields):
    body = {}
    for k, v in fields.items():
        body[k] = b64(bytes.fromhex(v)) if k in BYTES_FIELDS.get(kind, ()) else v
    return body


def canonical_json(body):
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def preview_jpeg(width, height):
    """A preview-shaped JPEG (messages.md "PREVIEW"): SOI, APP0 JFIF, DQT, SOF0 with the given
    size, SOS and a short scan, EOI. Built by hand so the vector needs no image library; a
    receiver's checks read the markers, not the pixels."""
    b = b"\xff\xd8"
    b += b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    b += b"\xff\xdb\x00\x43\x00" + bytes(range(1, 65))
    b += b"\xff\xc0\x00\x0b\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00"
    b += b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + bytes([0x55] * 32)
    return b + b"\xff\xd9"


def wire_vectors():
    vectors = []

    def json_msg(name, kind, fields, wire_body=None, item_fails=None):
        body = body_from_fields(kind, fields)
        if wire_body is None:
            # Not canonical on purpose: keys reversed, spaces, non-ASCII as \\u escapes.
            wire = json.dumps(dict(reversed(list(body.items()))), separators=(", ", ": "), ensure_ascii=True).encode()
        else:
            wire = wire_body.encode("utf-8") if isinstance(wire_body, str) else wire_body
        assert json.loads(wire) is not None
        enc = bytes([KIND[kind]]) + wire
        canon = bytes([KIND[kind]]) + canonical_json(body)
        assert len(enc) <= MAX_MESSAGE and len(canon) <= MAX_MESSAGE
        vector = {"name": name, "type": kind, "hex": h(enc), "fields": fields, "canonical": h(canon)}
        if item_fails is not None:
            vector["itemFails"] = item_fails
        vectors.append(vector)

    def hash_of(data):
        return hashlib.blake2b(data, digest_size=32).hexdigest()

    items = [
        {"id": ITEM_IDS[0], "name": "IMG_0001.jpg", "kind": "jpeg", "size": 3145728, "hash": hash_of(b"photo 1")},
        {"id": ITEM_IDS[1], "name": "Plage d'\u00e9t\u00e9 \U0001F30A.heic", "kind": "heic", "size": 0,
         "hash": hash_of(b"")},
    ]
    json_msg("OFFER, two items, non-ASCII name", "OFFER",
             {"offer": OFFER_ID, "items": items, "more": False, "totalItems": 2, "totalBytes": 3145728})
    json_msg("OFFER, first part of a split offer", "OFFER",
             {"offer": OFFER_ID, "items": items[:1], "more": True, "totalItems": 200, "totalBytes": 4 << 30})
    json_msg("OFFER, continuation without items", "OFFER",
             {"offer": OFFER_ID, "items": [], "more": False, "totalItems": 1, "totalBytes": 0})
    json_msg("OFFER, unknown fields ignored", "OFFER",
             {"offer": OFFER_ID, "items": items[:1], "more": False, "totalItems": 1, "totalBytes": 3145728},
             wire_body=json.dumps({"future": {"x": [1, 2, None]}, "offer": OFFER_ID,
                                   "items": [dict(items[0], thumbnail="AAAA", exif=None)],
                                   "more": False, "totalItems": 1, "totalBytes": 3145728, "zzz": True}, indent=1))
    bare = [{k: v for k, v in it.items() if k != "hash"} for it in items]
    json_msg("OFFER, items without hash (only to a receiver that announced cap late-hash)", "OFFER",
             {"offer": OFFER_ID, "items": bare, "more": False, "totalItems": 2, "totalBytes": 3145728},
             wire_body=json.dumps({"offer": OFFER_ID, "items": [bare[0], dict(bare[1], hash=None)],
                                   "more": False, "totalItems": 2, "totalBytes": 3145728}))
    json_msg("DECISION accepted", "DECISION", {"offer": OFFER_ID, "decision": "accepted"})
    json_msg("DECISION rejected with code and message", "DECISION",
             {"offer": OFFER_ID, "decision": "rejected", "code": 3, "message": "receiving is off"})
    json_msg("DECISION expired, null optionals", "DECISION", {"offer": OFFER_ID, "decision": "expired"},
             wire_body='{"code":null,"decision":"expired","message":null,"offer":"%s"}' % OFFER_ID)
    json_msg("DECISION rejected, unknown code 999 decodes to unknown (0)", "DECISION",
             {"offer": OFFER_ID, "decision": "rejected", "code": 0, "message": "from the future"},
             wire_body='{"offer":"%s","decision":"rejected","code":999,"message":"from the future"}' % OFFER_ID)
    json_msg("DECISION with code 16 (identity_mismatch, the highest known)", "DECISION",
             {"offer": OFFER_ID, "decision": "rejected", "code": 16})
    iv = bytes(range(1, 13))
    ek = bytes((i * 7) % 256 for i in range(80))
    json_msg("ITEM_START, full metadata", "ITEM_START",
             {"offer": OFFER_ID, "item": 0, "photo": "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5b",
              "algorithm": "chacha20-poly1305", "iv": h(iv), "encryptedKey": h(ek), "offset": 0,
              "metadata": {"originalSize": 3145728, "captureDate": "2025-11-15T10:30:00Z", "width": 4032,
                           "height": 3024, "format": "JPEG", "name": "IMG_0001.jpg"}})
    json_msg("ITEM_START, minimal metadata (nulls)", "ITEM_START",
             {"offer": OFFER_ID, "item": 1, "photo": "5f6e7d8c-9bab-4cde-8f01-23456789abcd",
              "algorithm": "chacha20-poly1305", "iv": h(bytes(12)), "encryptedKey": h(b"\xff" * 80), "offset": 0,
              "metadata": {"originalSize": 0, "format": "HEIC"}},
             wire_body=json.dumps({"metadata": {"name": None, "width": None, "height": None, "captureDate": None,
                                                "format": "HEIC", "originalSize": 0},
                                   "offset": 0, "encryptedKey": b64(b"\xff" * 80), "iv": b64(bytes(12)),
                                   "algorithm": "chacha20-poly1305", "photo": "5f6e7d8c-9bab-4cde-8f01-23456789abcd",
                                   "item": 1, "offer": OFFER_ID}))
    json_msg("ITEM_END", "ITEM_END",
             {"offer": OFFER_ID, "item": 0, "authTag": h(bytes(range(16))), "signature": h(bytes(range(64, 128)))})
    json_msg("ITEM_END, slashes in base64 (escaped as \\/ on the wire)", "ITEM_END",
             {"offer": OFFER_ID, "item": 1, "authTag": h(b"\xff" * 16), "signature": h(b"\xfb\xff" * 32)},
             wire_body=json.dumps({"offer": OFFER_ID, "item": 1, "authTag": b64(b"\xff" * 16),
                                   "signature": b64(b"\xfb\xff" * 32)}).replace("/", "\\/"))
    # messages.md ITEM_END "Limits": a decodable ITEM_END whose authTag is not 16 bytes or whose
    # signature is not 64 fails that item only (ITEM_RESULT failed, bad_signature).
    json_msg("ITEM_END, authTag of 15 bytes: decodes, fails the item", "ITEM_END",
             {"offer": OFFER_ID, "item": 0, "authTag": h(bytes(range(15))), "signature": h(bytes(range(64, 128)))},
             item_fails="bad_signature")
    json_msg("ITEM_END, signature of 63 bytes: decodes, fails the item", "ITEM_END",
             {"offer": OFFER_ID, "item": 0, "authTag": h(bytes(range(16))), "signature": h(bytes(range(64, 127)))},
             item_fails="bad_signature")
    json_msg("ITEM_RESULT imported", "ITEM_RESULT",
             {"offer": OFFER_ID, "item": 0, "status": "imported", "photo": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"})
    json_msg("ITEM_RESULT queued", "ITEM_RESULT", {"offer": OFFER_ID, "item": 1, "status": "queued"})
    json_msg("ITEM_RESULT failed", "ITEM_RESULT",
             {"offer": OFFER_ID, "item": 1, "status": "failed", "code": 12,
              "message": "the plaintext does not match the offered hash"})
    json_msg("ERROR with offer", "ERROR",
             {"code": 1, "message": "ITEM_DATA at offset 5, expected 0", "offer": OFFER_ID})
    json_msg("ERROR without offer, quotes and backslash in message", "ERROR",
             {"code": 15, "message": "unexpected \"state\" \\ bug"})
    json_msg("ERROR, unknown code 65535 decodes to unknown (0)", "ERROR", {"code": 0, "message": "newer peer"},
             wire_body='{"code":65535,"message":"newer peer"}')
    json_msg("DONE", "DONE", {"offer": OFFER_ID})

    for name, kind in [("PING", "PING"), ("PONG", "PONG")]:
        enc = bytes([KIND[kind]])
        vectors.append({"name": name, "type": kind, "hex": h(enc), "fields": {}, "canonical": h(enc)})

    def item_data(name, item, offset, data):
        enc = bytes([KIND["ITEM_DATA"]]) + struct.pack(">IQ", item, offset) + data
        assert len(enc) <= MAX_MESSAGE
        vectors.append({"name": name, "type": "ITEM_DATA", "hex": h(enc),
                        "fields": {"item": item, "offset": offset, "data": h(data)}, "canonical": h(enc)})

    item_data("ITEM_DATA, empty piece", 0, 0, b"")
    item_data("ITEM_DATA, 16 bytes at offset 65024", 1, 65024, bytes(range(16)))
    item_data("ITEM_DATA, large item index and offset (big-endian)", 0x01020304, 0x0102030405060708, b"\xab")
    item_data("ITEM_DATA, maximum index and offset", 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF, b"\x00\xff")

    # Previews (cap "preview"): the OFFER announces each one's length and hash; PREVIEW carries
    # the JPEG sealed to the recipient (a fixed ephemeral key here, so the file is reproducible).
    jpeg = preview_jpeg(24, 16)
    info = {"size": len(jpeg), "hash": hash_of(jpeg)}
    json_msg("OFFER, items with a preview (only to a receiver that announced cap preview)", "OFFER",
             {"offer": OFFER_ID, "items": [dict(items[0], preview=info), items[1]], "more": False, "totalItems": 2,
              "totalBytes": 3145728})
    json_msg("OFFER, an item whose preview follows the offer (only to a receiver that announced caps preview and "
             "late-preview)", "OFFER",
             {"offer": OFFER_ID, "items": [dict(items[0], latePreview=True), items[1]], "more": False, "totalItems": 2,
              "totalBytes": 3145728})
    rpk, _ = sodium.crypto_sign_seed_keypair(RECIPIENT_SEED)
    sealed = seal_deterministic(jpeg, rpk, seed_from("ephemeral preview"))
    assert open_sealed(sealed, RECIPIENT_SEED) == jpeg

    def preview_msg(name, item, data):
        enc = bytes([KIND["PREVIEW"]]) + struct.pack(">I", item) + data
        assert len(enc) <= MAX_MESSAGE
        vectors.append({"name": name, "type": "PREVIEW", "hex": h(enc),
                        "fields": {"item": item, "sealed": h(data)}, "canonical": h(enc)})

    preview_msg("PREVIEW of item 0, sealed to the recipient", 0, sealed)
    preview_msg("PREVIEW, large item index (big-endian), empty box", 0x01020304, b"")
    previews = [{
        "name": "preview of item 0 in the OFFER above",
        "recipientSeed": h(RECIPIENT_SEED), "announced": info, "jpeg": h(jpeg), "sealed": h(sealed),
        "width": 24, "height": 16,
    }]

    invalid = []

    def bad(name, hexstr, error="protocol_violation"):
        invalid.append({"name": name, "hex": hexstr, "error": error})

    def j(kind, text):
        return h(bytes([KIND[kind]]) + (text.encode("utf-8") if isinstance(text, str) else text))

    good_offer = json.dumps({"offer": OFFER_ID, "items": [items[0]], "more": False, "totalItems": 1,
                             "totalBytes": 3145728})
    bad("empty message", "")
    bad("unknown type 0x00", "00")
    bad("COLLECT (0x0b) without 'want'", j("DONE", '{"offer":"%s"}' % OFFER_ID).replace("0a", "0b", 1))
    bad("unknown type 0x0f", j("DONE", '{"offer":"%s"}' % OFFER_ID).replace("0a", "0f", 1))
    bad("unknown type 0xff", "ff")
    bad("OFFER with an empty body", "01")
    bad("OFFER, truncated JSON", j("OFFER", good_offer[:-1]))
    bad("OFFER, JSON cut in half", j("OFFER", good_offer[: len(good_offer) // 2]))
    bad("OFFER, trailing garbage after the JSON", j("OFFER", good_offer + "x"))
    bad("OFFER, body is null", j("OFFER", "null"))
    bad("OFFER, body is an array", j("OFFER", "[" + good_offer + "]"))
    bad("OFFER, items is an object", j("OFFER", good_offer.replace('"items": [', '"items": {"0": ').replace("}], ", "}}, ")))
    bad("OFFER, totalBytes missing", j("OFFER", json.dumps({"offer": OFFER_ID, "items": [], "more": False, "totalItems": 1})))
    bad("OFFER, size is a string", j("OFFER", good_offer.replace('"size": 3145728', '"size": "3145728"')))
    bad("OFFER, more is a number", j("OFFER", good_offer.replace('"more": false', '"more": 0')))
    bad("OFFER, offer id is a number", j("OFFER", good_offer.replace('"offer": "%s"' % OFFER_ID, '"offer": 7')))
    bad("OFFER, size does not fit in 64 bits", j("OFFER", good_offer.replace('"size": 3145728', '"size": 18446744073709551616')))
    bad("OFFER, not UTF-8", j("OFFER", b'{"offer":"\xff\xfe"}'))
    bad("DECISION, unknown decision value", j("DECISION", '{"offer":"%s","decision":"maybe"}' % OFFER_ID))
    bad("DECISION, code is a string", j("DECISION", '{"offer":"%s","decision":"rejected","code":"3"}' % OFFER_ID))
    # (Codes outside 0...65535 are refused by the Swift decoder, which reads them as u16; messages.md
    # does not give codes a range, so they are not vectors.)
    start = {"offer": OFFER_ID, "item": 0, "photo": "0b7e2f4c-1d3a-4e5f-8a9b-0c1d2e3f4a5b",
             "algorithm": "chacha20-poly1305", "iv": b64(iv), "encryptedKey": b64(ek), "offset": 0,
             "metadata": {"originalSize": 3, "format": "JPEG"}}
    bad("ITEM_START, iv is not base64", j("ITEM_START", json.dumps(dict(start, iv="not base64!"))))
    bad("ITEM_START, iv is a byte array", j("ITEM_START", json.dumps(dict(start, iv=list(iv)))))
    bad("ITEM_START, item is a string", j("ITEM_START", json.dumps(dict(start, item="0"))))
    bad("ITEM_START, metadata missing", j("ITEM_START", json.dumps({k: v for k, v in start.items() if k != "metadata"})))
    bad("ITEM_START, metadata.originalSize missing", j("ITEM_START", json.dumps(dict(start, metadata={"format": "JPEG"}))))
    bad("ITEM_END, signature longer than 8192 base64 characters", j("ITEM_END", json.dumps(
        {"offer": OFFER_ID, "item": 0, "authTag": b64(bytes(16)), "signature": "A" * 8196})))
    bad("ITEM_END, authTag is null", j("ITEM_END", json.dumps(
        {"offer": OFFER_ID, "item": 0, "authTag": None, "signature": b64(bytes(64))})))
    bad("ITEM_RESULT, unknown status", j("ITEM_RESULT", '{"offer":"%s","item":0,"status":"maybe"}' % OFFER_ID))
    bad("ERROR, message missing", j("ERROR", '{"code":1}'))
    bad("ERROR, code is a string", j("ERROR", '{"code":"protocol_violation","message":"x"}'))
    bad("DONE, offer missing", j("DONE", "{}"))
    bad("DONE, empty body", "0a")
    bad("ITEM_DATA with no header", "04")
    bad("ITEM_DATA with an 11-byte header", "04" + "00" * 11)
    bad("PING with a body", "0800")
    bad("PONG with a JSON body", j("PONG", "{}"))
    bad("PREVIEW with a 3-byte header", "0e" + "00" * 3)
    # (The largest valid ITEM_DATA and an over-long message are built by the Swift tests: 130 KB of hex here.)

    hello = []
    for name, fields in [
        ("HELLO", {"v": 1, "ed25519": h(sodium.crypto_sign_seed_keypair(SENDER_SEED)[0]), "name": "alice", "caps": []}),
        ("HELLO with caps and a non-ASCII name", {"v": 1, "ed25519": h(sodium.crypto_sign_seed_keypair(RECIPIENT_SEED)[0]),
                                                  "name": "Bob\u2019s Mac \U0001F4F7", "caps": ["resume", "x-future"]}),
    ]:
        body = dict(fields, ed25519=b64(bytes.fromhex(fields["ed25519"])))
        hello.append({"name": name, "hex": h(json.dumps(body).encode()), "fields": fields,
                      "canonical": h(canonical_json(body))})

    frames = []
    for payload in [b"\x08", bytes(range(255)), bytes(range(256)), b"\x01" + bytes(299)]:
        frames.append({"payload": h(payload), "frame": h(struct.pack(">H", len(payload)) + payload)})

    return {
        "description": "Wire messages (protocol/messages.md): one type byte, then the body. 'hex' is a message as a "
                       "peer may send it (JSON keys in any order, spaces, \\u escapes, unknown fields); 'fields' is "
                       "what it decodes to, with byte fields (iv, encryptedKey, authTag, signature, ITEM_DATA data) "
                       "as hex, absent optionals omitted and unknown error codes mapped to 0; 'canonical' is the "
                       "same message with sorted keys, no spaces and raw UTF-8 (what Locafoto's encoder writes). "
                       "A vector with 'itemFails' decodes (the session goes on) but its item fails at the "
                       "receiver's checks with the code named (ITEM_RESULT failed). "
                       "'invalid' messages must be refused with the error code named. Generated by "
                       "scripts/gen-vectors.py.",
        "maxMessageLength": MAX_MESSAGE,
        "vectors": vectors,
        "invalid": invalid,
        "hello": hello,
        "frames": frames,
        "previews": previews,
    }


# ---------------------------------------------------------------------------------------------

def self_check_bundles(bundles):
    """Runs scripts/interop/verify_bundle.py on every bundle vector, as a separate process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "v.locaphoto")
        out = os.path.join(tmp, "out.bin")
        for v in bundles["vectors"]:
            with open(path, "w", encoding="utf-8") as f:
                f.write(v["file"])
            if os.path.exists(out):
                os.unlink(out)
            r = subprocess.run([sys.executable, VERIFY_BUNDLE, path, v["recipientSeed"], "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"self-check: verify_bundle.py refused valid vector {v['name']!r}: {r.stderr.strip()}")
            with open(out, "rb") as f:
                if f.read() != bytes.fromhex(v["plaintext"]):
                    sys.exit(f"self-check: verify_bundle.py decrypted {v['name']!r} to the wrong plaintext")
            # The recipient's seed is needed: another node's seed must be refused.
            r = subprocess.run([sys.executable, VERIFY_BUNDLE, path, h(OTHER_SEED), "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 1:
                sys.exit(f"self-check: verify_bundle.py opened {v['name']!r} with another node's seed")
        for v in bundles["invalid"]:
            with open(path, "w", encoding="utf-8") as f:
                f.write(v["file"])
            r = subprocess.run([sys.executable, VERIFY_BUNDLE, path, v["recipientSeed"], "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 1 or "REFUSED" not in r.stderr:
                sys.exit(f"self-check: verify_bundle.py did not refuse invalid vector {v['name']!r} "
                         f"(exit {r.returncode}): {r.stderr.strip()}")
    print(f"self-check: verify_bundle.py opened {len(bundles['vectors'])} valid bundles and refused "
          f"{len(bundles['invalid'])} invalid ones")


def render(doc):
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="fail if the files on disk differ from a fresh generation")
    args = p.parse_args()

    outputs = {
        "fingerprint.json": fingerprint_vectors(),
        "bundle.json": bundle_vectors(),
        "wire-messages.json": wire_vectors(),
    }
    self_check_bundles(outputs["bundle.json"])
    stale = []
    for name, doc in outputs.items():
        path = os.path.join(VECTORS, name)
        text = render(doc)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
            continue
        os.makedirs(VECTORS, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        counts = {k: len(v) for k, v in doc.items() if isinstance(v, list)}
        print(f"wrote {os.path.relpath(path, ROOT)} {counts}")
    if stale:
        sys.exit(f"stale vector files (run scripts/gen-vectors.py): {', '.join(stale)}")
    if args.check:
        print("vector files are up to date")


if __name__ == "__main__":
    main()
