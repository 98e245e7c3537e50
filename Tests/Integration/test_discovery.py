"""Discovery over mDNS (avahi-daemon on lo) and the control socket itself."""

import json
import os
import stat
import subprocess

import lfharness as h
from lfharness import wait_for


def test_discovery_both_ways_and_departure(make_node):
    a = make_node("a")
    b = make_node("b")
    b_id = b.run("id")
    a_id = a.run("id")
    assert b_id["fingerprint"] == b.fingerprint and b_id["name"] == b.name
    assert a_id["fingerprint"] == a.fingerprint and a_id["name"] == a.name
    assert a.fingerprint != b.fingerprint

    seen_b = a.wait_sees(b)
    assert seen_b["name"] == b.name
    assert seen_b["fingerprint"] == b_id["fingerprint"]
    assert seen_b["trust"] == "new"
    assert f"127.0.0.1:{b.port}" in seen_b["addresses"], seen_b

    seen_a = b.wait_sees(a)
    assert seen_a["name"] == a.name
    assert seen_a["fingerprint"] == a_id["fingerprint"]
    assert f"127.0.0.1:{a.port}" in seen_a["addresses"], seen_a

    # An agent never lists itself.
    assert a.peer(a.fingerprint) is None

    b.stop()
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.name} to stop listing {b.name} as online after it stopped")
    # B never completed a handshake with A, so it is not remembered as an offline peer either.
    assert a.peer(b.fingerprint) is None


def test_control_socket_and_identity_permissions(make_node):
    a = make_node("a")
    assert stat.S_ISSOCK(os.stat(a.socket).st_mode)
    assert stat.S_IMODE(os.stat(a.socket).st_mode) == 0o600, oct(os.stat(a.socket).st_mode)
    ident = a.home / "identity.json"
    assert stat.S_IMODE(os.stat(ident).st_mode) == 0o600, oct(os.stat(ident).st_mode)
    assert stat.S_IMODE(os.stat(a.home).st_mode) == 0o700, oct(os.stat(a.home).st_mode)
    assert stat.S_IMODE(os.stat(a.home / "agent.sqlite").st_mode) & 0o077 == 0

    # Plain HTTP/1.1 on the Unix socket, as `curl --unix-socket` would speak it.
    status, headers, body = h.http_unix(a.socket, "GET", "/v1/status")
    assert status == 200, body
    assert headers.get("content-type", "").startswith("application/json")
    s = json.loads(body)
    assert s["fingerprint"] == a.fingerprint and s["name"] == a.name and s["port"] == a.port
    assert s["vault"] == "unlocked"

    status, _, body = h.http_unix(a.socket, "GET", "/v1/id")
    assert status == 200 and json.loads(body)["fingerprint"] == a.fingerprint

    status, _, body = h.http_unix(a.socket, "GET", "/v1/no-such-thing")
    assert status == 404, body
    err = json.loads(body)["error"]
    assert err["message"], err

    status, _, body = h.http_unix(a.socket, "POST", "/v1/send", body=b"{not json")
    assert 400 <= status < 500, (status, body)
    assert json.loads(body)["error"]["message"]

    # A second agent for the same home is refused while the first one runs.
    second = subprocess.run([h.BIN, "agent", "--home", str(a.home), "--listen", "127.0.0.1", "--port", "0", "--no-discovery",
                             "--passphrase-file", str(a.passfile)], capture_output=True, text=True, timeout=30, env=h.clean_env())
    assert second.returncode != 0, f"a second agent started on the same home:\n{second.stdout}{second.stderr}"
    assert "already running" in second.stdout + second.stderr, second.stdout + second.stderr
    assert h.http_unix(a.socket, "GET", "/v1/status")[0] == 200, "the first agent stopped answering"

    # The socket goes away on a clean stop.
    a.stop()
    assert not a.socket.exists(), "control socket left behind after SIGTERM"
    r = a.run("status", check=False)
    assert r.returncode != 0
    assert "no agent is running" in r.output, r.output
