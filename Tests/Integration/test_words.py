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


def bash_complete(node, line: str) -> list[str]:
    """What bash offers for `line` with locafoto's generated completion script, for `node`'s home."""
    import json
    import os
    import subprocess
    words = line.split(" ")
    program = f"""
        source <({json.dumps(h.BIN)} --generate-completion-script bash) || exit 9
        COMP_LINE={json.dumps(line)}; COMP_POINT=${{#COMP_LINE}}
        COMP_WORDS=({" ".join(json.dumps(w) for w in words)}); COMP_CWORD={len(words) - 1}
        _locafoto locafoto {json.dumps(words[-1])} {json.dumps(words[-2])}
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    env = {**h.clean_env(), "LOCAFOTO_HOME": str(node.home),
           "PATH": f"{os.path.dirname(h.BIN)}:{os.environ['PATH']}"}
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stderr
    return [w for w in r.stdout.splitlines() if w]


def test_completion_offers_peer_names_and_offer_ids(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    b.wait_sees(a)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    assert bash_complete(b, "locafoto accept ") == [offer["id"][:8]]
    assert bash_complete(b, f"locafoto reject {offer['id'][:3]}") == [offer["id"][:8]]
    assert a.name in bash_complete(b, "locafoto trust ")
    # Most of the name: every test agent's starts with "ita-", and other agents on this avahi-daemon may run.
    assert bash_complete(b, f"locafoto trust {a.name[:-2]}") == [a.name]
    assert b.name in bash_complete(a, "locafoto send ")
    assert bash_complete(a, "locafoto cancel ") == [offer["id"][:8]], "the transfer still running"
    b.run("reject", offer["id"][:8])
    h.finish(sender)
    assert bash_complete(b, "locafoto accept ") == [], "no offer waits"


def test_a_bad_date_is_refused_by_the_cli_in_the_words_of_its_option(make_node):
    a = make_node("a")
    r = a.run("export", "--since", "2025-13-45", str(a.home / "out"), json=False, check=False)
    assert r.returncode == 64 and "--since must be a date like 2025-11-15" in r.output, r.output
    assert not (a.home / "out").exists(), "nothing was exported"
