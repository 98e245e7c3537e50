"""LocalSend v2 (issue 27), against an implementation we did not write: localsendd 0.1.1 from
PyPI, a LocalSend protocol v2.2 daemon with HTTPS, mutual TLS (it shows its own certificate) and
SHA-256 on every file, driven through its own control client (`localsendd.client`).

Each test starts a locafoto agent with LocalSend turned on at a free port on 127.0.0.1, and a
localsendd that sends to it (`send` with that address and port). Waits follow localsendd's own
state events and the agent's inbox; nothing sleeps.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sqlite3
import ssl
import subprocess
import time
from pathlib import Path

import pytest

import lfharness as h
from lfharness import wait_for

try:
    from localsendd.client import Client
except ImportError:  # scripts/setup.sh installs it; without it these tests fail, loudly
    Client = None

MEDIA = h.REPO / "Tests" / "LocafotoMediaTests" / "Fixtures"
JPEG, HEIC = MEDIA / "photo.jpg", MEDIA / "photo.heic"
TEXT = h.fixture("not-an-image.txt")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSendD:
    """One localsendd, its state in `root`, its control socket there too."""

    def __init__(self, root: Path, alias: str, *options: str) -> None:
        assert Client is not None, "localsendd is not installed (scripts/setup.sh pip-installs localsendd==0.1.1)"
        self.root = root
        self.alias = alias
        self.sock = root / "lsd.sock"
        self.port = free_port()
        env = {k: v for k, v in h.clean_env().items() if not k.startswith(("XDG_", "LOCALSEND"))}
        env.update(XDG_STATE_HOME=str(root / "state"), XDG_CONFIG_HOME=str(root / "config"))
        self.log = open(root / "localsendd.log", "ab")
        self.proc = subprocess.Popen(
            [shutil.which("localsendd") or "localsendd", "--port", str(self.port), "--socket", str(self.sock),
             "--alias", alias, "--encryption", "--log-level", "info", "--download-dir", str(root / "downloads"),
             *options],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.fingerprint = h.localsendd_state(self.sock, self.proc, root / "localsendd.log")["self"]["fingerprint"]

    def log_text(self) -> str:
        return (self.root / "localsendd.log").read_text(errors="replace")

    def send(self, port: int, *files: Path, pin: str = "", timeout: float = 120) -> dict:
        """Sends to 127.0.0.1:port and follows localsendd's state until its result: the dict
        localsendd reports (`kind`: sent, declined, peer_error, ...)."""
        started = time.time()
        with Client(str(self.sock), timeout=timeout) as c:
            c.call("send", to="127.0.0.1", port=port, protocol="https", files=[str(f) for f in files], pin=pin)
            for frame in c.events():
                if frame.get("type") != "state":
                    continue
                result = (frame.get("data") or {}).get("result")
                if result and (result.get("at") or 0) >= started:
                    return result
        raise AssertionError("localsendd's event stream ended")

    def send_async(self, port: int, *files: Path) -> "subprocess.Popen":
        """`localsendctl send --wait` in the background: for tests that act while it waits."""
        c = Client(str(self.sock), timeout=120).connect()
        c.call("send", to="127.0.0.1", port=port, protocol="https", files=[str(f) for f in files], pin="")
        return c

    def stop(self) -> None:
        h.terminate(self.proc, timeout=10)
        self.log.close()


def result_of(c, since: float = 0) -> dict:
    """The result localsendd reports on the control client `c` (of a send begun with
    `send_async`), from its state events; closes `c`."""
    try:
        return next(f["data"]["result"] for f in c.events() if f.get("type") == "state"
                    and ((f.get("data") or {}).get("result") or {}).get("at", 0) >= since
                    and (f.get("data") or {}).get("result"))
    finally:
        c.close()


@pytest.fixture
def lsd(workdir):
    started: list[LocalSendD] = []

    def make(alias: str = "phone", *options: str) -> LocalSendD:
        d = workdir / f"lsd-{len(started)}"
        d.mkdir()
        s = LocalSendD(d, alias, *options)
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def node_with_localsend(make_node, key: str = "b"):
    node = make_node(key)
    port = free_port()
    node.stop()
    node.start("--localsend-port", str(port))
    status = node.run("localsend", "on")
    assert status["enabled"] and status["port"] == port, status
    assert len(status["fingerprint"]) == 64, status
    return node, port


def test_off_by_default_and_nothing_listens(make_node):
    b = make_node("b")
    status = b.run("localsend")
    assert status["enabled"] is False and status.get("port") is None, status
    port = free_port()
    b.stop()
    b.start("--localsend-port", str(port))
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    on = b.run("localsend", "on")
    assert on["port"] == port
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    off = b.run("localsend", "off")
    assert off["enabled"] is False and off.get("port") is None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_certificate_is_kept_across_restarts_and_0600(make_node):
    b, port = node_with_localsend(make_node)
    first = b.run("localsend")["fingerprint"]
    der = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port)))
    assert hashlib.sha256(der).hexdigest().upper() == first
    for f in ("certificate.der", "key.der"):
        assert os.stat(b.home / "localsend" / f).st_mode & 0o777 == 0o600
    b.stop()
    b.start("--localsend-port", str(port))  # on is kept: it listens again, with the same certificate
    st = wait_for(lambda: (s := b.run("localsend")) and s.get("port") and s, what="LocalSend to listen again")
    assert st["fingerprint"] == first
    der = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port)))
    assert hashlib.sha256(der).hexdigest().upper() == first


def test_photos_from_localsend_wait_in_the_inbox_then_land_in_the_vault(make_node, lsd):
    b, port = node_with_localsend(make_node)
    phone = lsd("Pixel of Ana")
    c = phone.send_async(port, JPEG, HEIC, TEXT)
    offer = b.wait_offer(previews=False)
    assert offer["sender"]["name"] == "Pixel of Ana"
    assert offer["sender"]["fingerprint"] == "localsend:" + phone.fingerprint
    assert offer["sender"]["trusted"] is False
    shown = b.run("inbox", json=False).stdout
    assert "Pixel of Ana (LocalSend, not verified)" in shown, shown
    names = {i["name"]: i for i in offer["items"]}
    assert names["not-an-image.txt"]["status"] == "failed" and "not a photo" in names["not-an-image.txt"]["error"]
    b.run("accept", offer["id"][:8])
    result = result_of(c)
    assert result["kind"] == "sent", result
    done = b.ended_offer(offer["id"])
    assert done["state"] == "completed", done
    photos = b.photos()
    assert sorted(p["name"] for p in photos) == ["photo.heic", "photo.jpg"]
    for p in photos:
        assert p["sender"] == {"name": "Pixel of Ana", "fingerprint": "localsend:" + phone.fingerprint}, p
        src = JPEG if p["name"] == "photo.jpg" else HEIC
        assert h.export_bytes(b, p["id"], b.home.parent / f"out-{p['name']}") == src.read_bytes()
    # Nothing of the photos in clear anywhere in the node's home.
    marker = JPEG.read_bytes()[2000:2064]
    for f in b.home.rglob("*"):
        if f.is_file():
            assert marker not in f.read_bytes(), f
    # As for a locafoto peer's: an imported photo's name is in the vault's sealed catalog only,
    # not in agent.sqlite, which is not encrypted (the refused text file keeps its name there).
    db = sqlite3.connect(f"file:{b.home / 'agent.sqlite'}?mode=ro", uri=True)
    try:
        stored = sorted(db.execute("SELECT name, status FROM offerItem WHERE offerId = ?", (offer["id"],)).fetchall())
    finally:
        db.close()
    assert stored == [("", "imported"), ("", "imported"), ("not-an-image.txt", "failed")], stored
    devices = b.run("localsend")["devices"]
    assert [(d["alias"], d["fingerprint"], d["trust"]) for d in devices] == [("Pixel of Ana", phone.fingerprint, "known")]


def test_rejected_offer_tells_the_sender_and_stores_nothing(make_node, lsd):
    b, port = node_with_localsend(make_node)
    phone = lsd()
    c = phone.send_async(port, JPEG)
    offer = b.wait_offer(previews=False)
    b.run("reject", offer["id"][:8])
    result = result_of(c)
    assert result["kind"] == "declined" and result["code"] == 403, result
    assert b.photos() == []


def test_only_files_that_are_not_photos_are_refused_at_once(make_node, lsd):
    b, port = node_with_localsend(make_node)
    result = lsd().send(port, TEXT)
    assert result["kind"] == "declined" and result["code"] == 403, result
    assert b.inbox() == []


def test_trusted_device_is_accepted_without_asking_and_untrusted_again_waits(make_node, lsd):
    b, port = node_with_localsend(make_node)
    phone = lsd("tablet")
    c = phone.send_async(port, JPEG)
    offer = b.wait_offer(previews=False)
    b.run("reject", offer["id"][:8])
    c.close()
    trusted = b.run("localsend", "trust", "tablet")
    assert trusted["trust"] == "trusted" and trusted["fingerprint"] == phone.fingerprint
    result = phone.send(port, JPEG)
    assert result["kind"] == "sent", result
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]
    # The inbox says the device is trusted (issue 42: it said `trusted: false`).
    assert {o["sender"]["trusted"] for o in b.inbox(all=True)} == {True}
    b.run("localsend", "untrust", phone.fingerprint[:12])
    c = phone.send_async(port, HEIC)
    assert b.wait_offer(previews=False)["items"][0]["name"] == "photo.heic"
    c.close()


def test_a_known_name_with_another_certificate_is_refused(make_node, lsd):
    b, port = node_with_localsend(make_node)
    first = lsd("phone")
    c = first.send_async(port, JPEG)
    b.run("reject", b.wait_offer(previews=False)["id"][:8])
    c.close()
    impostor = lsd("phone")
    assert impostor.fingerprint != first.fingerprint
    result = impostor.send(port, JPEG)
    assert result["kind"] == "declined" and result["code"] == 403, result
    assert "known with certificate" in b.log_text() or "not the" in b.log_text()
    assert [o for o in b.inbox(all=True) if o["sender"]["fingerprint"].endswith(impostor.fingerprint)] == []
    # Forgotten, the name is free again.
    b.run("localsend", "forget", first.fingerprint[:12])
    c = impostor.send_async(port, JPEG)
    assert b.wait_offer(previews=False)["sender"]["fingerprint"] == "localsend:" + impostor.fingerprint
    c.close()


def test_policy_off_refuses_localsend_too(make_node, lsd):
    b, port = node_with_localsend(make_node)
    b.run("policy", "off")
    result = lsd().send(port, JPEG)
    assert result["kind"] == "declined" and result["code"] == 403, result
    assert b.inbox(all=True) == []


# ---------------------------------------------------------------- hostile input, raw HTTPS
# A client of our own making, to send what no well-behaved app sends: Python's http.client over
# ssl, with a client certificate made by `cryptography` (as LocalSend's apps show theirs).

import datetime
import http.client
import json
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class RawPeer:
    def __init__(self, root: Path, alias: str = "raw") -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, alias)])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
        der = cert.public_bytes(serialization.Encoding.DER)
        self.fingerprint = hashlib.sha256(der).hexdigest().upper()
        self.cert, self.key = root / f"{alias}-cert.pem", root / f"{alias}-key.pem"
        self.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        self.alias = alias

    def request(self, port: int, method: str, path: str, body: bytes = b"", headers: dict | None = None,
                certificate: bool = True) -> tuple[int, bytes]:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if certificate:
            ctx.load_cert_chain(self.cert, self.key)
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=60, context=ctx)
        try:
            c.request(method, "/api/localsend/v2/" + path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def info(self, fingerprint: str | None = None) -> dict:
        return {"alias": self.alias, "version": "2.1", "deviceModel": "test", "deviceType": "mobile",
                "fingerprint": fingerprint or self.fingerprint, "port": 53317, "protocol": "https", "download": False}

    def prepare(self, port: int, files: dict, fingerprint: str | None = None, **kw) -> tuple[int, bytes]:
        body = json.dumps({"info": self.info(fingerprint), "files": files}).encode()
        return self.request(port, "POST", "prepare-upload", body, {"Content-Type": "application/json"}, **kw)


def file_entry(fid: str, path: Path, **over) -> dict:
    data = path.read_bytes()
    e = {"id": fid, "fileName": path.name, "size": len(data), "fileType": "image/jpeg",
         "sha256": hashlib.sha256(data).hexdigest()}
    e.update(over)
    return e


def accepted_session(b, raw: RawPeer, port: int, files: dict) -> dict:
    """prepare-upload in a thread, accepted in the inbox: the answer (sessionId, tokens)."""
    out = {}
    t = threading.Thread(target=lambda: out.update(answer=raw.prepare(port, files)))
    t.start()
    offer = b.wait_offer(previews=False)
    b.run("accept", "--no-wait", offer["id"][:8])  # `accept` waits for the photos, which come after
    t.join(timeout=120)
    status, body = out["answer"]
    assert status == 200, (status, body)
    return json.loads(body)


def test_hostile_requests_get_clear_refusals(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    jpeg = file_entry("a", JPEG)
    refusals = {
        "not JSON": (b"{", 400),
        "traversal": (None, 400, {"x": file_entry("x", JPEG, fileName="../../etc/passwd")}),
        "bidi": (None, 400, {"x": file_entry("x", JPEG, fileName="photo\u202egpj.exe")}),
        "control": (None, 400, {"x": file_entry("x", JPEG, fileName="a\x1b[2Jb.jpg")}),
        "huge": (None, 400, {"x": file_entry("x", JPEG, size=1 << 50)}),
        "negative": (None, 400, {"x": file_entry("x", JPEG, size=-1)}),
        "bad hash": (None, 400, {"x": file_entry("x", JPEG, sha256="zz")}),
        "10,000 files": (None, 400, {f"f{i}": file_entry(f"f{i}", JPEG) for i in range(10_000)}),
    }
    for what, (body, status, *files) in refusals.items():
        if body is None:
            got, text = raw.prepare(port, files[0])
        else:
            got, text = raw.request(port, "POST", "prepare-upload", body)
        assert got == status, (what, got, text)
        assert json.loads(text)["message"], what
    got, _ = raw.request(port, "POST", "prepare-upload", b"x" * (16 << 20 | 1))
    assert got == 413
    # The certificate shown must be the fingerprint named.
    got, text = raw.prepare(port, {"a": jpeg}, fingerprint="AB" * 32)
    assert got == 403 and b"certificate" in text, text
    assert b.inbox(all=True) == []
    # Register: the node answers who it is (its certificate's fingerprint).
    got, text = raw.request(port, "POST", "register", json.dumps(raw.info()).encode())
    assert got == 200 and json.loads(text)["fingerprint"] == b.run("localsend")["fingerprint"], text
    got, text = raw.request(port, "GET", "info")
    assert got == 200 and json.loads(text)["alias"] == b.name
    # A flood of registrations under 100 names and fingerprints: each is answered, none is kept.
    for i in range(100):
        got, _ = raw.request(port, "POST", "register", json.dumps({**raw.info(f"{i:064X}"), "alias": f"r{i}"}).encode())
        assert got == 200
    assert b.run("localsend")["devices"] == []


def test_uploads_out_of_order_or_wrong_leave_nothing(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    files = {
        "good": file_entry("good", JPEG),
        "long": file_entry("long", JPEG),
        "hash": file_entry("hash", JPEG, sha256="00" * 32),
        "text": file_entry("text", TEXT, fileName="looks.jpg"),
    }
    answer = accepted_session(b, raw, port, files)
    sid, tokens = answer["sessionId"], answer["files"]
    assert set(tokens) == set(files)

    def upload(fid: str, data: bytes, sid: str = sid, token: str | None = None, certificate: bool = True):
        q = f"upload?sessionId={sid}&fileId={fid}&token={token or tokens[fid]}"
        return raw.request(port, "POST", q, data, {"Content-Type": "application/octet-stream"},
                           certificate=certificate)

    assert upload("good", JPEG.read_bytes(), token="wrong")[0] == 403
    assert upload("good", JPEG.read_bytes(), sid="nosuchsession")[0] == 409
    assert raw.request(port, "POST", "upload?sessionId=" + sid, b"")[0] == 400
    assert upload("long", JPEG.read_bytes() + b"more")[0] == 400
    assert upload("hash", JPEG.read_bytes())[0] == 422
    assert upload("text", TEXT.read_bytes())[0] in (400, 415)
    assert upload("good", JPEG.read_bytes())[0] == 200
    assert upload("good", JPEG.read_bytes())[0] in (403, 409)  # once only (the session is over)
    done = b.ended_offer(answer["sessionId"])
    assert done["state"] == "failed", done
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]
    leftovers = [f for f in (b.home / "vault" / "tmp").rglob("*") if f.is_file()]
    assert leftovers == [], leftovers


def test_sender_cancel_while_pending_and_while_uploading(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    out = {}
    t = threading.Thread(target=lambda: out.update(answer=raw.prepare(port, {"a": file_entry("a", JPEG)})))
    t.start()
    offer = b.wait_offer(previews=False)
    got, _ = raw.request(port, "POST", f"cancel?sessionId={offer['id']}")
    assert got == 200
    done = b.ended_offer(offer["id"])
    assert done["state"] == "cancelled", done
    t.join(timeout=120)
    assert out["answer"][0] == 403  # the waiting prepare-upload learns it too
    # Accepted, one file in, then cancelled: what arrived stays, the offer ends cancelled.
    answer = accepted_session(b, raw, port, {"a": file_entry("a", JPEG), "b": file_entry("b", HEIC, fileType="image/heic")})
    sid = answer["sessionId"]
    q = f"upload?sessionId={sid}&fileId=a&token={answer['files']['a']}"
    assert raw.request(port, "POST", q, JPEG.read_bytes())[0] == 200
    assert raw.request(port, "POST", f"cancel?sessionId={sid}")[0] == 200
    done = b.ended_offer(sid)
    assert done["state"] == "cancelled", done
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]


def test_pin_is_asked_when_set(make_node, lsd, workdir):
    b, port = node_with_localsend(make_node)
    pin_file = workdir / "pin"
    pin_file.write_text("4711\n")
    os.chmod(pin_file, 0o600)
    assert b.run("localsend", "pin", "--pin-file", str(pin_file))["pinRequired"] is True
    phone = lsd()
    result = phone.send(port, JPEG)
    assert result["kind"] == "pin_required" and result["code"] == 401, result
    # Without a PIN (no guess, not counted), then three wrong ones from that address; the next
    # tries wait (30 s), whatever they give.
    for _ in range(3):
        assert phone.send(port, JPEG, pin="0000")["code"] == 401
    assert phone.send(port, JPEG, pin="4711")["code"] == 429
    assert b.inbox(all=True) == []
    assert b.run("localsend", "pin", "--clear")["pinRequired"] is False
    c = lsd("tablet").send_async(port, JPEG)  # without a PIN, no wait applies
    assert b.wait_offer(previews=False)["sender"]["name"] == "tablet"
    c.close()


def test_policy_trusted_lets_in_trusted_devices_only(make_node, lsd):
    b, port = node_with_localsend(make_node)
    phone = lsd("phone")
    c = phone.send_async(port, JPEG)  # met once, so that it can be trusted
    b.run("reject", b.wait_offer(previews=False)["id"][:8])
    c.close()
    b.run("policy", "trusted")
    stranger = lsd("stranger")
    result = stranger.send(port, JPEG)
    assert result["kind"] == "declined" and result["code"] == 403, result
    b.run("localsend", "trust", "phone")
    assert phone.send(port, JPEG)["kind"] == "sent"
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]


def test_the_user_stops_a_running_receive_and_an_empty_file_is_refused(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    empty = file_entry("e", JPEG, size=0, sha256=hashlib.sha256(b"").hexdigest(), fileName="empty.jpg")
    answer = accepted_session(b, raw, port, {"a": file_entry("a", JPEG), "b": file_entry("b", JPEG), "e": empty})
    sid, tokens = answer["sessionId"], answer["files"]
    assert set(tokens) == {"a", "b"}  # no token for the empty file
    offer = next(o for o in b.inbox(all=True) if o["id"] == sid)
    assert [i["error"] for i in offer["items"] if i["name"] == "empty.jpg"] == ["an empty file is not a photo"]
    q = lambda fid: f"upload?sessionId={sid}&fileId={fid}&token={tokens[fid]}"  # noqa: E731
    assert raw.request(port, "POST", q("a"), JPEG.read_bytes())[0] == 200
    stopped = b.run("reject", sid[:8])  # a running receive: stopped
    assert stopped["state"] == "cancelled", stopped
    got, text = raw.request(port, "POST", q("b"), JPEG.read_bytes())
    assert got in (403, 409), (got, text)
    done = b.ended_offer(sid)
    assert done["state"] == "cancelled", done
    assert len(b.photos()) == 1  # what arrived stays
