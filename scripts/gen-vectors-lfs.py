#!/usr/bin/env python3
"""Generates protocol/vectors/lfs.json: .lfs files (Locafoto Shared Format, seed 001) made with
the Python `cryptography` package exactly as the seed's "Using External Encryption" example
does, independently of the Swift implementation.

    pip install cryptography
    python3 scripts/gen-vectors-lfs.py            # (re)writes the file
    python3 scripts/gen-vectors-lfs.py --check    # regenerates in memory, fails if the file differs

.lfs: [128-byte header: key name UTF-8, NUL-padded][ciphertext][12-byte nonce][16-byte tag],
AES-256-GCM, no associated data. Keys, nonces and plaintexts are fixed so the output is
reproducible (a real writer draws a fresh random nonce per file).

"valid" vectors: a reader with `key` must read `keyName` from the header and decrypt `file` to
`plaintext`; a writer given keyName, key, nonce and plaintext must produce `file` exactly.
"invalid" vectors: a reader with `key` must refuse `file`; `error` is the class of failure
(truncated: shorter than 156 bytes; malformed: bad key-name header; tagMismatch: the tag does
not verify), as protocol/formats.md defines the checks and their order.
"""

import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "protocol", "vectors", "lfs.json")

KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
OTHER_KEY = bytes.fromhex("1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100")


def seal(key, key_name, data, nonce):
    """The seed's example, step for step (with a fixed nonce instead of os.urandom(12))."""
    aesgcm = AESGCM(key)
    ciphertext = aesgcm.encrypt(nonce, data, None)
    tag = ciphertext[-16:]
    encrypted_data = ciphertext[:-16]
    header = key_name + b"\x00" * (128 - len(key_name))
    assert len(header) == 128
    return header + encrypted_data + nonce + tag


def valid(name, key_name, plaintext, nonce, key=KEY):
    file = seal(key, key_name, plaintext, nonce)
    assert len(file) == 128 + len(plaintext) + 12 + 16
    return {
        "name": name,
        "keyName": key_name.decode("utf-8"),
        "keyNameHex": key_name.hex(),
        "key": key.hex(),
        "nonce": nonce.hex(),
        "plaintext": plaintext.hex(),
        "file": file.hex(),
    }


def invalid(name, file, error, key=KEY):
    return {"name": name, "key": key.hex(), "file": file.hex(), "error": error}


def build():
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes((i * 37 + 11) % 256 for i in range(89))
    png = b"\x89PNG\r\n\x1a\n" + b"Locafoto .lfs test vector"
    long_ascii = b"0123456789abcdef" * 8
    long_keys = "\U0001F511".encode() * 32
    assert len(long_ascii) == 128 and len(long_keys) == 128
    vectors = [
        valid("seed example shape: key name my-documents, 100-byte JPEG-like plaintext",
              b"my-documents", jpeg, bytes.fromhex("cafebabefacedbaddecaf888")),
        valid("key name of exactly 128 ASCII bytes: no NUL terminator",
              long_ascii, png, bytes.fromhex("000000000000000000000001")),
        valid("key name of exactly 128 bytes of 4-byte UTF-8 characters",
              long_keys, b"GIF89a" + bytes(10), bytes.fromhex("ffffffffffffffffffffffff")),
        valid("non-ASCII key name",
              "фото-ключ 🔑".encode(), png, bytes.fromhex("0102030405060708090a0b0c"), key=OTHER_KEY),
        valid("empty plaintext: a file of exactly 156 bytes",
              b"empty", b"", bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaab")),
    ]

    base = bytes.fromhex(vectors[0]["file"])
    body = base[128:]

    def with_header(raw):
        return raw + b"\x00" * (128 - len(raw)) + body

    flipped_tag = bytearray(base)
    flipped_tag[-1] ^= 0x01
    flipped_ct = bytearray(base)
    flipped_ct[128] ^= 0x80
    flipped_nonce = bytearray(base)
    flipped_nonce[-20] ^= 0x10
    empty_file = bytes.fromhex(vectors[4]["file"])
    bad = [
        invalid("empty file", b"", "truncated"),
        invalid("header only (128 bytes)", base[:128], "truncated"),
        invalid("155 bytes: one short of an empty .lfs file", empty_file[:155], "truncated"),
        invalid("empty key name (header starts with NUL)", with_header(b""), "malformed"),
        invalid("NUL inside the key name (bytes after the first NUL)", with_header(b"my\x00documents"), "malformed"),
        invalid("key name is not valid UTF-8", with_header(b"my-\xff\xfe"), "malformed"),
        invalid("key name is a truncated UTF-8 sequence", with_header("ключ".encode()[:-1]), "malformed"),
        invalid("tag altered", bytes(flipped_tag), "tagMismatch"),
        invalid("ciphertext altered", bytes(flipped_ct), "tagMismatch"),
        invalid("nonce altered", bytes(flipped_nonce), "tagMismatch"),
        invalid("last byte removed", base[:-1], "tagMismatch"),
        invalid("wrong key", base, "tagMismatch", key=OTHER_KEY),
    ]
    return {
        "description": ".lfs files (seed 001): header(128, key name NUL-padded) || ciphertext || nonce(12) || tag(16), "
        "AES-256-GCM without AAD; generated by scripts/gen-vectors-lfs.py with the Python cryptography package",
        "valid": vectors,
        "invalid": bad,
    }


def render(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main():
    text = render(build())
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{os.path.relpath(OUT, ROOT)} is out of date: run python3 scripts/gen-vectors-lfs.py", file=sys.stderr)
                return 1
        print(f"{os.path.relpath(OUT, ROOT)}: up to date")
        return 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
