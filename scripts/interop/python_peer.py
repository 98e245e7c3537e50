#!/usr/bin/env python3
"""Independent Locafoto sender, written from protocol/*.md alone (no Swift code).

Speaks wire protocol 1 as the *sender* (Noise initiator):

    python3 scripts/interop/python_peer.py send --host 127.0.0.1 --port PORT \\
        --expect-fingerprint FP --name pypeer [--seed-file F] [--tamper tag|signature|data] FILE...
    python3 scripts/interop/python_peer.py fingerprint --seed-file F
    python3 scripts/interop/python_peer.py self-test [--vectors protocol/vectors/handshake.json]

`self-test` runs this peer's HELLO checks and name sanitizing on every `helloChecks` case of
protocol/vectors/handshake.json, and its handshake (as initiator, with the vector's keys) against
the complete cases and the message-2 identity mismatch, byte for byte, over a socket pair.

Stack (protocol/README.md): TCP -> frames (u16 BE length ‖ Noise message, framing.md) ->
Noise_XX_25519_ChaChaPoly_BLAKE2b with prologue "LOCAFOTO/1" and HELLO payloads (handshake.md)
-> wire messages (type byte ‖ body, messages.md) -> per-photo bundle crypto (formats.md).

Needs: pip install noiseprotocol pynacl cryptography (and regex, for exact grapheme clusters in
HELLO names; without it a built-in approximation is used)

Exit status of `send`: 0 every item imported/queued; 1 the offer was rejected/expired or an item
failed; 2 protocol error (bad/unexpected message, ERROR from the peer, connection lost, I/O);
3 the peer's identity is refused (pinning failed or HELLO key does not match the Noise static key).
"""

import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time
import unicodedata
import uuid
import warnings

try:
    import nacl.bindings as sodium
    from nacl.public import PublicKey, SealedBox
    from nacl.signing import SigningKey
    from noise.connection import Keypair, NoiseConnection
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"python_peer: needs noiseprotocol, pynacl and cryptography "
                     f"(python3 -m pip install noiseprotocol pynacl cryptography): {e}\n")
    sys.exit(2)

# --- constants from the spec ---------------------------------------------------------------

NOISE_NAME = b"Noise_XX_25519_ChaChaPoly_BLAKE2b"      # handshake.md "Protocol"
PROLOGUE = b"LOCAFOTO/1"                                # handshake.md "Prologue"
assert PROLOGUE.hex() == "4c4f4341464f544f2f31"
DHLEN = 32
TAGLEN = 16
MAX_FRAME = 65535                                       # framing.md
MAX_PLAINTEXT = MAX_FRAME - TAGLEN                      # 65519: type byte + body
MAX_BODY = MAX_PLAINTEXT - 1                            # 65518
MAX_HELLO = 4096
MAX_HANDSHAKE_FRAME = 4160                              # framing.md: before the handshake has ended
MAX_NAME = 63                                           # handshake.md "HELLO payload"
PIECE = 65024                                           # messages.md ITEM_DATA
MAX_ITEMS_PER_OFFER_MSG = 128
IDLE_TIMEOUT = 60.0                                     # framing.md: SHOULD close after 60 s

OFFER, DECISION, ITEM_START, ITEM_DATA, ITEM_END, ITEM_RESULT, ERROR, PING, PONG, DONE = range(1, 11)
TYPE_NAMES = {1: "OFFER", 2: "DECISION", 3: "ITEM_START", 4: "ITEM_DATA", 5: "ITEM_END",
              6: "ITEM_RESULT", 7: "ERROR", 8: "PING", 9: "PONG", 10: "DONE"}
ERROR_CODES = ["unknown", "protocol_violation", "unsupported_version", "refused_by_policy",
               "rate_limited", "too_large", "expired", "unknown_offer", "bad_signature",
               "decrypt_failed", "unsupported_content", "size_mismatch", "hash_mismatch",
               "storage_failed", "cancelled", "internal_error", "identity_mismatch"]

SIGNING_DOMAIN = b"LOCAFOTO-BUNDLE-SIG-V2\x00"          # formats.md "Signature" (22 chars + NUL)
ALGORITHM = "chacha20-poly1305"
ALGORITHM_BYTE = 0x02
BUNDLE_VERSION = "2.0"

B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

EXIT_OK, EXIT_REFUSED, EXIT_PROTOCOL, EXIT_IDENTITY = 0, 1, 2, 3


class ProtocolError(Exception):
    def __init__(self, message, code="protocol_violation"):
        super().__init__(message)
        self.code = code


class IdentityError(Exception):
    code = "identity_mismatch"


def code_name(code):
    if isinstance(code, int) and 0 <= code < len(ERROR_CODES):
        return ERROR_CODES[code]
    return "unknown"


VERBOSE = False


def trace(msg):
    if VERBOSE:
        log(msg)


def log(msg):
    sys.stderr.write(f"python_peer: {msg}\n")
    sys.stderr.flush()


# --- fingerprints (formats.md "Fingerprint") -------------------------------------------------

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


def parse_fingerprint(text):
    # ASCII-only case folding: str.upper() would map e.g. U+017F (long s) to "S"
    s = "".join(ch for ch in text if ch not in " -")
    if not s.isascii():
        raise ValueError(f"not a fingerprint (non-ASCII): {text!r}")
    s = s.upper()
    if len(s) != 28 or any(ch not in B32 for ch in s):
        raise ValueError(f"not a fingerprint: {text!r}")
    groups = [s[i:i + 7] for i in range(0, 28, 7)]
    for g in groups:
        if luhn32(g[:6]) != g[6]:
            raise ValueError(f"fingerprint check character wrong in group {g}: {text!r}")
    return "-".join(groups)


# --- HELLO (handshake.md "HELLO payload", "Identity binding"; messages.md "Peer text") ---------

def is_unsafe(ch):
    """messages.md "Peer text": Cc, Zl, Zp, and Cf except the joiners U+200C, U+200D and the tag
    characters U+E0020-U+E007F. (Cs too: a Python str can hold a lone surrogate, from a \\ud800
    escape in the JSON, which is no Unicode scalar and cannot be shown.)"""
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Zl", "Zp", "Cs"):
        return True
    if cat == "Cf":
        return not (ch in "\u200c\u200d" or 0xE0020 <= ord(ch) <= 0xE007F)
    return False


try:
    import regex as _regex  # extended grapheme clusters (UAX #29) as \X

    def graphemes(text):
        return _regex.findall(r"\X", text)

    GRAPHEMES_BY = "the regex module"
except ImportError:
    GRAPHEMES_BY = "the built-in approximation"

    def _extends(ch):
        # What continues a character: combining marks (variation selectors among them), the
        # joiners, emoji modifiers and tag characters (UAX #29 Extend, ZWJ, SpacingMark).
        return unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch in "\u200c\u200d" \
            or 0x1F3FB <= ord(ch) <= 0x1F3FF or 0xE0020 <= ord(ch) <= 0xE007F

    def _regional(ch):
        return 0x1F1E6 <= ord(ch) <= 0x1F1FF

    def graphemes(text):
        """Extended grapheme clusters without the `regex` module, close enough for names: a
        character with what extends it, a ZWJ joining the next symbol, regional indicators in
        pairs, CR LF, Hangul jamo runs."""
        out, i = [], 0
        while i < len(text):
            j = i + 1
            if text[i] == "\r" and text[j:j + 1] == "\n":
                j += 1
            elif _regional(text[i]) and j < len(text) and _regional(text[j]):
                j += 1
            elif 0x1100 <= ord(text[i]) <= 0x11FF or 0xAC00 <= ord(text[i]) <= 0xD7A3:
                while j < len(text) and 0x1160 <= ord(text[j]) <= 0x11FF:
                    j += 1
            while j < len(text):
                if _extends(text[j]):
                    j += 1
                elif text[j - 1] == "\u200d" and unicodedata.category(text[j]) == "So":
                    j += 1
                else:
                    break
            out.append(text[i:j])
            i = j
        return out


def is_white_space(ch):
    return ch == "\t" or unicodedata.category(ch) == "Zs"


def sanitize_name(raw):
    """handshake.md "HELLO payload", in its order: drop the unsafe scalars; keep the longest prefix
    of whole characters (extended grapheme clusters) whose UTF-8 is at most 63 bytes; trim white
    space (Zs, TAB) at both ends; `unnamed` if nothing is left. Never refused."""
    kept = "".join(ch for ch in raw if not is_unsafe(ch))
    out, size = "", 0
    for g in graphemes(kept):
        n = len(g.encode("utf-8", "surrogatepass"))
        if size + n > MAX_NAME:
            break
        out, size = out + g, size + n
    start, end = 0, len(out)
    while start < end and is_white_space(out[start]):
        start += 1
    while end > start and is_white_space(out[end - 1]):
        end -= 1
    return out[start:end] or "unnamed"


STANDARD_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def is_standard_base64(text):
    """Standard alphabet with its `=` padding: a multiple of 4 characters, at most two `=`, at the end."""
    body = text.rstrip("=")
    return len(text) % 4 == 0 and len(text) - len(body) <= 2 and all(c in STANDARD_BASE64 for c in body)


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_hello(raw, remote_static):
    """A peer's HELLO as handshake.md has a receiver check it, in the order of its table, then the
    identity binding against `remote_static` (the X25519 key the Noise handshake authenticated).
    Returns what the receiver learns; raises ProtocolError (with .code protocol_violation or
    unsupported_version) or IdentityError (identity_mismatch): the handshake is then aborted."""
    if len(raw) > MAX_HELLO:
        raise ProtocolError(f"HELLO of {len(raw)} bytes, over {MAX_HELLO}")
    try:
        hello = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolError("HELLO is not JSON in UTF-8")
    if not isinstance(hello, dict):
        raise ProtocolError("HELLO is not a JSON object")
    v = hello.get("v")
    # A JSON number whose value is an integer in the signed 64-bit range (1.0 and 1e0 are 1).
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()) \
            or not -2 ** 63 <= v < 2 ** 63:
        raise ProtocolError(f"HELLO v is {v!r}, not an integer")
    key = hello.get("ed25519")
    if not isinstance(key, str) or not is_standard_base64(key):
        raise ProtocolError("HELLO ed25519 is not standard base64 with padding")
    name = hello.get("name")
    if not isinstance(name, str):
        raise ProtocolError("HELLO name is missing or not a string")
    caps = hello.get("caps")
    if caps is None:
        caps = []
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
        raise ProtocolError("HELLO caps is not a list of strings")
    if v != 1:
        raise ProtocolError(f"the peer speaks protocol version {int(v)}, this peer 1", code="unsupported_version")
    public = base64.b64decode(key, validate=True)
    if len(public) != 32:
        raise ProtocolError(f"HELLO ed25519 key of {len(public)} bytes, not 32")
    try:
        x25519 = sodium.crypto_sign_ed25519_pk_to_curve25519(public)
    except Exception:
        raise IdentityError("identity_mismatch: the HELLO Ed25519 key has no X25519 form")
    if x25519 != remote_static:
        raise IdentityError("identity_mismatch: the HELLO Ed25519 key does not match the Noise static key")
    return {"ed25519Public": public.hex(), "fingerprint": fingerprint(public), "name": sanitize_name(name),
            "caps": list(caps)}


# --- identity ------------------------------------------------------------------------------

class Identity:
    def __init__(self, seed):
        if len(seed) != 32:
            raise ValueError("an Ed25519 seed is 32 bytes")
        self.signing = SigningKey(seed)
        self.public = bytes(self.signing.verify_key)
        sk64 = seed + self.public  # libsodium's secret key layout
        self.x25519_private = sodium.crypto_sign_ed25519_sk_to_curve25519(sk64)
        self.x25519_public = sodium.crypto_sign_ed25519_pk_to_curve25519(self.public)
        self.fingerprint = fingerprint(self.public)

    @classmethod
    def load_or_create(cls, path):
        if path is None:
            return cls(os.urandom(32))
        if os.path.exists(path):
            with open(path, "rb") as f:
                seed = f.read()
            if len(seed) != 32:
                raise ValueError(f"{path}: a seed file holds exactly 32 bytes, found {len(seed)}")
            return cls(seed)
        seed = os.urandom(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(seed)
        return cls(seed)


# --- content (formats.md "Content hash and content type") -------------------------------------

HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"}
AVIF_BRANDS = {b"avif", b"avis"}
HEIF_BRANDS = {b"mif1", b"msf1"}


def sniff(head):
    head = head[:32]
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"GIF87a") or head.startswith(b"GIF89a"):
        return "gif"
    if head.startswith(b"II*\x00") or head.startswith(b"MM\x00*"):
        return "tiff"
    if len(head) >= 12 and head[0:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if len(head) >= 12 and head[4:8] == b"ftyp":
        # major brand at 8, minor version at 12, compatible brands from 16 (within 32 bytes)
        brands = {head[8:12]}
        brands.update(head[i:i + 4] for i in range(16, len(head) - 3, 4))
        if brands & HEIC_BRANDS:
            return "heic"
        if brands & AVIF_BRANDS:
            return "avif"
        if brands & HEIF_BRANDS:
            return "heif"
    return None


def content_hash(data):
    return hashlib.blake2b(data, digest_size=32).hexdigest()


# --- bundle signing input (formats.md "Signature") --------------------------------------------

def signing_input(sender_pk, recipient_pk, photo_id, iv, encrypted_key, auth_tag, metadata):
    def u32(n):
        return struct.pack(">I", n)

    cd = metadata.get("captureDate")
    w = metadata.get("width")
    h = metadata.get("height")
    name = metadata.get("name")
    fields = [
        BUNDLE_VERSION.encode("utf-8"),
        sender_pk,
        recipient_pk,
        photo_id.encode("utf-8"),
        bytes([ALGORITHM_BYTE]),
        iv,
        encrypted_key,
        auth_tag,
        struct.pack(">Q", metadata["originalSize"]),
        metadata["format"].encode("utf-8"),
        cd.encode("utf-8") if cd is not None else b"",
        u32(w) if w is not None else b"",
        u32(h) if h is not None else b"",
        name.encode("utf-8") if name is not None else b"",
    ]
    return SIGNING_DOMAIN + b"".join(u32(len(f)) + f for f in fields)


# --- framing + Noise -------------------------------------------------------------------------

def b64(data):
    return base64.b64encode(data).decode("ascii")


def jdump(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Session:
    """One TCP connection: frames, Noise handshake (initiator), transport messages."""

    def __init__(self, sock, identity, name):
        self.sock = sock
        self.identity = identity
        self.name = name
        self.noise = None
        self.write_lock = threading.Lock()
        self.peer_public = None
        self.peer_name = None
        self.peer_fingerprint = None

    # frames
    def _recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed by the peer")
            buf += chunk
        return bytes(buf)

    def recv_frame(self, limit=MAX_FRAME):
        (length,) = struct.unpack(">H", self._recv_exact(2))
        if length == 0:
            raise ProtocolError("frame of length 0")
        if length > limit:  # framing.md: refused before reading it
            raise ProtocolError(f"a frame of {length} bytes before the handshake has ended (at most {limit})")
        return self._recv_exact(length)

    def send_frame(self, payload):
        if not 1 <= len(payload) <= MAX_FRAME:
            raise ProtocolError(f"frame of {len(payload)} bytes cannot be sent")
        self.sock.sendall(struct.pack(">H", len(payload)) + payload)

    # handshake
    def handshake(self, expect_fingerprint, ephemeral=None, hello=None):
        """Noise XX as initiator (handshake.md). Any refusal raises before anything more is sent
        (the caller closes the connection: "Aborting"). `ephemeral` (an X25519 private key) and
        `hello` (the payload of message 3) are for the test vectors only."""
        n = NoiseConnection.from_name(NOISE_NAME)
        n.set_as_initiator()
        n.set_prologue(PROLOGUE)
        n.set_keypair_from_private_bytes(Keypair.STATIC, self.identity.x25519_private)
        if ephemeral is not None:
            n.set_keypair_from_private_bytes(Keypair.EPHEMERAL, ephemeral)
        n.start_handshake()

        # -> e   (payload empty)
        msg1 = n.write_message(b"")
        assert len(msg1) == DHLEN
        self.send_frame(msg1)

        # <- e, ee, s, es   (payload: responder HELLO, encrypted)
        msg2 = self.recv_frame(limit=MAX_HANDSHAKE_FRAME)
        if len(msg2) < DHLEN + DHLEN + TAGLEN + TAGLEN:
            raise ProtocolError(f"handshake message 2 too short ({len(msg2)} bytes)")
        try:
            hello_bytes = n.read_message(msg2)
        except Exception as e:  # decryption failure: abort
            raise ProtocolError(f"handshake message 2 does not decrypt: {e!r}")
        rs = n.noise_protocol.handshake_state.rs.public_bytes
        # HELLO checks and identity binding (handshake.md): pk_to_curve25519(hello.ed25519) == rs
        peer = parse_hello(hello_bytes, rs)
        self.peer_public = bytes.fromhex(peer["ed25519Public"])
        self.peer_name = peer["name"]
        self.peer_caps = peer["caps"]
        self.peer_fingerprint = peer["fingerprint"]
        self.peer_learned = peer

        # pinning (handshake.md "Pinning"): check before sending anything else (not even msg 3)
        if expect_fingerprint is not None and self.peer_fingerprint != expect_fingerprint:
            raise IdentityError(f"pinning failed: expected {expect_fingerprint}, "
                                f"the peer proved {self.peer_fingerprint} (name {self.peer_name!r})")

        # -> s, se   (payload: our HELLO)
        our_hello = hello if hello is not None else \
            jdump({"v": 1, "ed25519": b64(self.identity.public), "name": self.name, "caps": []})
        assert len(our_hello) <= MAX_HELLO
        self.send_frame(n.write_message(our_hello))
        if not n.handshake_finished:
            raise ProtocolError("handshake did not finish after three messages")
        self.handshake_hash = n.get_handshake_hash()
        self.noise = n

    # transport messages
    def send(self, mtype, body=b""):
        if isinstance(body, dict):
            body = jdump(body)
        plaintext = bytes([mtype]) + body
        if len(plaintext) > MAX_PLAINTEXT:
            raise ProtocolError(f"{TYPE_NAMES[mtype]} of {len(plaintext)} bytes does not fit a transport message")
        with self.write_lock:
            self.send_frame(self.noise.encrypt(plaintext))
        trace(f"-> {TYPE_NAMES[mtype]} ({len(body)} bytes)")

    def recv(self):
        frame = self.recv_frame()
        if len(frame) < TAGLEN + 1:
            raise ProtocolError(f"transport frame of {len(frame)} bytes")
        try:
            pt = self.noise.decrypt(frame)
        except Exception as e:
            raise ProtocolError(f"transport message does not decrypt: {e!r}")
        mtype, body = pt[0], pt[1:]
        trace(f"<- {TYPE_NAMES.get(mtype, hex(mtype))} ({len(body)} bytes)")
        if mtype not in TYPE_NAMES:
            raise ProtocolError(f"unknown message type 0x{mtype:02x}")
        if mtype in (PING, PONG):
            if body:
                raise ProtocolError(f"{TYPE_NAMES[mtype]} with a body")
            return mtype, None
        if mtype == ITEM_DATA:
            raise ProtocolError("ITEM_DATA sent to the sender")
        try:
            obj = json.loads(body.decode("utf-8"))
        except Exception:
            raise ProtocolError(f"{TYPE_NAMES[mtype]} body is not UTF-8 JSON")
        if not isinstance(obj, dict):
            raise ProtocolError(f"{TYPE_NAMES[mtype]} body is not a JSON object")
        return mtype, obj


# --- the sender ----------------------------------------------------------------------------

class Item:
    def __init__(self, index, path):
        self.index = index
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        self.kind = sniff(self.data[:32])
        if self.kind is None:
            raise ValueError(f"{path}: not a supported image (sniffed from its first bytes)")
        self.name = os.path.basename(path)
        nb = self.name.encode("utf-8")
        if not 1 <= len(nb) <= 255 or self.name in (".", "..") or "\\" in self.name \
                or any(not ch.isprintable() for ch in self.name):
            raise ValueError(f"{path}: the file name cannot be offered")
        self.id = str(uuid.uuid4())
        self.size = len(self.data)
        self.hash = content_hash(self.data)

    def offer_entry(self, with_hash=True):
        entry = {"id": self.id, "name": self.name, "kind": self.kind, "size": self.size}
        if with_hash:  # optional only to a receiver that announced cap late-hash (handshake.md)
            entry["hash"] = self.hash
        return entry


def offer_messages(offer_id, items, with_hashes=True):
    """Split the offer into OFFER bodies of <= 128 items that each fit one transport message."""
    total_items = len(items)
    total_bytes = sum(it.size for it in items)
    bodies, current = [], []

    def body(entries, more):
        return {"offer": offer_id, "items": entries, "more": more,
                "totalItems": total_items, "totalBytes": total_bytes}

    for it in items:
        candidate = current + [it.offer_entry(with_hashes)]
        if len(candidate) > MAX_ITEMS_PER_OFFER_MSG or len(jdump(body(candidate, True))) > MAX_BODY:
            bodies.append(body(current, True))
            current = [it.offer_entry(with_hashes)]
        else:
            current = candidate
    bodies.append(body(current, False))
    return bodies


class ResultReader(threading.Thread):
    """Reads ITEM_RESULT / PING / ERROR while the main thread sends (framing.md back-pressure)."""

    def __init__(self, session, offer_id, n_items):
        super().__init__(daemon=True)
        self.session = session
        self.offer_id = offer_id
        self.n_items = n_items
        self.results = {}
        self.error = None          # (exit status, message)
        self.closed = False
        self.cond = threading.Condition()

    def run(self):
        s = self.session
        try:
            while True:
                with self.cond:
                    if len(self.results) >= self.n_items:
                        break
                mtype, obj = s.recv()
                if mtype == PING:
                    s.send(PONG)
                elif mtype == PONG:
                    pass
                elif mtype == ITEM_RESULT:
                    self._result(obj)
                elif mtype == ERROR:
                    code = obj.get("code")
                    raise ProtocolError(f"peer sent ERROR {code} ({code_name(code)}): {obj.get('message')}")
                else:
                    raise ProtocolError(f"unexpected {TYPE_NAMES[mtype]} while sending")
        except ProtocolError as e:
            self._fail(str(e))
        except (ConnectionError, OSError) as e:
            with self.cond:
                self.closed = True
                if len(self.results) < self.n_items and self.error is None:
                    self.error = (EXIT_PROTOCOL, f"connection lost: {e}")
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _result(self, obj):
        item = obj.get("item")
        status = obj.get("status")
        if obj.get("offer") != self.offer_id:
            raise ProtocolError(f"ITEM_RESULT for another offer {obj.get('offer')!r}")
        if not isinstance(item, int) or isinstance(item, bool) or not 0 <= item < self.n_items:
            raise ProtocolError(f"ITEM_RESULT with a bad item index {item!r}")
        if status not in ("imported", "queued", "failed"):
            raise ProtocolError(f"ITEM_RESULT with unknown status {status!r}")
        with self.cond:
            if item in self.results:
                raise ProtocolError(f"second ITEM_RESULT for item {item}")
            self.results[item] = obj
            self.cond.notify_all()

    def _fail(self, msg):
        with self.cond:
            if self.error is None:
                self.error = (EXIT_PROTOCOL, msg)
            self.cond.notify_all()

    def wait_all(self, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.results) < self.n_items and self.error is None and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return len(self.results) >= self.n_items

    def has_error(self):
        with self.cond:
            return self.error is not None


def await_decision(session, offer_id, decision_timeout):
    """Wait for DECISION, answering PING with PONG (framing.md keepalive)."""
    deadline = None if decision_timeout is None else time.monotonic() + decision_timeout
    while True:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("no decision in time")
        mtype, obj = session.recv()
        if mtype == PING:
            session.send(PONG)
            continue
        if mtype == PONG:
            continue
        if mtype == ERROR:
            code = obj.get("code")
            raise ProtocolError(f"peer sent ERROR {code} ({code_name(code)}): {obj.get('message')}")
        if mtype != DECISION:
            raise ProtocolError(f"expected DECISION, got {TYPE_NAMES[mtype]}")
        if obj.get("offer") != offer_id:
            raise ProtocolError(f"DECISION for another offer {obj.get('offer')!r}")
        if obj.get("decision") not in ("accepted", "rejected", "expired"):
            raise ProtocolError(f"DECISION with unknown value {obj.get('decision')!r}")
        return obj


def send_item(session, identity, offer_id, item, tamper, piece_size=PIECE, violate=False):
    key = os.urandom(32)
    iv = os.urandom(12)
    # photo key sealed to the receiver's X25519 key (formats.md "Key sealing")
    recipient_x = sodium.crypto_sign_ed25519_pk_to_curve25519(session.peer_public)
    encrypted_key = SealedBox(PublicKey(recipient_x)).encrypt(key)
    assert len(encrypted_key) == 80
    sealed = ChaCha20Poly1305(key).encrypt(iv, item.data, None)
    ciphertext, tag = bytearray(sealed[:-16]), sealed[-16:]
    assert len(ciphertext) == item.size

    metadata = {"originalSize": item.size, "format": item.kind.upper(), "name": item.name,
                "captureDate": None, "width": None, "height": None}
    photo_id = str(uuid.uuid4())

    if tamper == "tag":
        tag = bytes([tag[0] ^ 0x01]) + tag[1:]          # signed as is: the signature still verifies
    if tamper == "data" and ciphertext:
        ciphertext[len(ciphertext) // 2] ^= 0x80        # the tag (and signature) are of the original
    sig = identity.signing.sign(signing_input(identity.public, session.peer_public, photo_id, iv,
                                              encrypted_key, tag, metadata)).signature
    if tamper == "signature":
        sig = bytes([sig[0] ^ 0x01]) + sig[1:]

    session.send(ITEM_START, {"offer": offer_id, "item": item.index, "photo": photo_id,
                              "algorithm": ALGORITHM, "iv": b64(iv), "encryptedKey": b64(encrypted_key),
                              "offset": 0, "metadata": metadata})
    offset = 0
    ct = bytes(ciphertext)
    while offset < len(ct):
        piece = ct[offset:offset + piece_size]
        if violate and offset >= len(ct) // 2:
            # A gap in the ciphertext: messages.md ITEM_DATA makes it a fatal protocol_violation.
            session.send(ITEM_DATA, struct.pack(">IQ", item.index, offset + 1) + piece)
            return
        session.send(ITEM_DATA, struct.pack(">IQ", item.index, offset) + piece)
        offset += len(piece)
    session.send(ITEM_END, {"offer": offer_id, "item": item.index, "authTag": b64(tag), "signature": b64(sig)})


def cmd_send(args):
    try:
        expect = parse_fingerprint(args.expect_fingerprint) if args.expect_fingerprint else None
    except ValueError as e:
        log(str(e))
        return EXIT_IDENTITY
    if expect is None and not args.no_pin:
        log("--expect-fingerprint is required (or --no-pin)")
        return EXIT_PROTOCOL
    name = args.name
    if not 1 <= len(name.encode("utf-8")) <= 63 or any(not ch.isprintable() for ch in name):
        log("--name must be 1-63 bytes of UTF-8 without control characters")
        return EXIT_PROTOCOL
    identity = Identity.load_or_create(args.seed_file)
    print(f"fingerprint: {identity.fingerprint}", flush=True)

    try:
        items = [Item(i, p) for i, p in enumerate(args.files)]
    except (OSError, ValueError) as e:
        log(str(e))
        return EXIT_PROTOCOL
    if not 1 <= args.piece_size <= MAX_PLAINTEXT - 13:
        log(f"--piece-size must be 1..{MAX_PLAINTEXT - 13}")
        return EXIT_PROTOCOL
    if args.tamper and not 0 <= args.tamper_item < len(items):
        log("--tamper-item out of range")
        return EXIT_PROTOCOL

    try:
        sock = socket.create_connection((args.host, args.port), timeout=args.connect_timeout)
    except OSError as e:
        log(f"cannot connect to {args.host}:{args.port}: {e}")
        return EXIT_PROTOCOL
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(IDLE_TIMEOUT)
    session = Session(sock, identity, name)
    reader = None
    try:
        try:
            session.handshake(expect)
        except IdentityError as e:
            log(f"REFUSED: {e}")
            print(f"refused: {e}", flush=True)
            return EXIT_IDENTITY
        print(f"connected: {session.peer_name} {session.peer_fingerprint}", flush=True)

        offer_id = args.offer_id or str(uuid.uuid4())
        if args.declare_kind:  # negative tests: an offer that says another type than the content
            for item in items:
                item.kind = args.declare_kind
        if args.offer_id:
            # The same offer again (messages.md "Re-offer"): same item ids, names and order. This
            # peer announces no cap `resume`, so it sends every item from 0 and the receiver must
            # not commit an item twice.
            for item in items:
                item.id = str(uuid.uuid5(uuid.UUID(offer_id), str(item.index)))
        if args.omit_hashes and "late-hash" not in session.peer_caps:
            log("--omit-hashes: the receiver did not announce cap late-hash; it needs the hashes")
            return EXIT_PROTOCOL
        for body in offer_messages(offer_id, items, with_hashes=not args.omit_hashes):
            session.send(OFFER, body)
        if args.omit_hashes:
            print("hashes: omitted (receiver announced late-hash)", flush=True)
        print(f"offer: {offer_id} ({len(items)} items, {sum(i.size for i in items)} bytes)", flush=True)

        decision = await_decision(session, offer_id, args.decision_timeout)
        verdict = decision["decision"]
        if verdict != "accepted":
            code = decision.get("code")
            print(f"decision: {verdict} code={code} ({code_name(code) if code is not None else '-'}) "
                  f"message={decision.get('message')!r}", flush=True)
            return EXIT_REFUSED
        print("decision: accepted", flush=True)

        reader = ResultReader(session, offer_id, len(items))
        reader.start()
        # "Items are sent one at a time, in any order, each at most once" (messages.md)
        for item in (reversed(items) if args.reverse else items):
            if reader.has_error():
                break
            send_item(session, identity, offer_id, item,
                      args.tamper if (args.tamper and item.index == args.tamper_item) else None,
                      args.piece_size, violate=item.index == args.gap_in_item)
            if item.index == args.gap_in_item:
                break
        if not reader.has_error():
            session.send(DONE, {"offer": offer_id})
        reader.wait_all(args.result_timeout)

        status = EXIT_OK
        for item in items:
            r = reader.results.get(item.index)
            if r is None:
                print(f"item {item.index} {item.name}: no result", flush=True)
                status = max(status, EXIT_PROTOCOL)
                continue
            code = r.get("code")
            extra = f" photo={r.get('photo')}" if r.get("photo") else ""
            if r["status"] == "failed":
                extra += f" code={code} ({code_name(code)}) message={r.get('message')!r}"
                status = max(status, EXIT_REFUSED)
            print(f"item {item.index} {item.name}: {r['status']}{extra}", flush=True)
        if reader.error is not None:
            log(reader.error[1])
            status = max(status, reader.error[0])
        return status
    except ProtocolError as e:
        log(f"protocol error ({e.code}): {e}")
        return EXIT_PROTOCOL
    except (ConnectionError, OSError, TimeoutError) as e:
        log(f"connection error: {e!r}")
        return EXIT_PROTOCOL
    finally:
        try:
            sock.close()
        except OSError:
            pass


def cmd_fingerprint(args):
    created = not os.path.exists(args.seed_file)
    identity = Identity.load_or_create(args.seed_file)
    if created:
        log(f"created a new identity in {args.seed_file}")
    print(f"fingerprint: {identity.fingerprint}")
    return EXIT_OK


# --- self-test against protocol/vectors/handshake.json ----------------------------------------

def pairing_code(handshake_hash):
    """handshake.md "Pairing code"."""
    d = hashlib.blake2b(b"LOCAFOTO-PAIRING-V1" + handshake_hash, digest_size=32).digest()
    digits = "%06d" % (int.from_bytes(d[:4], "big") % 1_000_000)
    return digits[:3] + " " + digits[3:]


def _responder_script(sock, steps, problems):
    """Plays the vector's responder on the other end of a socket pair: ('expect', frame) reads
    and compares one frame, ('send', frame) writes one, ('eof', None) expects the connection to
    close with nothing more written."""
    try:
        for step, frame in steps:
            if step == "send":
                sock.sendall(frame)
            elif step == "expect":
                got = b""
                while len(got) < len(frame):
                    chunk = sock.recv(len(frame) - len(got))
                    if not chunk:
                        break
                    got += chunk
                if got != frame:
                    problems.append(f"expected frame {frame.hex()[:48]}..., got {got.hex()[:48]}...")
                    return
            else:
                rest = sock.recv(65536)
                if rest:
                    problems.append(f"{len(rest)} more bytes written after the abort: {rest.hex()[:48]}...")
    except OSError as e:
        problems.append(f"responder: {e!r}")
    finally:
        sock.close()


def _run_initiator(case, party, pin, responder_steps, problems):
    """Runs this peer's Session.handshake with the vector's keys and HELLO, pinned to `pin`,
    against the scripted responder; returns (session, error raised or None, socket, thread)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(10)
    theirs.settimeout(10)
    t = threading.Thread(target=_responder_script, args=(theirs, responder_steps, problems), daemon=True)
    t.start()
    identity = Identity(bytes.fromhex(party["ed25519Seed"]))
    for key, mine in [("ed25519Public", identity.public), ("x25519StaticPrivate", identity.x25519_private),
                      ("x25519StaticPublic", identity.x25519_public)]:
        if party[key] != mine.hex():
            problems.append(f"{case}: {key} derived from the seed differs")
    session = Session(ours, identity, party["name"])
    error = None
    try:
        session.handshake(pin, ephemeral=bytes.fromhex(party["ephemeralPrivate"]), hello=bytes.fromhex(party["hello"]))
    except (ProtocolError, IdentityError) as e:
        error = e
    return session, error, ours, t


def self_test(path):
    with open(path, encoding="utf-8") as f:
        vectors = json.load(f)
    # noiseprotocol warns when an ephemeral key is set: fixed ephemerals are what vectors are.
    warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")
    problems = []
    checks = vectors["helloChecks"]
    for c in checks:
        try:
            learned = parse_hello(bytes.fromhex(c["hello"]), bytes.fromhex(c["remoteStatic"]))
            got = "learns " + json.dumps(learned, sort_keys=True, ensure_ascii=False)
        except (ProtocolError, IdentityError) as e:
            got = "error " + e.code
        want = ("learns " + json.dumps(c["learns"], sort_keys=True, ensure_ascii=False)) if "learns" in c \
            else "error " + c["error"]
        if got != want:
            problems.append(f"helloChecks {c['name']!r}: {got}, expected {want}")

    for case in vectors["cases"]:
        name = case["name"]
        m = case["messages"]
        steps = [("expect", bytes.fromhex(m[0]["frame"])), ("send", bytes.fromhex(m[1]["frame"])),
                 ("expect", bytes.fromhex(m[2]["frame"]))]
        steps += [("expect" if t["from"] == "initiator" else "send", bytes.fromhex(t["frame"])) for t in case["transport"]]
        session, error, sock, thread = _run_initiator(name, case["initiator"], case["responder"]["fingerprint"], steps,
                                                      problems)
        try:
            if error is not None:
                problems.append(f"{name}: the handshake failed: {error}")
                continue
            learned = {k: session.peer_learned[k] for k in ("ed25519Public", "fingerprint", "name", "caps")}
            if learned != case["initiatorLearns"]:
                problems.append(f"{name}: learned {learned}, expected {case['initiatorLearns']}")
            if session.handshake_hash.hex() != case["handshakeHash"]:
                problems.append(f"{name}: handshake hash differs")
            if pairing_code(session.handshake_hash) != case["pairingCode"]:
                problems.append(f"{name}: pairing code {pairing_code(session.handshake_hash)}, expected {case['pairingCode']}")
            for t in case["transport"]:
                plaintext = bytes.fromhex(t["plaintext"])
                if t["from"] == "initiator":
                    session.send(plaintext[0], plaintext[1:])
                else:
                    mtype, body = session.recv()
                    want = None if len(plaintext) == 1 else json.loads(plaintext[1:])
                    if mtype != plaintext[0] or body != want:
                        problems.append(f"{name}: transport {t['type']} read as {mtype} {body!r}")
        except (ProtocolError, OSError) as e:
            problems.append(f"{name}: {e!r}")
        finally:
            sock.close()
            thread.join(10)

    mismatches = 0
    for case in vectors["identityMismatch"]:
        if case["detectedBy"] != "initiator":
            continue  # this peer is an initiator only: it never reads message 3
        mismatches += 1
        m = case["messages"]
        steps = [("expect", bytes.fromhex(m[0]["frame"])), ("send", bytes.fromhex(m[1]["frame"])), ("eof", None)]
        # Not pinned: the HELLO's key is refused by the identity binding, before any pinning.
        session, error, sock, thread = _run_initiator(case["name"], case["initiator"], None, steps, problems)
        if error is None or error.code != case["error"]:
            problems.append(f"{case['name']}: {error!r}, expected {case['error']}")
        sock.close()  # the abort: nothing more is sent
        thread.join(10)

    for p in problems:
        log(f"self-test: {p}")
    print(f"self-test: {len(checks)} HELLO checks, {len(vectors['cases'])} complete handshakes, {mismatches} "
          f"identity mismatch(es) of {os.path.relpath(path)}: {'FAILED' if problems else 'ok'}"
          f" (grapheme clusters by {GRAPHEMES_BY})")
    return EXIT_PROTOCOL if problems else EXIT_OK


def main(argv=None):
    p = argparse.ArgumentParser(description="Independent Locafoto protocol-1 sender")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send", help="offer files to a Locafoto agent and send them if accepted")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--expect-fingerprint", help="the receiver's fingerprint (pinning)")
    s.add_argument("--no-pin", action="store_true", help="do not pin (testing only)")
    s.add_argument("--name", default="pypeer")
    s.add_argument("--seed-file", help="32-byte Ed25519 seed (created, mode 0600, if missing); "
                                       "default: a fresh throwaway identity")
    s.add_argument("--tamper", choices=["tag", "signature", "data"],
                   help="corrupt one item on purpose (negative tests)")
    s.add_argument("--tamper-item", type=int, default=0, help="index of the item to corrupt (default 0)")
    s.add_argument("--gap-in-item", type=int, default=None,
                   help="halfway through this item, send ITEM_DATA at a wrong offset and stop (negative tests)")
    s.add_argument("--connect-timeout", type=float, default=10.0)
    s.add_argument("--decision-timeout", type=float, default=None,
                   help="give up waiting for the decision after this many seconds (default: never "
                        "while the receiver keeps pinging)")
    s.add_argument("--result-timeout", type=float, default=120.0)
    s.add_argument("--piece-size", type=int, default=PIECE,
                   help=f"ITEM_DATA piece size, 1..{MAX_PLAINTEXT - 13} (default {PIECE})")
    s.add_argument("--reverse", action="store_true", help="send the items last to first")
    s.add_argument("--omit-hashes", action="store_true",
                   help="leave the content hashes out of the OFFER (only to a receiver that announced cap late-hash)")
    s.add_argument("--verbose", action="store_true", help="trace every wire message on stderr")
    s.add_argument("--declare-kind", help="offer every item as this kind whatever its content (negative tests)")
    s.add_argument("--offer-id", type=lambda v: str(uuid.UUID(v)),
                   help="offer id (lowercase UUID) to use instead of a fresh one; item ids are derived "
                        "from it, so running twice with the same id offers the same offer again")
    s.add_argument("files", nargs="+")
    f = sub.add_parser("fingerprint", help="print the fingerprint of a seed file (created if missing)")
    f.add_argument("--seed-file", required=True)
    t = sub.add_parser("self-test", help="check HELLO parsing, name sanitizing and the handshake against "
                                         "protocol/vectors/handshake.json")
    t.add_argument("--vectors", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                     "protocol", "vectors", "handshake.json"))
    args = p.parse_args(argv)
    if args.cmd == "send":
        global VERBOSE
        VERBOSE = args.verbose
        return cmd_send(args)
    if args.cmd == "self-test":
        return self_test(os.path.normpath(args.vectors))
    return cmd_fingerprint(args)


if __name__ == "__main__":
    sys.exit(main())
