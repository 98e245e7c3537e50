"""LocalSend (issue 27) against a second implementation we did not write: localsend-cli 0.1.1
(PyPI; `localsend-cli send` and `receive`, HTTPS with an RSA certificate, fingerprints in
lowercase hex, no client certificate when it sends). Both directions, real TLS on 127.0.0.1.

Its receiver listens on LocalSend's port 53317 only (no option to change it), so both
directions are in one test. Waits follow the processes and the agent's inbox; nothing sleeps.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess

import lfharness as h
from lfharness import wait_for
from test_localsend import HEIC, JPEG, node_with_localsend

CLI = shutil.which("localsend-cli") or "localsend-cli"


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_localsend_cli_both_ways(make_node, workdir):
    b, port = node_with_localsend(make_node)
    env = {**h.clean_env(), "HOME": str(workdir)}  # its certificate lives in ~/.config/localsend-cli
    env.pop("REQUESTS_CA_BUNDLE", None)
    env.pop("CURL_CA_BUNDLE", None)

    # localsend-cli → the node: it shows no client certificate, so it is unverified (never
    # trusted) and its offer waits; it gives the receiver 10 s to answer.
    p = subprocess.Popen([CLI, "send", "127.0.0.1", "--port", str(port), str(JPEG), str(HEIC), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        offer = b.wait_offer(previews=False)
        assert offer["sender"]["fingerprint"].startswith("localsend:unverified:"), offer["sender"]
        assert offer["sender"]["trusted"] is False
        b.run("accept", "--no-wait", offer["id"][:8])
        out, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 0, (out, err)
    assert json.loads(out.strip().splitlines()[-1])["event"] == "done", out
    assert b.ended_offer(offer["id"])["state"] == "completed"
    assert sorted(x["name"] for x in b.photos()) == ["photo.heic", "photo.jpg"]

    # The node → localsend-cli (`receive --clean` accepts by itself), by address: its
    # certificate is learnt through /register, whose fingerprint localsend-cli writes in lowercase.
    out_dir = workdir / "received"
    out_dir.mkdir()
    r = subprocess.Popen([CLI, "receive", "--output", str(out_dir), "--clean"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    try:
        wait_for(lambda: listening(53317) or r.poll() is not None, what="localsend-cli to listen on 53317")
        assert r.poll() is None, r.stdout.read()
        photo = b.photos()[0]
        t = b.run("send", "localsend:127.0.0.1", "--photo", photo["id"])
        assert t["state"] == "done", t
        assert t["peer"]["fingerprint"].startswith("localsend:") and len(t["peer"]["fingerprint"]) == 74, t
        sent = JPEG if photo["name"] == "photo.jpg" else HEIC
        assert (out_dir / photo["name"]).read_bytes() == sent.read_bytes()
        device = next(d for d in b.run("localsend")["devices"] if d["fingerprint"] == t["peer"]["fingerprint"][10:])
        assert device["alias"], device
    finally:
        h.terminate(r, timeout=10)
