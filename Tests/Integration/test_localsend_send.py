"""Sending to LocalSend devices (issue 27), against localsendd 0.1.1 as the receiver: `locafoto
send localsend:ADDRESS` and `send NAME`, its TLS pinned to the certificate the device showed,
with the device accepting (`--unattended`, or its user through localsendd's control client),
declining, asking for a PIN, and a certificate that changed under a known name.

Waits follow the transfer to its end (`send` waits) or localsendd's own state; nothing sleeps.
"""

from __future__ import annotations

import json
import os
import socket

import lfharness as h
from lfharness import wait_for
from test_localsend import HEIC, JPEG, TEXT, Client, lsd, node_with_localsend  # noqa: F401 (lsd: fixture)


def downloads(phone) -> dict[str, bytes]:
    d = phone.root / "downloads"
    return {f.name: f.read_bytes() for f in d.iterdir()} if d.exists() else {}


def test_send_to_a_device_by_address_lands_in_its_downloads(make_node, lsd):
    a, _ = node_with_localsend(make_node, "a")
    phone = lsd("Pixel", "--unattended")
    t = a.run("send", f"localsend:127.0.0.1:{phone.port}", str(JPEG), str(HEIC))
    assert t["state"] == "done", t
    assert t["peer"] == {"name": "Pixel", "fingerprint": "localsend:" + phone.fingerprint}, t
    assert [i["status"] for i in t["items"]] == ["delivered", "delivered"], t
    assert t["sentBytes"] == JPEG.stat().st_size + HEIC.stat().st_size
    assert downloads(phone) == {"photo.jpg": JPEG.read_bytes(), "photo.heic": HEIC.read_bytes()}
    # The device is met: listed, and known by its certificate from now on.
    devices = a.run("localsend")["devices"]
    assert [(d["alias"], d["fingerprint"], d["trust"]) for d in devices] == [("Pixel", phone.fingerprint, "known")]
    # Named by its alias now: met before, it is sent to at its last address and port, pinned to
    # the certificate it showed then.
    shown = a.run("send", "pixel", str(JPEG), json=False)
    assert shown.returncode == 0, shown.output
    assert "delivered" in shown.stdout and "sent 1 photo to Pixel (LocalSend)" in shown.stdout, shown.stdout
    assert sorted(downloads(phone)) == ["photo (1).jpg", "photo.heic", "photo.jpg"]


def test_vault_photos_are_sent_from_memory(make_node, lsd):
    a, _ = node_with_localsend(make_node, "a")
    a.run("import", str(JPEG))
    phone = lsd("tablet", "--unattended")
    photo = a.photos()[0]
    t = a.run("send", f"localsend:127.0.0.1:{phone.port}", "--photo", photo["id"])
    assert t["state"] == "done", t
    assert list(downloads(phone).values()) == [JPEG.read_bytes()]


def test_the_device_declines(make_node, lsd):
    a, _ = node_with_localsend(make_node, "a")
    phone = lsd("phone")
    with Client(str(phone.sock), timeout=60) as c:  # attached: localsendd asks its user
        p = a.popen("send", f"localsend:127.0.0.1:{phone.port}", str(JPEG), json=True)
        sid = wait_for(lambda: (c.state().get("incoming") or {}).get("sessionId"), what="localsendd's prompt")
        c.call("confirm_receive", sessionId=sid, confirmed=False)
        status, out, err = h.finish(p)
    assert status == 1, (out, err)
    t = json.loads(out)["error"]["transfer"]
    assert t["state"] == "rejected" and "declined" in t["message"], t
    assert downloads(phone) == {}


def test_pin_from_a_file_and_a_wrong_one(make_node, lsd, workdir):
    a, _ = node_with_localsend(make_node, "a")
    phone = lsd("phone", "--unattended", "--pin", "2468")
    to = f"localsend:127.0.0.1:{phone.port}"
    r = a.run("send", to, str(JPEG), check=False)
    assert r.returncode == 1, r
    assert r.data["error"]["code"] == "unauthenticated" and "asks for a PIN" in r.data["error"]["message"], r.data
    wrong = workdir / "wrong"
    wrong.write_text("1111\n")
    os.chmod(wrong, 0o600)
    r = a.run("send", "--pin-file", str(wrong), to, str(JPEG), check=False)
    assert r.returncode == 1 and "did not take the PIN" in r.data["error"]["message"], r.data
    right = workdir / "right"
    right.write_text("2468\n")
    os.chmod(right, 0o600)
    t = a.run("send", "--pin-file", str(right), to, str(JPEG))
    assert t["state"] == "done", t
    assert list(downloads(phone)) == ["photo.jpg"]
    # The PIN never shows in the agent's log.
    assert "2468" not in a.log_text()


def test_pin_asked_at_the_terminal_then_sent_again(make_node, lsd):
    """In a real terminal (tmux): the device asks for a PIN; `send` says so, asks for it without
    echo, and sends again to the same device, which takes the photo."""
    a, _ = node_with_localsend(make_node, "a")
    phone = lsd("phone", "--unattended", "--pin", "8642")
    term = h.Terminal(a.cmd("send", f"localsend:127.0.0.1:{phone.port}", str(JPEG), json=False))
    try:
        term.wait("PIN for phone: ", "the PIN prompt")
        assert "phone asks for a PIN" in term.screen()
        term.keys("8642", "Enter")
        shown = term.wait("EXIT=", "send to end")
    finally:
        term.close()
    assert "EXIT=0" in shown and "sent 1 photo to phone (LocalSend)" in shown, shown
    assert "8642" not in shown, shown  # not echoed
    assert list(downloads(phone)) == ["photo.jpg"]


def test_a_known_name_with_another_certificate_is_not_sent_to(make_node, lsd):
    a, _ = node_with_localsend(make_node, "a")
    first = lsd("phone", "--unattended")
    assert a.run("send", f"localsend:127.0.0.1:{first.port}", str(JPEG))["state"] == "done"
    impostor = lsd("phone", "--unattended")
    r = a.run("send", f"localsend:127.0.0.1:{impostor.port}", str(JPEG), check=False)
    assert r.returncode == 77, r
    assert r.data["error"]["code"] == "identityMismatch" and "REFUSED" in r.data["error"]["message"], r.data
    assert downloads(impostor) == {}
    a.run("localsend", "forget", first.fingerprint[:12])
    assert a.run("send", f"localsend:127.0.0.1:{impostor.port}", str(JPEG))["state"] == "done"


def test_off_no_send_and_clear_errors(make_node, lsd):
    a = make_node("a")
    phone = lsd("phone", "--unattended")
    r = a.run("send", f"localsend:127.0.0.1:{phone.port}", str(JPEG), check=False)
    assert r.returncode == 69 and "LocalSend is off" in r.data["error"]["message"], r.data
    a2, _ = node_with_localsend(make_node, "b")
    r = a2.run("send", "localsend:nobody-here", str(JPEG), check=False)
    assert r.returncode == 66 and "no LocalSend device named 'nobody-here'" in r.data["error"]["message"], r.data
    r = a2.run("send", f"localsend:127.0.0.1:{phone.port}", str(TEXT), check=False)
    assert r.returncode == 65, r
    # A port where nothing listens.
    r = a2.run("send", "localsend:127.0.0.1:1", str(JPEG), check=False)
    assert r.returncode == 69 and "cannot reach the LocalSend device" in r.data["error"]["message"], r.data
    assert downloads(phone) == {}


def test_cancel_while_the_device_decides(make_node, lsd):
    a, _ = node_with_localsend(make_node, "a")
    phone = lsd("phone")
    with Client(str(phone.sock), timeout=60) as c:  # attached: localsendd asks its user
        started = a.run("send", "--no-wait", f"localsend:127.0.0.1:{phone.port}", str(JPEG))
        wait_for(lambda: c.state().get("incoming"), what="localsendd's prompt")
        a.run("cancel", started["id"])
        # localsendd sees the sender walk away and drops its prompt.
        wait_for(lambda: not c.state().get("incoming"), what="localsendd to drop the offer")
    t = wait_for(lambda: next((x for x in a.run("transfers") if x["id"] == started["id"] and x.get("finishedAt")), None),
                 what="the transfer to end")
    assert t["state"] == "cancelled", t
    assert downloads(phone) == {}


# ---------------------------------------------------------------- a hostile receiver
# An HTTPS server of our own making (http.server over ssl, its certificate made by
# `cryptography`), to answer what no well-behaved device answers.

import http.server
import ssl
import threading

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from test_localsend import RawPeer


class HostileDevice:
    """Answers `register` with `register` (a dict, or bytes as they are), `prepare-upload` with
    `prepare` ((status, body), or a function of the request's JSON giving them) and uploads with
    `upload_status`; records each request's path. With `client_ca` (a certificate's DER) it
    requires a client certificate, as the apps' servers do since 1.18, and takes only one that
    certificate verifies (a self-signed one: itself); `client_certs` records what each request
    showed."""

    count = 0

    def __init__(self, root, register=None, prepare=(200, b""), upload_status=200, read_upload=True,
                 client_ca: bytes | None = None) -> None:
        HostileDevice.count += 1
        self.raw = RawPeer(root, f"hostile-{HostileDevice.count}")
        self.paths: list[str] = []
        self.client_certs: list[bytes | None] = []
        device = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                route = self.path.split("?")[0].rsplit("/", 1)[-1]
                device.paths.append(self.path)
                device.client_certs.append(self.connection.getpeercert(binary_form=True))
                if route == "upload" and not read_upload:
                    # Answers at once, unread body and all, then closes (the kernel resets).
                    self.send_response(upload_status)
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.flush()
                    self.close_connection = True
                    return
                request = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if route == "register":
                    r = register if register is not None else device.raw.info()
                    status, body = 200, r if isinstance(r, bytes) else json.dumps(r).encode()
                elif route == "prepare-upload":
                    status, body = prepare(json.loads(request)) if callable(prepare) else prepare
                elif route == "upload":
                    status, body = upload_status, b""
                else:
                    status, body = 200, b""
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.raw.cert, self.raw.key)
        if client_ca is not None:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(cadata=client_ca)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_hostile_receiver_gets_nothing_it_should_not(make_node, workdir):
    a, _ = node_with_localsend(make_node, "a")

    def send_to(device) -> dict:
        try:
            r = a.run("send", f"localsend:127.0.0.1:{device.port}", str(JPEG), check=False)
        finally:
            device.close()
        assert r.returncode != 0, r.output
        return r.data["error"]

    # Its register answer names another certificate than the one it showed: nothing is offered.
    d = HostileDevice(workdir, register=RawPeer(workdir, "other").info())
    e = send_to(d)
    assert e["code"] == "identityMismatch" and "says its certificate is" in e["message"], e
    assert [p.split("?")[0] for p in d.paths] == ["/api/localsend/v2/register"]
    # Not a device at all.
    e = send_to(HostileDevice(workdir, register=b"<html>router login</html>"))
    assert e["code"] == "peerUnavailable" and "does not answer as a LocalSend device" in e["message"], e
    # Tokens for files that were not offered; an answer over 256 KiB: no upload is made.
    d = HostileDevice(workdir, prepare=(200, json.dumps({"sessionId": "s", "files": {"../etc": "t"}}).encode()))
    e = send_to(d)
    assert "tokens for files that were not offered" in e["transfer"]["message"], e
    assert not any("/upload" in p for p in d.paths), d.paths
    d = HostileDevice(workdir, prepare=(200, b"{" + b" " * (1 << 20) + b"}"))
    e = send_to(d)
    assert "over 262144 bytes" in e["transfer"]["message"], e
    assert not any("/upload" in p for p in d.paths), d.paths
    # It takes the offer, then refuses the bytes (SHA-256 mismatch): the send fails saying so,
    # and the device is told to cancel.
    d = HostileDevice(workdir, upload_status=422,
                      prepare=lambda r: (200, json.dumps({"sessionId": "s1", "files": {k: "t" for k in r["files"]}}).encode()))
    e = send_to(d)
    assert "damaged in transit" in e["transfer"]["message"], e
    assert [p.split("?")[0].rsplit("/", 1)[-1] for p in d.paths] == ["register", "prepare-upload", "upload", "cancel"]
    assert d.paths[-1].endswith("cancel?sessionId=s1"), d.paths


def test_a_device_that_never_finishes_tls_or_answers_early_does_not_hang_or_mislead(make_node, workdir):
    a, _ = node_with_localsend(make_node, "a")
    # Takes the TCP connection and never speaks TLS (a suspended app): the send gives up after
    # the handshake's time limit, saying so, instead of waiting forever.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        r = a.run("send", f"localsend:127.0.0.1:{silent.getsockname()[1]}", str(JPEG), check=False)
    finally:
        silent.close()
    assert r.returncode == 69 and "did not finish the TLS handshake within 10 s" in r.data["error"]["message"], r.data
    # Answers an upload with 403 before reading its body, and closes: the send reports the
    # device's answer, not a broken write. The body must outgrow the socket buffers for the write
    # to break, so this one file is a JPEG signature and 16 MiB of random bytes (only the
    # transport is under test; the receiver never reads it).
    big = workdir / "big.jpg"
    big.write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(16 << 20))
    d = HostileDevice(workdir, upload_status=403, read_upload=False,
                      prepare=lambda r: (200, json.dumps({"sessionId": "s2", "files": {k: "t" for k in r["files"]}}).encode()))
    try:
        r = a.run("send", f"localsend:127.0.0.1:{d.port}", str(big), check=False)
    finally:
        d.close()
    assert r.returncode == 1, r.output
    t = r.data["error"]["transfer"]
    assert "the device ended the session during big.jpg (HTTP 403)" in t["message"], t
    assert t["items"][0]["status"] == "failed" and t["items"][0]["message"] == "HTTP 403", t


def test_a_pin_goes_to_one_device_only(make_node, workdir):
    a, _ = node_with_localsend(make_node, "a")
    pin = workdir / "pin"
    pin.write_text("1234\n")
    os.chmod(pin, 0o600)
    r = a.run("send", "--pin-file", str(pin), "localsend:127.0.0.1:9", "localsend:127.0.0.2:9", str(JPEG), check=False)
    assert r.returncode == 64 and "a PIN goes to one LocalSend device" in r.data["error"]["message"], r.data


def test_a_receiver_that_requires_a_client_certificate_gets_the_photos(make_node, workdir):
    """The apps' servers since 1.18 refuse a client without a certificate: a node that stopped
    showing its own would fail here (localsendd's server never asks for one)."""
    a, _ = node_with_localsend(make_node, "a")
    own = (a.home / "localsend" / "certificate.der").read_bytes()
    d = HostileDevice(workdir, client_ca=own,
                      prepare=lambda r: (200, json.dumps({"sessionId": "s1", "files": {k: "t" for k in r["files"]}}).encode()))
    try:
        t = a.run("send", f"localsend:127.0.0.1:{d.port}", str(JPEG))
    finally:
        d.close()
    assert t["state"] == "done", t
    assert [p.split("?")[0].rsplit("/", 1)[-1] for p in d.paths] == ["register", "prepare-upload", "upload"]
    assert d.client_certs == [own] * 3
    # One that requires a certificate the node does not have is refused at the handshake, and
    # the node says so in its own words.
    stranger = RawPeer(workdir, "stranger")
    other = x509.load_pem_x509_certificate(stranger.cert.read_bytes()).public_bytes(serialization.Encoding.DER)
    d = HostileDevice(workdir, client_ca=other)
    try:
        r = a.run("send", f"localsend:127.0.0.1:{d.port}", str(JPEG), check=False)
    finally:
        d.close()
    message = r.data["error"]["message"]
    assert r.returncode == 69 and "BoringSSL" not in message and ".build" not in message and "errno" not in message, r.data
    assert f"the LocalSend device at 127.0.0.1:{d.port}" in message, message


def test_a_device_with_encryption_off_is_named_so(make_node, workdir):
    """A device that answers in plain HTTP (its app's Encryption off), reached by address."""
    class Plain(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Plain)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    a, _ = node_with_localsend(make_node, "a")
    try:
        r = a.run("send", f"localsend:127.0.0.1:{server.server_address[1]}", str(JPEG), check=False)
    finally:
        server.shutdown()
        server.server_close()
    message = r.data["error"]["message"]
    assert r.returncode == 69, r.data
    assert message == (f"the LocalSend device at 127.0.0.1:{server.server_address[1]} speaks plain HTTP (encryption is "
                       "off in its app); turn Encryption on there and send again"), message
