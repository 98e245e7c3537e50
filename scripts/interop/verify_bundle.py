#!/usr/bin/env python3
"""Independent reader of `.locaphoto` bundles (protocol/formats.md "The .locaphoto bundle").

Uses only PyNaCl and `cryptography`, never the Swift code, so that it checks the format as
documented rather than as implemented:

    pip install pynacl cryptography
    python3 scripts/interop/verify_bundle.py photo.locaphoto RECIPIENT_SEED_HEX -o photo.jpg

RECIPIENT_SEED_HEX is the recipient's 32-byte Ed25519 seed in hex, or @FILE to read it from a
file (keeps it out of the process list). Without -o the plaintext goes to standard output.

Checks, in order: file size <= 512 MiB (before parsing), JSON shape, version, algorithm, base64,
field lengths, photo id, metadata limits, the sender's Ed25519 signature over the documented
signing input, that the bundle is addressed to the recipient, that the sealed box opens, that
encryptedData has originalSize bytes, and the AEAD tag. Exit status: 0 verified (plaintext
written), 1 the bundle is refused (message on stderr), 2 usage error.
"""

import argparse
import base64
import binascii
import hashlib
import json
import os
import re
import struct
import sys
import tempfile

try:
    import nacl.bindings as sodium
    import nacl.exceptions
    from nacl.public import PrivateKey, SealedBox
    from nacl.signing import VerifyKey
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"verify_bundle: needs PyNaCl and cryptography (pip install pynacl cryptography): {e}\n")
    sys.exit(2)

MAX_FILE_SIZE = 512 << 20
MAX_PHOTO_SIZE = 1 << 32
SIGNING_DOMAIN = b"LOCAFOTO-BUNDLE-SIG-V2\x00"
ALGORITHMS = {"chacha20-poly1305": 0x02, "aes-256-gcm": 0x01}
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
FORMAT_RE = re.compile(r"^[A-Z0-9]{1,16}$")
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


class Refused(Exception):
    """The bundle is not valid for this recipient."""


def luhn32(group):
    factor, total = 2, 0
    for c in reversed(group):
        addend = factor * B32.index(c)
        factor = 1 if factor == 2 else 2
        total += addend // 32 + addend % 32
    return B32[(32 - total % 32) % 32]


def fingerprint(public_key):
    digest = base64.b32encode(hashlib.sha256(public_key).digest()[:15]).decode("ascii")
    groups = [digest[i:i + 6] for i in range(0, 24, 6)]
    return "-".join(g + luhn32(g) for g in groups)


def signing_input(version, sender, recipient, photo_id, algorithm_byte, iv, encrypted_key, auth_tag,
                  original_size, fmt, capture_date, width, height, name):
    """The exact bytes the sender signs (formats.md, table "Signature")."""
    fields = [
        version.encode("utf-8"),
        sender,
        recipient,
        photo_id.encode("utf-8"),
        bytes([algorithm_byte]),
        iv,
        encrypted_key,
        auth_tag,
        struct.pack(">Q", original_size),
        fmt.encode("utf-8"),
        (capture_date or "").encode("utf-8"),
        b"" if width is None else struct.pack(">I", width),
        b"" if height is None else struct.pack(">I", height),
        (name or "").encode("utf-8"),
    ]
    out = bytearray(SIGNING_DOMAIN)
    for f in fields:
        out += struct.pack(">I", len(f)) + f
    return bytes(out)


def _b64(value, what, length=None):
    if not isinstance(value, str):
        raise Refused(f"{what} must be a base64 string")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(f"{what} is not valid base64") from None
    if length is not None and len(raw) != length:
        raise Refused(f"{what} must be {length} bytes, got {len(raw)}")
    return raw


def _obj(doc, key, what):
    v = doc.get(key)
    if not isinstance(v, dict):
        raise Refused(f"missing or invalid object '{what}'")
    return v


def _opt_int(meta, key, lo, hi):
    v = meta.get(key)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise Refused(f"metadata.{key} must be an integer in {lo}...{hi}")
    return v


def open_bundle(data, recipient_seed):
    """Verifies and decrypts; returns (plaintext, info dict). Raises Refused."""
    if len(data) > MAX_FILE_SIZE:
        raise Refused(f"bundle is {len(data)} bytes; the limit is {MAX_FILE_SIZE}")
    if not data:
        raise Refused("bundle file is empty")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Refused("not a .locaphoto bundle (invalid or truncated JSON)") from None
    if not isinstance(doc, dict):
        raise Refused("not a .locaphoto bundle (top level is not an object)")

    version = doc.get("version")
    if version != "2.0":
        raise Refused(f"bundle version {version!r} is not supported (this reader reads 2.0)")
    photo = _obj(doc, "photo", "photo")
    meta = _obj(doc, "metadata", "metadata")
    sender_obj = _obj(doc, "sender", "sender")
    recipient_obj = _obj(doc, "recipient", "recipient")

    algorithm = photo.get("algorithm")
    if algorithm not in ALGORITHMS:
        raise Refused(f"bundle algorithm {algorithm!r} is not supported")
    photo_id = photo.get("id")
    if not isinstance(photo_id, str) or not UUID_RE.match(photo_id):
        raise Refused("photo id is not a lowercase UUID")
    iv = _b64(photo.get("iv"), "photo.iv", 12)
    auth_tag = _b64(photo.get("authTag"), "photo.authTag", 16)
    encrypted_key = _b64(photo.get("encryptedKey"), "photo.encryptedKey", 80)
    sender = _b64(sender_obj.get("publicKey"), "sender.publicKey", 32)
    recipient = _b64(recipient_obj.get("publicKey"), "recipient.publicKey", 32)
    signature = _b64(doc.get("signature"), "signature", 64)

    size = meta.get("originalSize")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_PHOTO_SIZE:
        raise Refused(f"metadata.originalSize must be an integer in 0...{MAX_PHOTO_SIZE}")
    fmt = meta.get("format")
    if not isinstance(fmt, str) or not FORMAT_RE.match(fmt):
        raise Refused("metadata.format must be 1-16 characters A-Z 0-9")
    name = meta.get("name")
    if name is not None:
        if not isinstance(name, str) or len(name.encode("utf-8")) > 255 or "/" in name or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
            raise Refused("metadata.name is too long or contains '/' or control characters")
    capture_date = meta.get("captureDate")
    if capture_date is not None:
        if not isinstance(capture_date, str) or len(capture_date) != 20 or not capture_date.endswith("Z"):
            raise Refused("metadata.captureDate must look like 2025-11-15T10:30:00Z")
    width = _opt_int(meta, "width", 1, 1_000_000)
    height = _opt_int(meta, "height", 1, 1_000_000)

    message = signing_input(version, sender, recipient, photo_id, ALGORITHMS[algorithm], iv, encrypted_key,
                            auth_tag, size, fmt, capture_date, width, height, name)
    try:
        VerifyKey(sender).verify(message, signature)
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError, nacl.exceptions.TypeError):
        raise Refused("the signature does not verify: the bundle was altered or not made by its sender") from None

    claimed = sender_obj.get("fingerprint")
    computed = fingerprint(sender)
    if claimed is not None and claimed != computed:
        # Informational field (formats.md): not covered by the signature, so only a warning.
        sys.stderr.write(f"verify_bundle: warning: sender.fingerprint {claimed!r} is not {computed}\n")

    if len(recipient_seed) != 32:
        raise Refused("the recipient seed must be 32 bytes")
    own_pk, own_sk = sodium.crypto_sign_seed_keypair(recipient_seed)
    if recipient != own_pk:
        raise Refused("the bundle is addressed to another node")
    x25519_sk = sodium.crypto_sign_ed25519_sk_to_curve25519(own_sk)
    try:
        photo_key = SealedBox(PrivateKey(x25519_sk)).decrypt(encrypted_key)
    except nacl.exceptions.CryptoError:
        raise Refused("the photo key is not sealed to this node's key, or was altered") from None
    if len(photo_key) != 32:
        raise Refused("the sealed photo key is not 32 bytes")

    if "encryptedData" not in photo or photo["encryptedData"] is None:
        raise Refused("bundle has no encryptedData")
    ciphertext = _b64(photo["encryptedData"], "photo.encryptedData")
    if len(ciphertext) != size:
        raise Refused(f"bundle carries {len(ciphertext)} bytes of photo data, metadata says {size}")
    cipher = ChaCha20Poly1305(photo_key) if algorithm == "chacha20-poly1305" else AESGCM(photo_key)
    try:
        plaintext = cipher.decrypt(iv, ciphertext + auth_tag, None)
    except InvalidTag:
        raise Refused("the photo data does not match its authentication tag: it was altered") from None
    info = {"photo": photo_id, "sender": computed, "size": size, "format": fmt, "name": name}
    return plaintext, info


def _write(path, plaintext):
    if path == "-":
        sys.stdout.buffer.write(plaintext)
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".verify_bundle-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(plaintext)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    p = argparse.ArgumentParser(description="Verify and decrypt a .locaphoto bundle independently of Locafoto.")
    p.add_argument("bundle", help="the .locaphoto file")
    p.add_argument("seed", help="recipient Ed25519 seed, 64 hex digits, or @FILE holding them")
    p.add_argument("-o", "--output", default="-", help="where to write the plaintext photo (default: stdout)")
    args = p.parse_args(argv)

    seed_text = args.seed
    try:
        if seed_text.startswith("@"):
            with open(seed_text[1:], "r", encoding="ascii") as f:
                seed_text = f.read().strip()
        seed = bytes.fromhex(seed_text)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"verify_bundle: cannot read the recipient seed: {e}\n")
        return 2
    if len(seed) != 32:
        sys.stderr.write(f"verify_bundle: the recipient seed must be 32 bytes (64 hex digits), got {len(seed)}\n")
        return 2
    try:
        size = os.stat(args.bundle).st_size
        if size > MAX_FILE_SIZE:
            raise Refused(f"bundle is {size} bytes; the limit is {MAX_FILE_SIZE}")
        with open(args.bundle, "rb") as f:
            data = f.read(MAX_FILE_SIZE + 1)
    except OSError as e:
        sys.stderr.write(f"verify_bundle: cannot read {args.bundle}: {e.strerror}\n")
        return 2
    except Refused as e:
        sys.stderr.write(f"verify_bundle: REFUSED: {e}\n")
        return 1
    try:
        plaintext, info = open_bundle(data, seed)
    except Refused as e:
        sys.stderr.write(f"verify_bundle: REFUSED: {e}\n")
        return 1
    _write(args.output, plaintext)
    sys.stderr.write(
        f"verify_bundle: OK: photo {info['photo']} ({info['size']} bytes, {info['format']}) from {info['sender']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
