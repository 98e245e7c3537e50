"""Issue 8 §2: text from a peer cannot drive the user's terminal or forge log lines.

Before: a hostile receiver's DECISION/ERROR message set the terminal title, cleared the screen
and printed a forged "all photos imported" line in `send` and `transfers`; C1 controls, bidi
overrides and line separators in names reached `inbox` and `peers`; ESC, BEL and newlines from a
peer reached the agent's log.
"""

from __future__ import annotations

import lfharness as h
import rogue
from lfharness import fixture


def test_hostile_receiver_messages_are_escaped_in_send_and_transfers(make_node):
    a = make_node("a")
    rx = rogue.RogueReceiver(name="evil\x1b[2Jrx")
    try:
        p = a.run("send", f"127.0.0.1:{rx.port}", str(fixture("sample.jpg")), json=False, check=False)
        assert p.returncode != 0, p.output
        assert rx.offers, f"the rogue receiver saw no offer: {rx.errors}"
        assert not rogue.contains_unsafe(p.output), p.output
        # The message is still shown, made harmless.
        assert "all photos imported" in p.output and "pwned" in p.output, p.output
        assert "\n" + "all photos imported" not in p.output, "a peer's newline reached the terminal"

        t = a.run("transfers", json=False)
        assert not rogue.contains_unsafe(t.stdout + t.stderr), t.stdout
        listed = a.run("transfers")
        message = listed[0]["message"]
        assert not rogue.contains_unsafe(message), message
        raw = a.run("transfers", "--json", json=False).stdout
        assert not rogue.contains_unsafe(raw), raw
    finally:
        rx.close()
    log = a.log_text()
    assert "\x1b" not in log and "\x07" not in log and "\u202e" not in log, log[-2000:]
    assert not any(line.startswith("all photos imported") for line in log.splitlines()), log[-2000:]


def test_hostile_names_are_refused_or_escaped(make_node):
    b = make_node("b")
    seed = rogue.os.urandom(32)
    name = "na\x1bme\u202e\u2028x\x85"
    for bad in ("bidi\u202egpj.exe", "line\u2028sep.jpg", "nel\x85.jpg", "c1\x9b31m.jpg", "esc\x1b[2J.jpg"):
        s = rogue.Rogue(name, seed=seed).connect(b.port)
        try:
            s.offer([rogue.fake_item(bad)])
            mtype, obj = s.next_message()
        finally:
            s.close()
        # protocol_violation (an ERROR, or a DECISION rejected): the name is refused.
        assert mtype in (rogue.pp.DECISION, rogue.pp.ERROR), (mtype, obj)
        assert obj.get("code") == 1 and obj.get("decision", "rejected") == "rejected", obj
        assert not rogue.contains_unsafe(obj.get("message", "")), obj
    s = rogue.Rogue(name, seed=seed).connect(b.port)
    try:
        good = s.offer([rogue.fake_item("fine name.jpg")])
        h.wait_for(lambda: b.run("inbox"), timeout=60, what="the clean offer in the inbox")
    finally:
        s.close()
    offers = b.run("inbox")
    assert [o["id"] for o in offers] == [good]
    name = offers[0]["sender"]["name"]
    assert not rogue.contains_unsafe(name), name
    for args in (["inbox"], ["peers"]):
        out = b.run(*args, json=False)
        assert not rogue.contains_unsafe(out.stdout + out.stderr), out.stdout
        raw = b.run(*args, "--json", json=False).stdout
        assert not rogue.contains_unsafe(raw), raw
    log = b.log_text()
    assert "\x1b" not in log and "\u202e" not in log and "\u2028" not in log and "\x85" not in log, log[-2000:]
