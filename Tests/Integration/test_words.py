"""Errors in the user's words (issue 10 §2): a connection that fails says why at which address,
never NIO's description of it; `send HOST` without a port uses the default port; the `trust`
command `pair` suggests works as printed. Real agents, real CLI."""

import re
import shlex
import socket

import pytest

import lfharness as h
from lfharness import fixture

JPG = fixture("sample.jpg")
RAW = re.compile(r"SingleConnectionFailure|NIOConnectionError|IOError|errno|NSCocoaErrorDomain|Error Domain")


def refused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_connection_failures_are_worded(make_node):
    a = make_node("a")
    port = refused_port()
    sent = a.run("send", f"127.0.0.1:{port}", str(JPG), json=False, check=False)
    assert sent.returncode != 0 and not RAW.search(sent.output), sent.output
    assert f"127.0.0.1:{port}" in sent.output and "connection refused" in sent.output, sent.output
    paired = a.run("pair", f"127.0.0.1:{port}", json=False, check=False)
    assert paired.returncode == 69, paired.output  # unavailable, not an internal error
    assert "connection refused" in paired.output and not RAW.search(paired.output), paired.output


def test_send_to_an_address_without_a_port_uses_the_default_port(make_node):
    a = make_node("a")
    b = make_node("b", start=False)
    b.start("--port", "47820", wait_discovery=False)
    if b.port != 47820:
        pytest.skip(f"port 47820 is taken on this machine (the agent took {b.port})")
    sender = a.popen("send", "127.0.0.1", str(JPG))
    offer = b.wait_offer()
    assert offer["sender"]["fingerprint"] == a.fingerprint
    b.run("accept", offer["id"][:8])
    rc, out, err = h.finish(sender)
    assert rc == 0, out + err
    assert [p["name"] for p in b.photos()] == ["sample.jpg"]


def test_the_trust_command_pair_suggests_works(make_node):
    a, b = make_node("a"), make_node("b")
    p = a.run("pair", f"127.0.0.1:{b.port}", json=False)
    assert p.returncode == 0, p.output
    m = re.search(r"`locafoto (trust [^`]+)`", p.stdout)
    assert m, p.stdout
    r = a.run(*shlex.split(m.group(1)), json=False, check=False)
    assert r.returncode == 0, f"the suggested `{m.group(1)}` failed:\n{r.output}"
    assert a.peer(b.fingerprint)["trust"] == "trusted"
