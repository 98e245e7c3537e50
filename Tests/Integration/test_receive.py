"""Receiving as a person does it (issue 10 §1–2): the agent's event stream (`GET /v1/events`),
`locafoto receive` asking about each offer as it arrives, `accept --all` waiting until the
photos are imported, and the CLI's exit statuses and JSON errors. Real agents, real CLI."""

import json
import os
import subprocess
import threading

import lfharness as h
from lfharness import fixture, finish, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")



def open_events(node, query="", accept="application/x-ndjson"):
    c = h.UnixHTTP(node.socket)
    c.request("GET", "/v1/events" + query, headers={"Accept": accept})
    r = c.getresponse()
    return c, r


def read_until(r, kind, state=None):
    """Event lines until one of `kind` (and `state`) arrives; the socket timeout is the hang guard."""
    seen = []
    while True:
        line = r.readline()
        assert line, f"the stream ended before {kind}: {seen}"
        e = json.loads(line)
        seen.append(e)
        if e["kind"] == kind and (state is None or e.get("state") == state):
            return seen


class Output:
    """Collects a process's stdout byte by byte (a prompt has no line end)."""

    def __init__(self, p):
        self.text = ""
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, args=(p.stdout,), daemon=True).start()

    def _pump(self, stream):
        while True:
            b = os.read(stream.fileno(), 4096)
            if not b:
                return
            with self.lock:
                self.text += b.decode(errors="replace")

    def wait(self, needle, count=1):
        return wait_for(lambda: self.text.count(needle) >= count, h.WAIT, f"{needle!r} ×{count} in:\n{self.text}")


def test_event_stream_follows_an_offer_from_arrival_to_import(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    # Offers and items only: agents of other test files on this machine come and go as peers.
    conn, r = open_events(b, "?kinds=offer,item")
    assert r.status == 200 and r.getheader("Content-Type") == "application/x-ndjson"
    ready = json.loads(r.readline())
    assert ready["kind"] == "ready", ready
    sender = a.popen("send", b.fp_prefix, str(JPG), str(PNG), json=True)
    arrived = read_until(r, "offer.received")[-1]
    assert arrived["state"] == "pending" and arrived["items"] == 2, arrived
    assert arrived["peer"] == {"name": a.name, "fingerprint": a.fingerprint}, arrived
    assert arrived["totalBytes"] == JPG.stat().st_size + PNG.stat().st_size
    b.run("accept", arrived["offer"][:8], "--no-wait")
    # Previews that follow the offer (cap late-preview) may still be announced meanwhile.
    rest = [e for e in read_until(r, "offer.finished") if e["kind"] != "offer.preview"]
    conn.close()
    kinds = [e["kind"] for e in rest]
    assert kinds[0] == "offer.decided" and rest[0]["state"] == "accepted", rest
    imported = [e for e in rest if e["kind"] == "item.imported"]
    assert sorted(e["name"] for e in imported) == ["sample.jpg", "sample.png"], rest
    assert {e["photo"] for e in imported} == {p["id"] for p in b.photos()}
    assert rest[-1]["state"] == "completed", rest[-1]
    seqs = [ready["seq"], arrived["seq"]] + [e["seq"] for e in rest]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
    rc, out, err = finish(sender)
    assert rc == 0, err


def test_event_stream_as_server_sent_events_and_filtered(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    conn, r = open_events(a, "?kinds=transfer.state", accept="text/event-stream")
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream"
    assert r.readline().startswith(b"id: ")
    assert r.readline() == b"event: ready\n"
    assert json.loads(r.readline().removeprefix(b"data: "))["kind"] == "ready"
    assert r.readline() == b"\n"
    b.run("trust", a.fp_prefix)
    p = a.run("send", b.name, str(JPG), json=False, check=False, timeout=60)
    assert p.returncode == 0, p.output
    states = []
    while "done" not in states:
        r.readline()  # id
        assert r.readline() == b"event: transfer.state\n", "only the kinds asked for"
        states.append(json.loads(r.readline().removeprefix(b"data: "))["state"])
        assert r.readline() == b"\n"
    conn.close()
    assert states[0] == "preparing" and "sending" in states, states

    status, _, body = h.http_unix(a.socket, "GET", "/v1/events?kinds=nonsense")
    error = json.loads(body)["error"]
    assert status == 400 and error["code"] == "invalidRequest" and "offer.received" in error["message"], body


def test_receive_asks_about_each_offer_and_follows_the_accepted_one(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    watcher = subprocess.Popen(b.cmd("receive", json=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=h.clean_env())
    out = Output(watcher)
    try:
        out.wait("Waiting for offers")
        first = a.popen("send", b.fp_prefix, str(JPG), str(PNG))
        out.wait("[y/n]")
        assert f"Accept 2 photos (" in out.text and f"from {a.name} [{a.fingerprint.split('-')[0]}]?" in out.text, out.text
        watcher.stdin.write(b"y\n")
        watcher.stdin.flush()
        out.wait("completed")
        assert "imported sample.jpg" in out.text and "imported sample.png" in out.text, out.text
        rc, _, err = finish(first)
        assert rc == 0, err
        assert sorted(p["name"] for p in b.photos()) == ["sample.jpg", "sample.png"]

        second = a.popen("send", b.fp_prefix, str(JPG))
        out.wait("[y/n]", 2)
        assert "Accept 1 photo (" in out.text, out.text
        watcher.stdin.write(b"\n")  # a stray Enter decides nothing: the question again
        watcher.stdin.flush()
        out.wait("Answer y to accept or n to reject.")
        out.wait("[y/n]", 3)
        assert b.inbox()[0]["state"] == "pending", "nothing was decided"
        watcher.stdin.write(b"n\n")
        watcher.stdin.flush()
        out.wait("rejected the offer")
        rc, _, err = finish(second)
        assert rc == 1, "a rejected send fails"

        third = a.popen("send", b.fp_prefix, str(PNG))
        out.wait("[y/n]", 4)
        watcher.stdin.close()  # no more answers: the offer stays in the inbox
        out.wait("standard input ended")
        [waiting] = b.inbox()
        assert waiting["state"] == "pending", waiting
        b.run("reject", waiting["id"][:8])
        finish(third)

        b.stop()  # the agent stops: the watcher learns it and ends cleanly
        assert watcher.wait(timeout=h.WAIT) == 0
        out.wait("The agent stopped")
    finally:
        if watcher.poll() is None:
            watcher.kill()


def test_accept_all_returns_once_the_photos_are_imported(make_node):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    senders = [a.popen("send", b.fp_prefix, str(JPG)), a.popen("send", b.fp_prefix, str(PNG))]
    wait_for(lambda: len(b.inbox()) == 2, h.WAIT, "two offers in b's inbox")
    p = b.run("accept", "--all", json=False, check=False, timeout=60)
    assert p.returncode == 0, p.output
    # Returned only now: both photos are in the vault, not on their way.
    assert sorted(x["name"] for x in b.photos()) == ["sample.jpg", "sample.png"], p.output
    assert p.stdout.count("accepted 1 item(s)") == 2 and p.stdout.count(": 1 imported") == 2, p.stdout
    for s in senders:
        assert finish(s)[0] == 0

    nothing = b.run("accept", "--all")
    assert nothing == {"offers": []}, nothing


def test_exit_statuses_and_json_errors(make_node, workdir):
    b = make_node("b")
    missing = b.run("accept", "deadbeef", check=False)
    assert missing.returncode == 66, missing.output
    error = missing.data["error"]  # the one error shape, the offer as it ended beside it
    assert error["code"] == "notFound" and "no offer" in error["message"], missing.stdout
    assert error["offer"]["state"] == "failed", missing.stdout
    usage = b.run("accept", check=False)
    assert usage.returncode == 64 and "--all" in usage.output, usage.output

    nobody = h.Node(workdir, "z", "nobody")  # no agent runs for this home
    p = subprocess.run(nobody.cmd("status"), capture_output=True, text=True, env=h.clean_env())
    assert p.returncode == 69, p
    assert json.loads(p.stdout) == {"error": {"code": "unavailable", "message": p.stderr.removeprefix("locafoto: ").strip()}}, p

    locked = make_node("l", locked=True)
    r = locked.run("list", check=False)
    assert r.returncode == 75 and json.loads(r.stdout)["error"]["code"] == "vaultLocked", r.output
