"""Issue 8 §3: one peer cannot exhaust a node.

Before: ~1,000 idle TCP connections locked the agent out at a 1024 open-files limit; nothing
capped connections or bounded a handshake; a peer sending a byte every 4 s was never timed out;
memory taken by half-sent frames stayed after the connections closed; fresh keys got around the
per-peer limits; every handshake under `trusted`/`off` added a peer row.

Waits here are for events (the agent closing a socket: recv() returns b""); each has a hang
guard far above the configured deadline, so a loaded machine cannot fail them.
"""

from __future__ import annotations

import os
import resource
import socket
import sqlite3
import struct

import lfharness as h
import rogue

GUARD = 120.0  # hang guard for "the agent closes this connection"


def closed_by_agent(sock: socket.socket, guard: float = GUARD) -> bool:
    """True once the agent has closed `sock` (EOF or reset); False if the guard ran out."""
    sock.settimeout(guard)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def still_open(sock: socket.socket) -> bool:
    """Non-blocking: the agent has not closed it (nothing to read, no EOF)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_handshake_deadline_closes_a_silent_connection(make_node):
    a = make_node("a", start=False)
    # With the idle timeout at an hour, only the handshake deadline can close it within the guard.
    a.start("--handshake-timeout", "2", "--frame-timeout", "600", "--idle-timeout", "3600")
    s = connect(a.port)
    try:
        assert closed_by_agent(s), "a connection that never started its handshake was kept"
    finally:
        s.close()
    assert a.run("status")["fingerprint"] == a.fingerprint


def test_frame_deadline_closes_a_trickling_peer(make_node):
    a = make_node("a", start=False)
    a.start("--handshake-timeout", "120", "--frame-timeout", "2", "--idle-timeout", "3600")
    s = connect(a.port)
    try:
        # Announce a 4,000-byte frame (allowed before the handshake), then trickle a byte a second. Bytes keep
        # coming (no idle timeout) and the guard ends before the handshake deadline: only the
        # frame deadline can close it.
        s.sendall(struct.pack(">H", 4000))
        closed = False
        for _ in range(90):
            try:
                s.send(b"\x00")
            except OSError:
                closed = True
                break
            s.settimeout(1.0)
            try:
                if s.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
            except ConnectionResetError:  # closed with the trickled bytes unread
                closed = True
                break
        assert closed, "a peer trickling one byte a second kept its connection"
    finally:
        s.close()
    # The agent says why it closed (not that the peer did).
    h.wait_for(lambda: "frame timeout (2 s)" in a.log_text(), what="the agent to log the frame timeout")


def test_oversized_frame_before_the_handshake_is_refused_at_once(make_node):
    a = make_node("a", start=False)
    a.start("--handshake-timeout", "120", "--frame-timeout", "600")
    s = connect(a.port)
    try:
        s.sendall(struct.pack(">H", 65000) + b"\x00" * 1000)
        assert closed_by_agent(s, guard=60), "a 65,000-byte frame was buffered before any handshake"
    finally:
        s.close()


def test_connection_caps_overall_and_per_address(make_node):
    a = make_node("a", start=False)
    a.start("--max-connections", "6", "--max-connections-per-address", "3", "--handshake-timeout", "120")
    held = [connect(a.port, "127.0.0.1") for _ in range(3)]
    try:
        extra = connect(a.port, "127.0.0.1")
        assert closed_by_agent(extra, guard=60), "a 4th connection from one address was kept"
        extra.close()
        held += [connect(a.port, f"127.0.0.{n}") for n in (2, 3, 4)]
        other = connect(a.port, "127.0.0.5")
        assert closed_by_agent(other, guard=60), "a 7th connection overall was kept"
        other.close()
        assert all(still_open(s) for s in held), "an admitted connection was closed"
        assert "refused" in a.log_text() and "max-connections" in a.log_text()
        # A slot freed is a slot usable: a real handshake from 127.0.0.1 completes.
        held.pop(0).close()
        r = h.wait_for(lambda: rogue.Rogue("after").connect(a.port), timeout=60, what="a handshake once a slot is free")
        r.close()
    finally:
        for s in held:
            s.close()


def test_a_thousand_idle_connections_do_not_lock_the_agent_out(make_node):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    a = make_node("a", start=False)
    # The agent starts with the common soft limit of 1024 open files, and raises it itself.
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        a.start("--handshake-timeout", "120", "--max-connections-per-address", "2000")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    limits = open(f"/proc/{a.proc.pid}/limits").read()
    line = next(l for l in limits.splitlines() if l.startswith("Max open files"))
    assert line.split()[3] == str(hard), line
    socks = []
    try:
        for i in range(1100):
            socks.append(connect(a.port, f"127.0.{1 + i // 250}.{1 + i % 250}"))
        # The control socket and new peers still work (the cap refused what was over it).
        assert a.run("status")["fingerprint"] == a.fingerprint
        st = h.wait_for(lambda: sum(1 for s in socks if not still_open(s)) >= 1100 - 256 and a.run("status"),
                        timeout=GUARD, what="connections over the cap of 256 to be refused")
        assert st["fingerprint"] == a.fingerprint
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    r = h.wait_for(lambda: rogue.Rogue("late").connect(a.port), timeout=60, what="a handshake after the flood")
    r.close()


def test_memory_returns_after_connections_with_half_sent_frames_close(make_node):
    """After a handshake (65,535-byte frames allowed), 200 peers each leave a 65,000-byte frame
    unfinished; once they close, the agent's RSS goes back near where it was."""
    a = make_node("a", start=False)
    # No mDNS: nothing here needs it, and nothing else may allocate while RSS is compared.
    a.start("--max-connections-per-address", "1000", "--frame-timeout", "600", "--no-discovery", wait_discovery=False)
    pid = a.proc.pid
    warm = [rogue.Rogue(f"w{i}").connect(a.port) for i in range(5)]
    for r in warm:
        r.close()
    baseline = rss_kib(pid)
    peers = []
    try:
        for i in range(200):
            r = rogue.Rogue(f"m{i}").connect(a.port, host="127.0.0.1")
            r.session.sock.sendall(struct.pack(">H", 65000) + os.urandom(64000))
            peers.append(r)
        loaded = h.wait_for(lambda: (lambda v: v if v > baseline + 8 * 1024 else None)(rss_kib(pid)), timeout=GUARD,
                            what="the half-sent frames to be buffered")
    finally:
        for r in peers:
            r.close()
    after = h.wait_for(lambda: (lambda v: v if v < baseline + 4 * 1024 else None)(rss_kib(pid)), timeout=GUARD,
                       what=f"RSS to return near {baseline} KiB (was {loaded} KiB with the frames held)")
    assert after < loaded


def test_fresh_keys_meet_global_inbox_bounds(make_node):
    b = make_node("b")
    ids = []
    for k in range(100):
        r = rogue.Rogue(f"k{k}").connect(b.port)
        ids.append(r.offer([rogue.fake_item(f"k{k}.jpg")]))
        r.close()
    h.wait_for(lambda: len(b.run("inbox")) == 100, timeout=GUARD, what="100 offers from 100 keys")
    r = rogue.Rogue("k100").connect(b.port)
    try:
        r.offer([rogue.fake_item("one-too-many.jpg")])
        mtype, obj = r.next_message()
    finally:
        r.close()
    assert mtype == rogue.pp.DECISION and obj["decision"] == "rejected" and obj.get("code") == 4, obj  # rate_limited
    assert "inbox is full" in obj.get("message", ""), obj
    assert len(b.run("inbox")) == 100
    # A trusted peer is not held back by strangers' offers.
    friend_seed = os.urandom(32)
    f = rogue.Rogue("friend", seed=friend_seed).connect(b.port)
    f.close()
    b.run("trust", rogue.pp.Identity(friend_seed).fingerprint.split("-")[0])
    f = rogue.Rogue("friend", seed=friend_seed).connect(b.port)
    try:
        f.offer([rogue.fake_item("from-a-friend.jpg")])
        mtype, obj = f.next_message()
        assert mtype == rogue.pp.DECISION and obj["decision"] == "accepted", obj
    finally:
        f.close()


def test_fresh_keys_meet_the_global_item_bound(make_node):
    b = make_node("b")
    for k in range(5):
        r = rogue.Rogue(f"i{k}").connect(b.port)
        r.offer([rogue.fake_item(f"i{k}-{i}.jpg") for i in range(10_000)])
        h.wait_for(lambda: len(b.run("inbox")) == k + 1, timeout=GUARD, what=f"offer {k + 1}")
        r.close()
    r = rogue.Rogue("i5").connect(b.port)
    try:
        r.offer([rogue.fake_item(f"i5-{i}.jpg") for i in range(10)])
        mtype, obj = r.next_message()
    finally:
        r.close()
    assert obj["decision"] == "rejected" and obj.get("code") == 4 and "inbox is full" in obj["message"], obj


def test_handshakes_under_trusted_or_off_leave_no_peer_rows(make_node):
    b = make_node("b")
    db = b.home / "agent.sqlite"

    def rows() -> int:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT COUNT(*) FROM peer").fetchone()[0]

    for policy in ("trusted", "off"):
        b.run("policy", policy)
        before = rows()
        for k in range(30):
            r = rogue.Rogue(f"{policy}{k}").connect(b.port)
            r.offer([rogue.fake_item("x.jpg")])
            mtype, obj = r.next_message()
            r.close()
            assert obj["decision"] == "rejected" and obj.get("code") == 3, obj  # refused_by_policy
        assert rows() == before, f"policy {policy}: handshakes from strangers added peer rows"
    b.run("policy", "everyone")
    r = rogue.Rogue("welcome").connect(b.port)
    r.close()
    h.wait_for(lambda: rows() >= 1, timeout=60, what="a peer row under policy everyone")


def test_stopping_while_clients_connect_is_clean(make_node):
    """A client connecting while the agent stops (the CLI's long poll reconnects at once when a
    stopping agent answers it) once crashed it: an accepted connection dropped unread by the
    closing listener trapped in NIO ("Deinited NIOAsyncWriter without calling finish()"). The
    agent must exit 0 however connections race its shutdown, on the control socket and on the
    peer port."""
    import threading

    for round_ in range(4):
        n = make_node(f"s{round_}")
        stop = threading.Event()

        def hammer_control():
            while not stop.is_set():
                try:
                    h.http_unix(n.socket, "GET", "/v1/status", timeout=2)
                except (OSError, ValueError, IndexError, AssertionError):
                    pass

        def hammer_peer_port():
            while not stop.is_set():
                try:
                    socket.create_connection(("127.0.0.1", n.port), timeout=1).close()
                except OSError:
                    pass

        threads = [threading.Thread(target=f, daemon=True) for f in (hammer_control, hammer_control, hammer_peer_port)]
        for t in threads:
            t.start()
        try:
            n.stop()  # raises unless the agent exits 0 within the stop timeout
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=10)
