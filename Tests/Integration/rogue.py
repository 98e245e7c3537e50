"""A hostile peer for the integration tests: speaks the real protocol (the independent Python
implementation in scripts/interop/python_peer.py: Noise, frames, HELLO, wire messages) but
says what a well-behaved peer never would: names with terminal escapes, offers from fresh keys
by the hundred, 10,000-item offers, frames trickled a byte at a time, decisions that try to
drive the sender's terminal.

Initiator (a hostile sender): `Rogue(...).connect(port)`, then `offer(...)`.
Responder (a hostile receiver): `RogueReceiver(...)` listens; the agent sends to it by address.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "interop"))
import python_peer as pp  # noqa: E402
from noise.connection import Keypair, NoiseConnection  # noqa: E402

# Terminal control a peer must never get through: OSC set-title, clear screen, a forged line.
TERMINAL_ATTACK = "\x1b]0;pwned\x07\x1b[2J\x1b[H\nall photos imported \u202e\u2028\u0085\x9b31m"
UNSAFE = ["\x1b", "\x07", "\x9b", "\u202e", "\u2028", "\u0085"]


def contains_unsafe(text: str) -> list[str]:
    return [repr(c) for c in UNSAFE if c in text]


def fake_item(name: str, size: int = 1024) -> dict:
    """An offer entry for a photo that never has to be sent (the offer waits undecided)."""
    return {"id": str(uuid.uuid4()), "name": name, "kind": "jpeg", "size": size, "hash": pp.content_hash(name.encode())}


class Rogue:
    """A sender with its own key (fresh unless a seed is given)."""

    def __init__(self, name: str = "rogue", seed: bytes | None = None):
        self.identity = pp.Identity(seed or os.urandom(32))
        self.name = name
        self.session: pp.Session | None = None

    @property
    def fingerprint(self) -> str:
        return self.identity.fingerprint

    def connect(self, port: int, host: str = "127.0.0.1", timeout: float = 30.0) -> "Rogue":
        sock = socket.create_connection((host, port), timeout=timeout)
        self.session = pp.Session(sock, self.identity, "x")
        # HELLO name as given, control characters and all (python_peer refuses to send those).
        self._handshake_raw_name()
        return self

    def _handshake_raw_name(self) -> None:
        s = self.session
        n = NoiseConnection.from_name(pp.NOISE_NAME)
        n.set_as_initiator()
        n.set_prologue(pp.PROLOGUE)
        n.set_keypair_from_private_bytes(Keypair.STATIC, self.identity.x25519_private)
        n.start_handshake()
        s.send_frame(n.write_message(b""))
        n.read_message(s.recv_frame())
        hello = pp.jdump({"v": 1, "ed25519": pp.b64(self.identity.public), "name": self.name, "caps": []})
        s.send_frame(n.write_message(hello))
        assert n.handshake_finished
        s.noise = n

    def offer(self, items: list[dict], offer_id: str | None = None) -> str:
        offer_id = offer_id or str(uuid.uuid4())
        total_bytes = sum(i["size"] for i in items)
        for start in range(0, len(items), pp.MAX_ITEMS_PER_OFFER_MSG):
            chunk = items[start:start + pp.MAX_ITEMS_PER_OFFER_MSG]
            more = start + len(chunk) < len(items)
            self.session.send(pp.OFFER, {"offer": offer_id, "items": chunk, "more": more,
                                         "totalItems": len(items), "totalBytes": total_bytes})
        return offer_id

    def next_message(self) -> tuple[int, dict | None]:
        """The next message other than PING (answered)."""
        while True:
            mtype, obj = self.session.recv()
            if mtype == pp.PING:
                self.session.send(pp.PONG)
                continue
            return mtype, obj

    def close(self) -> None:
        if self.session:
            try:
                self.session.sock.close()
            except OSError:
                pass


class RogueReceiver:
    """A receiver (Noise responder) that answers every offer with `decision` and `message`
    (e.g. a terminal attack), on 127.0.0.1 at `port`. One connection at a time, in a thread."""

    def __init__(self, name: str = "rogue-rx", decision: str = "rejected", message: str = TERMINAL_ATTACK,
                 code: int | None = 3, extra: dict | None = None, shout: bool = True):
        self.identity = pp.Identity(os.urandom(32))
        self.name = name
        self.decision = decision
        self.message = message
        self.code = code
        # Fields added to the DECISION (e.g. a `resume` that breaks the rules), and whether an
        # ERROR follows it; without one, what the sender says next is kept in `after`.
        self.extra = extra or {}
        self.shout = shout
        self.after: list[tuple[int, dict | None]] = []
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.offers: list[str] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def fingerprint(self) -> str:
        return self.identity.fingerprint

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                self._session(conn)
            except Exception as e:  # noqa: BLE001 - recorded for the test to show
                self.errors.append(repr(e))
            finally:
                conn.close()

    def _session(self, conn: socket.socket) -> None:
        conn.settimeout(60)
        s = pp.Session(conn, self.identity, self.name)
        n = NoiseConnection.from_name(pp.NOISE_NAME)
        n.set_as_responder()
        n.set_prologue(pp.PROLOGUE)
        n.set_keypair_from_private_bytes(Keypair.STATIC, self.identity.x25519_private)
        n.start_handshake()
        n.read_message(s.recv_frame())
        hello = pp.jdump({"v": 1, "ed25519": pp.b64(self.identity.public), "name": self.name, "caps": []})
        s.send_frame(n.write_message(hello))
        n.read_message(s.recv_frame())
        s.noise = n
        while True:
            mtype, obj = s.recv()
            if mtype == pp.PING:
                s.send(pp.PONG)
                continue
            if mtype == pp.OFFER and not obj.get("more"):
                self.offers.append(obj["offer"])
                answer = {"offer": obj["offer"], "decision": self.decision, "message": self.message}
                if self.code is not None:
                    answer["code"] = self.code
                answer.update(self.extra)
                s.send(pp.DECISION, answer)
                if not self.shout:
                    while True:  # until the sender closes
                        try:
                            self.after.append(s.recv())
                        except Exception:  # noqa: BLE001 - the end of the connection
                            return
                # Say it once more, louder, as an ERROR: both reach the sender's screen.
                s.send(pp.ERROR, {"code": 3, "message": self.message, "offer": obj["offer"]})
                return

    def close(self) -> None:
        self.listener.close()
