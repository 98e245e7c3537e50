#!/usr/bin/env python3
"""Independent Locafoto sender, written from protocol/*.md alone (no Swift code).

Speaks wire protocol 1 as the *sender* (Noise initiator):

    python3 scripts/interop/python_peer.py send --host 127.0.0.1 --port PORT \\
        --expect-fingerprint FP --name pypeer [--seed-file F] [--tamper tag|signature|data] FILE...
    python3 scripts/interop/python_peer.py fingerprint --seed-file F

Stack (protocol/README.md): TCP -> frames (u16 BE length ‖ Noise message, framing.md) ->
Noise_XX_25519_ChaChaPoly_BLAKE2b with prologue "LOCAFOTO/1" and HELLO payloads (handshake.md)
-> wire messages (type byte ‖ body, messages.md) -> per-photo bundle crypto (formats.md).

Needs: pip install noiseprotocol pynacl cryptography

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
import uuid

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
    pass


class IdentityError(Exception):
    pass


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

    def recv_frame(self):
        (length,) = struct.unpack(">H", self._recv_exact(2))
        if length == 0:
            raise ProtocolError("frame of length 0")
        return self._recv_exact(length)

    def send_frame(self, payload):
        if not 1 <= len(payload) <= MAX_FRAME:
            raise ProtocolError(f"frame of {len(payload)} bytes cannot be sent")
        self.sock.sendall(struct.pack(">H", len(payload)) + payload)

    # handshake
    def handshake(self, expect_fingerprint):
        n = NoiseConnection.from_name(NOISE_NAME)
        n.set_as_initiator()
        n.set_prologue(PROLOGUE)
        n.set_keypair_from_private_bytes(Keypair.STATIC, self.identity.x25519_private)
        n.start_handshake()

        # -> e   (payload empty)
        msg1 = n.write_message(b"")
        assert len(msg1) == DHLEN
        self.send_frame(msg1)

        # <- e, ee, s, es   (payload: responder HELLO, encrypted)
        msg2 = self.recv_frame()
        if len(msg2) < DHLEN + DHLEN + TAGLEN + TAGLEN:
            raise ProtocolError(f"handshake message 2 too short ({len(msg2)} bytes)")
        if len(msg2) > DHLEN + DHLEN + TAGLEN + MAX_HELLO + TAGLEN:
            raise ProtocolError(f"handshake message 2 too long for a HELLO ({len(msg2)} bytes)")
        try:
            hello_bytes = n.read_message(msg2)
        except Exception as e:  # decryption failure: abort
            raise ProtocolError(f"handshake message 2 does not decrypt: {e!r}")
        rs = n.noise_protocol.handshake_state.rs.public_bytes
        hello = self._parse_hello(hello_bytes)

        # identity binding (handshake.md): pk_to_curve25519(hello.ed25519) == rs
        if sodium.crypto_sign_ed25519_pk_to_curve25519(hello["ed25519"]) != rs:
            raise IdentityError("identity_mismatch: the HELLO Ed25519 key does not match the Noise static key")
        self.peer_public = hello["ed25519"]
        self.peer_name = hello["name"]
        self.peer_caps = [c for c in hello["caps"] if isinstance(c, str)]
        self.peer_fingerprint = fingerprint(self.peer_public)

        # pinning (handshake.md "Pinning"): check before sending anything else (not even msg 3)
        if expect_fingerprint is not None and self.peer_fingerprint != expect_fingerprint:
            raise IdentityError(f"pinning failed: expected {expect_fingerprint}, "
                                f"the peer proved {self.peer_fingerprint} (name {self.peer_name!r})")

        # -> s, se   (payload: our HELLO)
        our_hello = jdump({"v": 1, "ed25519": b64(self.identity.public), "name": self.name, "caps": []})
        assert len(our_hello) <= MAX_HELLO
        self.send_frame(n.write_message(our_hello))
        if not n.handshake_finished:
            raise ProtocolError("handshake did not finish after three messages")
        self.noise = n

    @staticmethod
    def _parse_hello(raw):
        if len(raw) > MAX_HELLO:
            raise ProtocolError("HELLO over 4096 bytes")
        try:
            h = json.loads(raw.decode("utf-8"))
        except Exception:
            raise ProtocolError("HELLO is not UTF-8 JSON")
        if not isinstance(h, dict):
            raise ProtocolError("HELLO is not a JSON object")
        if h.get("v") != 1 or isinstance(h.get("v"), bool):
            raise ProtocolError(f"unsupported_version: HELLO v={h.get('v')!r}")
        if not isinstance(h.get("ed25519"), str) or not isinstance(h.get("name"), str):
            raise ProtocolError("HELLO lacks ed25519/name strings")
        try:
            pk = base64.b64decode(h["ed25519"], validate=True)
        except Exception:
            raise ProtocolError("HELLO ed25519 is not base64")
        if len(pk) != 32:
            raise ProtocolError("HELLO ed25519 is not 32 bytes")
        name = "".join(ch for ch in h["name"] if ch.isprintable())
        return {"ed25519": pk, "name": name, "caps": h.get("caps", [])}

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
        log(f"protocol error: {e}")
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
    args = p.parse_args(argv)
    if args.cmd == "send":
        global VERBOSE
        VERBOSE = args.verbose
        return cmd_send(args)
    return cmd_fingerprint(args)


if __name__ == "__main__":
    sys.exit(main())
