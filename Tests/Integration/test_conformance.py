"""Issue 12: the agent held to the MUSTs of protocol/, as independent peers meet it.

The peers here are the independent Python implementation (scripts/interop/python_peer.py) and
the hostile receiver built on it (rogue.py), never the agent's own code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import rogue
from lfharness import fixture, wait_for

PEER = Path(__file__).resolve().parents[2] / "scripts" / "interop" / "python_peer.py"


def python_send(node, seed, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(PEER), "send", "--host", "127.0.0.1", "--port", str(node.port),
         "--expect-fingerprint", node.fingerprint, "--seed-file", str(seed), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(p: subprocess.Popen, timeout: float = 120) -> tuple[int, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out + err


def test_an_offer_sent_again_without_resume_is_not_imported_twice(make_node, workdir):
    """handshake.md cap `resume`: a sender without it sends every item again from 0; the
    receiver reports the earlier result and commits nothing a second time."""
    b = make_node("b")
    seed = workdir / "python-peer.seed"
    offer = str(uuid.uuid4())
    files = [str(fixture("sample.jpg")), str(fixture("sample.png"))]
    p = python_send(b, seed, "--offer-id", offer, *files)
    b.run("accept", b.wait_offer()["id"][:8])
    rc, first = finished(p)
    assert rc == 0, first
    photos = sorted(re.findall(r": imported photo=(\S+)", first))
    assert len(photos) == 2, first
    assert len(b.photos()) == 2

    # The same offer again: the earlier decision stands (no prompt), and each item's earlier
    # result comes back instead of a second import.
    rc, again = finished(python_send(b, seed, "--offer-id", offer, *files))
    assert rc == 0, again
    assert sorted(re.findall(r": imported photo=(\S+)", again)) == photos, again
    assert len(b.photos()) == 2, "an item was imported twice"


def test_a_decision_that_breaks_the_rules_is_answered_with_an_error(make_node):
    """messages.md, sender state machine: a DECISION whose `resume` names an item outside the
    offer is a protocol_violation; the sender says so (ERROR) before closing, and the transfer
    fails for good."""
    a = make_node("a")
    rx = rogue.RogueReceiver(decision="accepted", message="ok", code=None,
                             extra={"resume": [{"item": 7, "offset": 10}]}, shout=False)
    try:
        p = a.run("send", f"127.0.0.1:{rx.port}", str(fixture("sample.jpg")), json=False, check=False)
        assert p.returncode != 0, p.output
        assert rx.offers, f"the rogue receiver saw no offer: {rx.errors}"
        wait_for(lambda: rx.after, 30, "the sender's answer to the bad DECISION")
        kind, body = rx.after[0]
        assert kind == rogue.pp.ERROR and body["code"] == 1, rx.after
        assert body.get("offer") == rx.offers[-1], body
        listed = a.run("transfers")
        assert listed[0]["state"] == "failed" and "protocol_violation" in listed[0]["message"], listed[0]
    finally:
        rx.close()


def test_an_item_whose_content_is_not_the_offered_kind_fails(make_node, workdir):
    """messages.md OFFER `kind`: the user accepted "a PNG"; a JPEG under that kind fails with
    unsupported_content and nothing of it is kept."""
    b = make_node("b")
    p = python_send(b, workdir / "python-peer.seed", "--declare-kind", "png", str(fixture("sample.jpg")))
    offer = b.wait_offer()
    assert offer["items"][0]["kind"] == "png", offer
    accepted = b.run("accept", offer["id"][:8], check=False)
    assert accepted.returncode == 1 and '"failed"' in accepted.stdout, accepted.stdout
    rc, out = finished(p)
    assert rc == 1, out
    assert re.search(r"item 0 sample\.jpg: failed code=10 \(unsupported_content\)", out), out
    assert "offered as" in out, out
    assert b.photos() == []
    assert not b.spool.exists() or list(b.spool.iterdir()) == []


def test_a_transfer_a_protocol_error_ends_keeps_nothing_partial(make_node, workdir):
    """messages.md session state machine: a protocol error ends the session and the transfer;
    what was committed stays, the item in progress is deleted, and no item of the ended offer is
    listed as still arriving (the agent left a large item `receiving`)."""
    b = make_node("b")
    big = workdir / "big.jpg"
    # Over 4 MiB: the receiver records such an item as `receiving` when it starts.
    big.write_bytes(fixture("sample.jpg").read_bytes() + os.urandom(5 << 20))
    p = python_send(b, workdir / "python-peer.seed", "--gap-in-item", "1", str(fixture("sample.png")), str(big))
    offer = b.wait_offer()
    b.run("accept", offer["id"][:8], check=False)
    rc, out = finished(p)
    assert rc != 0, out
    ended = wait_for(lambda: next((o for o in b.inbox(all=True) if o["id"] == offer["id"] and o["state"] == "failed"), None),
                     30, "the offer ended failed")
    statuses = [i["status"] for i in ended["items"]]
    # The PNG is imported or, if it still waited for its group commit, failed with the session.
    assert statuses[1] == "failed" and statuses[0] in ("imported", "failed"), ended["items"]
    assert len(b.photos()) == statuses.count("imported")
    assert not b.spool.exists() or list(b.spool.iterdir()) == [], list(b.spool.iterdir())
