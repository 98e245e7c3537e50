"""Issue 42: LocalSend's port as hard as the peer port. An attacker on the LAN, played by a client
of our own (raw sockets and Python's ssl) from many loopback addresses, against a real agent;
the well-behaved sender after each flood is localsendd, which we did not write.

Waits are for events (the agent closing a socket: recv() returns b""; an offer reaching the inbox);
each has a hang guard far above the deadline it waits for.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time

import lfharness as h
from test_limits import GUARD, closed_by_agent, rss_kib
from test_localsend import HEIC, JPEG, RawPeer, accepted_session, file_entry, lsd, node_with_localsend  # noqa: F401


# A TLS record header announcing a 512-byte handshake message that never comes.
STALLED_HELLO = b"\x16\x03\x01\x02\x00"


def flood_socket(port: int, source: str, stall: bool) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    if stall:
        s.sendall(STALLED_HELLO)
    return s


def client_context(raw: RawPeer) -> ssl.SSLContext:
    """TLS as the apps since 1.18 speak it: their own certificate shown, the node's not checked here."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.load_cert_chain(raw.cert, raw.key)
    return ctx


def https(port: int, raw: RawPeer, method: str, path: str, body: bytes = b"", source: str = "127.0.0.1",
          headers: dict | None = None, timeout: float = 60) -> tuple[int, bytes]:
    ctx = client_context(raw)
    c = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=ctx, source_address=(source, 0))
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def prepare_body(raw: RawPeer, alias: str | None = None) -> bytes:
    info = raw.info()
    if alias:
        info["alias"] = alias
    return json.dumps({"info": info, "files": {"a": file_entry("a", JPEG)}}).encode()


def test_a_flood_is_capped_timed_out_and_given_back_while_the_node_keeps_working(make_node, lsd, workdir):
    b, port = node_with_localsend(make_node)
    a = make_node("a")
    raw = RawPeer(workdir)
    assert https(port, raw, "GET", "/api/localsend/v2/info")[0] == 200  # TLS and HTTP warmed up
    pid = b.proc.pid
    idle = rss_kib(pid)
    # 300 connections from 15 addresses of this host, 20 each: half say nothing, half stop in
    # the middle of their TLS hello. The port holds 128 at most, 24 per address.
    flood = [flood_socket(port, f"127.0.9.{1 + i // 20}", stall=i % 2 == 1) for i in range(300)]
    try:
        # The control socket and LocalSend's own state answer while the port is full.
        assert b.run("status")["fingerprint"] == b.fingerprint
        assert b.run("localsend")["enabled"] is True
        # And our own peer port: a peer's photos arrive meanwhile.
        p = a.popen("send", f"127.0.0.1:{b.port}", str(JPEG), json=True)
        b.run("accept", b.wait_offer(previews=False)["id"][:8])
        status, out, err = h.finish(p)
        assert status == 0 and json.loads(out)["state"] == "done", (out, err)
        h.wait_for(lambda: "LocalSend port: 128 connections are open, the most it takes" in b.log_text(),
                   timeout=GUARD, what="the agent to note the refused connections")
        # Every one of them is closed by the agent: those over the cap at once, the rest at the
        # TLS handshake deadline (10 s).
        for s in flood:
            assert closed_by_agent(s), "a flood connection was kept past the handshake deadline"
    finally:
        for s in flood:
            s.close()
    # The memory they took goes back (the heap is trimmed after the burst).
    h.wait_for(lambda: rss_kib(pid) < idle + 10 * 1024, timeout=GUARD,
               what=f"RSS to return within 10 MiB of idle ({idle} KiB)")
    # A device we did not write sends as usual afterwards.
    c = lsd("phone").send_async(port, HEIC)
    offer = b.wait_offer(previews=False)
    b.run("accept", offer["id"][:8])
    c.close()
    assert sorted(p["name"] for p in b.photos()) == ["photo.heic", "photo.jpg"]


def test_a_connection_without_a_request_or_with_a_stalled_body_is_closed(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    ctx = client_context(raw)
    quiet = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    # Half a request body, then nothing: the body deadline (30 s) closes it.
    trickle = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    trickle.sendall(b"POST /api/localsend/v2/register HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"al")
    # Refused at once (413, too large to read), then a byte of its body, then nothing: the
    # refusal leaves the connection idle, and the idle deadline closes it.
    refused = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    refused.sendall(b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\nContent-Length: 20000000\r\n\r\n")
    answer = http.client.HTTPResponse(refused)
    answer.begin()
    assert answer.status == 413, answer.status
    refused.sendall(b"{")
    try:
        assert closed_by_agent(quiet), "a TLS connection with no request was kept past the idle timeout"
        assert closed_by_agent(trickle), "a request body that stopped arriving was kept"
        assert closed_by_agent(refused), "a refused request's connection was kept by a byte of its body"
    finally:
        quiet.close()
        trickle.close()
        refused.close()
    assert b.run("localsend")["enabled"] is True


def test_bodies_read_at_once_have_one_budget(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    ctx = client_context(raw)
    big = 16 << 20
    held = []
    try:
        # Three 16 MiB bodies begun (their bytes reserved), from three addresses.
        for i in range(3):
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.8.{i + 1}", 0)))
            s.sendall(b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      + f"Content-Length: {big}\r\n\r\n".encode() + b"{" + b" " * 1000)
            held.append(s)
        # A fourth is refused at once, not queued, and told why.
        got, text = refused_big(port, ctx, big)
        assert got == 503 and b"too many requests at once" in text, (got, text)
    finally:
        for s in held:
            s.close()
    # Their budget is given back once they are gone.
    h.wait_for(lambda: https(port, raw, "POST", "/api/localsend/v2/register", json.dumps(raw.info()).encode())[0] == 200,
               timeout=GUARD, what="a register to be read again")


def refused_big(port: int, ctx: ssl.SSLContext, length: int) -> tuple[int, bytes]:
    """A request announcing `length` bytes whose answer comes before its body is sent."""
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), source_address=("127.0.8.9", 0)))
    try:
        s.sendall(b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  + f"Content-Length: {length}\r\n\r\n".encode())
        s.settimeout(GUARD)
        r = http.client.HTTPResponse(s)
        r.begin()
        return r.status, r.read(r.length or 0)
    finally:
        s.close()


def test_many_addresses_share_one_pin_budget_and_a_wrong_pin_keeps_nothing(make_node, workdir):
    b, port = node_with_localsend(make_node)
    pin_file = workdir / "pin"
    pin_file.write_text("4711\n")
    pin_file.chmod(0o600)
    b.run("localsend", "pin", "--pin-file", str(pin_file))
    statuses = []
    started = time.monotonic()
    # 30 guesses from 10 addresses (3 each), each with a fresh certificate and the alias of a
    # device the user has: at most 5 are compared at all.
    for i in range(30):
        squatter = RawPeer(workdir, alias=f"sq{i}")
        got, _ = https(port, squatter, "POST", "/api/localsend/v2/prepare-upload?pin=0000",
                       prepare_body(squatter, alias="Victim Phone"), source=f"127.0.7.{1 + i // 3}",
                       headers={"Content-Type": "application/json"})
        statuses.append(got)
    # One more is compared every 12 s: a slow machine may have let a few more through.
    refills = int((time.monotonic() - started) // 12)
    assert 5 <= statuses.count(401) <= 5 + refills and statuses.count(401) + statuses.count(429) == 30, statuses
    # The right PIN from a fresh address now waits too: the budget is the node's, not the address's.
    victim = RawPeer(workdir, alias="victim")
    got, text = https(port, victim, "POST", "/api/localsend/v2/prepare-upload?pin=4711",
                      prepare_body(victim, alias="Victim Phone"), source="127.0.7.99",
                      headers={"Content-Type": "application/json"})
    if refills == 0:
        assert got == 429 and b"wrong PINs" in text, (got, text)
    # Nothing was kept of any of them: no device, no offer; the alias is still free.
    assert b.run("localsend")["devices"] == []
    assert b.inbox(all=True) == []


def test_a_sender_that_stops_waiting_frees_the_node_for_the_next(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir, alias="impatient")
    out = {}

    def impatient():
        try:
            out["answer"] = https(port, raw, "POST", "/api/localsend/v2/prepare-upload", prepare_body(raw),
                                  headers={"Content-Type": "application/json"}, timeout=8)
        except (socket.timeout, TimeoutError) as e:
            out["gave up"] = e  # as the apps do: the connection is closed

    t = threading.Thread(target=impatient)
    t.start()
    t.join(timeout=GUARD)
    assert "gave up" in out, out
    # Its offer is withdrawn, not left pending for the hour it would take to expire.
    ended = h.wait_for(lambda: next((o for o in b.inbox(all=True) if o["sender"]["name"] == "impatient"
                                     and o["state"] != "pending"), None), timeout=GUARD, what="the offer to end")
    assert ended["state"] == "cancelled", ended
    # The next device is not told that another session is running.
    other = RawPeer(workdir, alias="next")
    out2 = {}
    t2 = threading.Thread(target=lambda: out2.update(answer=other.prepare(port, {"a": file_entry("a", JPEG)})))
    t2.start()
    second = h.wait_for(lambda: next((o for o in b.inbox() if o["sender"]["name"] == "next"), None),
                        timeout=GUARD, what="the next device's offer")
    b.run("reject", second["id"][:8])
    t2.join(timeout=GUARD)
    assert out2["answer"][0] == 403


def test_the_v1_info_route_answers_as_older_apps_expect(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    got, text = https(port, raw, "GET", "/api/localsend/v1/info")
    assert got == 200, (got, text)
    info = json.loads(text)
    assert info["alias"] == b.name and info["deviceType"] == "desktop" and len(info["fingerprint"]) == 64, info


def test_one_address_holds_at_most_24_connections(make_node):
    b, port = node_with_localsend(make_node)
    socks = [flood_socket(port, "127.0.6.1", stall=False) for _ in range(25)]
    try:
        h.wait_for(lambda: "127.0.6.1 already has 24 connections open, the most one address may have" in b.log_text(),
                   timeout=GUARD, what="the agent to refuse the 25th connection")
    finally:
        for s in socks:
            s.close()


def test_parallel_uploads_take_turns_and_little_memory(make_node, workdir):
    """22 uploads of one session begun at once from the sender's address (24 connections is its
    most; each upload had a megabyte buffer before: 300 took RSS to 410 MiB): 8 are read at a
    time, the rest wait unread, and all arrive."""
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    ids = [f"f{i}" for i in range(22)]
    files = {fid: file_entry(fid, JPEG, fileName=f"IMG_{i:04}.jpg") for i, fid in enumerate(ids)}
    answer = accepted_session(b, raw, port, files)
    sid, tokens = answer["sessionId"], answer["files"]
    pid = b.proc.pid
    idle = rss_kib(pid)
    data = JPEG.read_bytes()
    ctx = client_context(raw)
    held = []
    for i, fid in enumerate(ids):
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
        s.sendall(f"POST /api/localsend/v2/upload?sessionId={sid}&fileId={fid}&token={tokens[fid]} HTTP/1.1\r\n"
                  f"Host: x\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data[:1024])
        held.append(s)
    try:
        # Every upload has begun; what they hold is a few buffers each, not a megabyte.
        grown = rss_kib(pid) - idle
        assert grown < 12 * 1024, f"22 begun uploads took {grown} KiB"
        # The rest of every photo, as the apps stream them all at once (sent one by one, each
        # waiting for its answer, those holding turns would wait for bytes sent after them).
        for s in held:
            s.sendall(data[1024:])  # a few KiB: the socket's buffer takes them, read or not
        statuses = []
        for s in held:
            s.settimeout(GUARD)
            r = http.client.HTTPResponse(s)
            r.begin()
            statuses.append(r.status)
            r.read()
    finally:
        for s in held:
            s.close()
    assert statuses == [200] * 22, statuses
    assert b.ended_offer(sid)["state"] == "completed"
    # One photo (the same bytes 22 times: the rest are duplicates of it).
    assert len(b.photos()) == 1


def test_a_json_request_trickled_a_byte_at_a_time_is_closed_at_60_s(make_node, workdir):
    """A byte every 20 s never stalls the body (30 s), yet a prepare-upload must arrive whole
    within 60 s of its head: otherwise three such bodies would hold the whole body budget."""
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir)
    s = client_context(raw).wrap_socket(socket.create_connection(("127.0.0.1", port)))
    s.sendall(b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000\r\n\r\n{")
    started = time.monotonic()
    closed = False
    try:
        s.settimeout(20)
        for _ in range(6):  # at most 120 s: a hang guard
            try:
                if s.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                s.sendall(b" ")  # one more byte: the body never stalls for 30 s
            except (ConnectionResetError, ssl.SSLError):
                closed = True
                break
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        closed = True
    finally:
        s.close()
    assert closed, "a trickled JSON request was kept past 60 s"
    assert time.monotonic() - started >= 55, "closed before the whole-request deadline (by another one?)"
