"""Sending to several peers at once, and cancelling a transfer from either side, through the CLI
as a user runs it: `send PEER PEER FILE…`, `cancel ID`, `reject ID` on a running receive, and
Ctrl-C on `send` in a real terminal (tmux)."""

import json
import subprocess

import lfharness as h
from lfharness import fixture, finish, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")


def test_send_to_two_peers_each_decides(make_node, workdir):
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    a.wait_sees(b)
    a.wait_sees(c)
    sender = a.popen("send", b.name, c.fp_prefix, str(JPG), str(PNG), json=True)
    offer_b, offer_c = b.wait_offer(), c.wait_offer()
    assert offer_b["id"] != offer_c["id"], "each peer gets its own offer"
    assert [i["name"] for i in offer_b["items"]] == [i["name"] for i in offer_c["items"]] == ["sample.jpg", "sample.png"]
    b.run("accept", offer_b["id"][:8])
    c.run("reject", offer_c["id"][:8])

    rc, out, err = finish(sender)
    assert rc == 1, f"a rejection by one peer is a failure of the send:\n{out}\n{err}"
    error = json.loads(out)["error"]  # the one error shape, the transfers beside it
    assert error["code"] == "failed" and c.name in error["message"], error
    transfers = {t["peer"]["fingerprint"]: t for t in error["transfers"]}
    assert transfers[b.fingerprint]["state"] == "done" and transfers[b.fingerprint]["id"] == offer_b["id"], transfers
    assert transfers[c.fingerprint]["state"] == "rejected" and transfers[c.fingerprint]["id"] == offer_c["id"], transfers
    assert sorted(p["name"] for p in b.photos()) == ["sample.jpg", "sample.png"]
    assert c.photos() == []


def test_send_to_two_trusting_peers_in_text(make_node):
    a, b, c = make_node("a"), make_node("b"), make_node("c")
    for n in (b, c):
        a.wait_sees(n)
        n.run("trust", a.fp_prefix)
    p = a.run("send", b.name, c.name, str(JPG), json=False, check=False, timeout=60)
    assert p.returncode == 0, p.output
    assert f"{b.name}:" in p.stdout and f"{c.name}:" in p.stdout, p.stdout
    assert p.stdout.count("imported 1 item(s)") == 2, p.stdout
    assert [x["name"] for x in b.photos()] == [x["name"] for x in c.photos()] == ["sample.jpg"]


def test_cancel_a_pending_offer_removes_it_from_the_receivers_inbox(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG), json=True)
    offer = b.wait_offer()
    r = a.run("cancel", offer["id"][:8])  # the id send printed is the id the inbox shows
    assert r["state"] == "cancelled" and r["message"] == "cancelled by the user", r
    rc, out, err = finish(sender)
    assert rc == 1 and json.loads(out)["error"]["transfer"]["state"] == "cancelled", f"{out}\n{err}"
    wait_for(lambda: b.inbox() == [], h.WAIT, "the offer to leave B's inbox")
    [o] = b.inbox(all=True)
    assert o["state"] == "cancelled" and a.name in (o.get("message") or ""), o
    again = b.run("accept", offer["id"][:8], check=False)
    assert again.returncode != 0 and "cancelled" in again.output, again.output
    done = a.run("cancel", offer["id"][:8], check=False)
    assert done.returncode != 0 and "already ended" in done.output, done.output


def test_receiver_stops_a_running_receive(make_node, workdir):
    a = make_node("a", start=False)
    a.start("--limit-rate", "1M")  # slow enough to stop in the middle
    b = make_node("b")
    a.wait_sees(b)
    b.run("trust", a.fp_prefix)
    big = workdir / "big.jpg"
    big.write_bytes(JPG.read_bytes() + bytes(range(256)) * (40 * 1024))  # ~10 MiB
    sender = a.popen("send", b.fp_prefix, str(big), json=True)
    offer = wait_for(lambda: next(iter(b.inbox(all=True)), None), h.WAIT, "the transfer to start at B")
    wait_for(lambda: h.files_in(b.spool), h.WAIT, "B to spool part of the photo")
    r = b.run("reject", offer["id"][:8])
    assert r["state"] == "cancelled", r
    rc, out, err = finish(sender)
    t = json.loads(out)["error"]["transfer"]
    assert rc == 1 and t["state"] == "cancelled" and b.name in t["message"], t
    assert a.run("transfers") and all(x["state"] != "interrupted" for x in a.run("transfers")), "not left to resume"
    wait_for(lambda: not h.files_in(b.spool), h.WAIT, "B to delete the partial photo")
    assert b.photos() == []


def test_ctrl_c_on_send_asks_whether_to_cancel(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    term = h.Terminal(a.cmd("send", b.fp_prefix, str(JPG), json=False))
    try:
        term.wait("Waiting for", "send to wait for B's decision")
        offer = b.wait_offer()
        term.keys("C-c")
        term.wait(f"Cancel the transfer to {b.name}? [y/N]", "the question")
        term.keys("n", "Enter")
        term.wait("Still sending.", "send to go on")
        assert b.inbox() and "EXIT=" not in term.screen(), "answering no cancels nothing"
        term.keys("C-c")
        wait_for(lambda: term.screen().count("Cancel the transfer to") == 2, h.WAIT, "the question again")
        term.keys("y", "Enter")
        screen = term.wait("EXIT=", "send to end")
        assert "EXIT=1" in screen and "cancelled by the user" in screen, screen
        wait_for(lambda: b.inbox() == [], h.WAIT, "the offer to leave B's inbox")
        assert [o["state"] for o in b.inbox(all=True)] == ["cancelled"], offer
    finally:
        term.close()
