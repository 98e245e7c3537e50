"""What a person meets (issue 26): the sender's progress line and summary on a terminal, one
line when a send ends early, `receive` asking again on a stray Enter and dropping a question
decided elsewhere, running receives in `inbox`, and the exit-status table kept by every failure
a person runs into, with the one JSON error shape. Real agents, real CLI, a real terminal (tmux)."""

import os
import re
import subprocess

import lfharness as h
from lfharness import finish, fixture, wait_for
from test_receive import Output

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")


def photos(workdir, n: int, size: int) -> list[str]:
    """`n` distinct JPEGs of about `size` bytes (a real JPEG, padded after its end)."""
    jpeg = JPG.read_bytes()
    out = []
    for i in range(n):
        p = workdir / f"IMG_{i + 1:04d}.jpg"
        p.write_bytes(jpeg + bytes([i]) * (size - len(jpeg)))
        out.append(str(p))
    return out


def test_send_progress_has_its_total_from_the_first_byte(make_node, workdir):
    a = make_node("a", start=False)
    a.start("--limit-rate", "2M")  # slow enough for the progress line to be seen
    b = make_node("b")
    a.wait_sees(b)
    b.run("trust", a.fp_prefix)
    files = photos(workdir, 3, 2 << 20)  # 6.0 MiB in all
    term = h.Terminal(a.cmd("send", b.fp_prefix, *files, json=False))
    try:
        # The total is the whole send's from the first progress line on (it stayed "0 B"), with
        # the photo being sent counted as people count, a rate and an ETA.
        m = term.wait_match(r"Sending IMG_000\d\.jpg \((\d) of 3\)\s+\[[#·]{20}\]\s+[\d.]+ [KMG]?i?B / 6\.0 MiB\s+[\d.]+ [KMG]?i?B/s\s+ETA \d",
                            "a progress line with its total, rate and ETA")
        assert 1 <= int(m.group(1)) <= 3
        screen = term.wait_match(r"EXIT=\d", "send to end").string
        assert "EXIT=0" in screen, screen
        # The summary's rate is the transfer's: 6 MiB at 2 MiB/s, not bytes over the whole run.
        summary = re.search(r"Sent 6\.0 MiB in ([\d.]+)s \(([\d.]+) MiB/s\)", screen)
        assert summary, screen
        assert "/ 0 B" not in screen, screen
    finally:
        term.close()


def test_a_rejected_send_says_so_in_one_line(make_node, workdir):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    files = photos(workdir, 12, 40 << 10)
    sender = a.popen("send", b.fp_prefix, *files)
    offer = b.wait_offer()
    b.run("reject", offer["id"][:8])
    rc, out, err = finish(sender)
    assert rc == 1, f"{out}\n{err}"
    assert not any(f"IMG_{i:04d}.jpg" in out for i in range(1, 13)), f"a line per photo:\n{out}"
    assert re.search(r"^12 photos not sent \(\w+\)$", out, re.M), out
    assert "declined" in out, out


def test_receive_drops_a_question_decided_elsewhere_and_inbox_shows_running_receives(make_node, workdir):
    a = make_node("a", start=False)
    a.start("--limit-rate", "1M")
    b = make_node("b")
    a.wait_sees(b)
    watcher = subprocess.Popen(b.cmd("receive", json=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=h.clean_env())
    out = Output(watcher)
    senders = []
    try:
        out.wait("Waiting for offers")
        [big] = photos(workdir, 1, 6 << 20)
        senders.append(a.popen("send", b.fp_prefix, big))
        out.wait("[y/n]")
        first = b.inbox()[0]
        senders.append(a.popen("send", b.fp_prefix, str(PNG)))
        wait_for(lambda: len(b.inbox()) == 2, h.WAIT, "the second offer in B's inbox")
        # Accepted elsewhere (as the web app or another terminal would): the question goes,
        # and the next offer is asked about.
        b.run("accept", first["id"][:8], "--no-wait")
        out.wait(f"{first['id'][:8]}: accepted elsewhere")
        out.wait("nothing to answer")
        out.wait("[y/n]", 2)
        assert "Accept 1 photo (" in out.text.split("nothing to answer")[-1], out.text

        # The receive running now is in `inbox`, without --all.
        running = wait_for(lambda: next((o for o in b.inbox() if o["id"] == first["id"] and o["state"] == "accepted"), None),
                           h.WAIT, "the running receive in the inbox")
        assert running["itemCount"] == 1, running
        table = b.run("inbox", json=False).stdout
        assert re.search(rf"{first['id'][:8]}.*receiving", table), table

        watcher.stdin.write(b"n\n")
        watcher.stdin.flush()
        out.wait("rejected the offer")
        assert finish(senders[0], timeout=120)[0] == 0
        assert finish(senders[1])[0] == 1
        assert [o["id"] for o in b.inbox()] == [], "an ended receive leaves the inbox"
    finally:
        if watcher.poll() is None:
            watcher.kill()


def test_exit_statuses_follow_the_table(make_node, workdir):
    """protocol/control-api.md "Exit statuses": each failure of issue 26, with --json its one
    error shape `{"error": {"code", "message", ...}}` on stdout."""
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    b.run("trust", a.fp_prefix)

    def fails(status: int, code: str, *args: str) -> dict:
        p = a.run(*args, check=False, timeout=60)
        assert p.returncode == status, f"{args}: exit {p.returncode}, the table says {status}\n{p.output}"
        assert isinstance(p.data, dict) and set(p.data) == {"error"}, f"{args}: not the error shape\n{p.stdout}"
        error = p.data["error"]
        assert error["code"] == code and error["message"], f"{args}: {error}"
        return error

    text = workdir / "notes.jpg"
    text.write_text("a shopping list, not a photo\n")
    fails(66, "notFound", "send", "nobody-by-that-name", str(JPG), "--wait", "0")
    fails(66, "notFound", "send", b.fp_prefix, str(workdir / "missing.jpg"))
    fails(65, "unsupported", "send", b.fp_prefix, str(text))
    fails(69, "peerUnavailable", "send", "127.0.0.1:1", str(JPG), "--wait", "0")
    fails(64, "invalidRequest", "list", "--sort", "bogus")
    fails(64, "invalidRequest", "send")

    # A folder of photos and a non-photo: the photos are imported, the exit says one was not.
    folder = workdir / "mixed"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(JPG.read_bytes())
    (folder / "b.png").write_bytes(PNG.read_bytes())
    (folder / "readme.txt").write_text("not a photo\n")
    error = fails(65, "unsupported", "import", str(folder))
    assert sorted(os.path.basename(e["path"]) for e in error["import"]["imported"]) == ["a.jpg", "b.png"], error
    assert len(a.photos()) == 2

    # Export into a folder that cannot be written: 74, and the reason, not a temporary name.
    blocker = workdir / "not-a-folder"
    blocker.write_text("a file where the folder would be\n")
    photo = a.photos()[0]["id"]
    error = fails(74, "io", "export", photo[:8], str(blocker / "out"))
    assert ".partial" not in error["message"], error


def test_help_groups_commands_by_what_people_do():
    p = subprocess.run([h.BIN, "--help"], capture_output=True, text=True, timeout=30, env=h.clean_env())
    assert p.returncode == 0, p.stderr
    headings = re.findall(r"^([A-Z][A-Z ,]+) SUBCOMMANDS:$", p.stdout, re.M)
    assert headings == ["SHARING", "PEERS", "YOUR PHOTOS", "VAULT, KEYS AND BACKUPS", "RUNNING IT"], f"{headings}:\n{p.stdout}"
    sharing = p.stdout.split("SHARING SUBCOMMANDS:")[1].split("\n\n")[0]
    assert re.search(r"^\s+send\s", sharing, re.M) and re.search(r"^\s+receive\s", sharing, re.M), sharing
    assert "media-worker" not in p.stdout, "the internal worker is not listed"
    for command in ("", "key", "compress", "filter", "capture", "open"):
        text = subprocess.run([h.BIN, *([command] if command else []), "--help"], capture_output=True, text=True, timeout=30,
                              env=h.clean_env()).stdout
        assert not re.search(r"\bseed\b", text, re.I), f"`{command} --help` speaks of seeds:\n{text}"


def test_photos_the_vault_holds_are_not_stored_again(make_node, workdir):
    """The same photos sent twice are kept once, as `import` keeps them, and both sides say so."""
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    b.run("trust", a.fp_prefix)
    first = a.run("send", b.fp_prefix, str(JPG), str(PNG))
    assert [i["status"] for i in first["items"]] == ["imported", "imported"], first
    held = {p["id"] for p in b.photos()}
    assert len(held) == 2

    events = subprocess.Popen(b.cmd("receive", json=False), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=h.clean_env())
    out = Output(events)
    try:
        out.wait("Waiting for offers")
        copy = workdir / "renamed copy.jpg"
        copy.write_bytes(JPG.read_bytes())  # the same content under another name
        other = workdir / "new.jpg"
        other.write_bytes(JPG.read_bytes() + b"\0" * 64)  # new content
        p = a.run("send", b.fp_prefix, str(copy), str(PNG), str(other), json=False, check=False)
        assert p.returncode == 0, p.output
        assert re.search(r"^duplicate +renamed copy\.jpg", p.stdout, re.M) and re.search(r"^imported +new\.jpg", p.stdout, re.M), p.stdout
        assert f"imported 1 item(s); 2 already in {b.name}'s vault" in p.stdout, p.stdout
        out.wait("skipped renamed copy.jpg (already in the vault)")
        out.wait("skipped sample.png (already in the vault)")
        out.wait("completed (1 imported, 2 already in the vault, 0 waiting for unlock, 0 failed)")
    finally:
        events.kill()
    photos = b.photos()
    assert len(photos) == 3 and held < {x["id"] for x in photos}, photos
    [t] = [t for t in a.run("transfers") if len(t["items"]) == 3]
    assert [i["status"] for i in t["items"]] == ["duplicate", "duplicate", "imported"], t["items"]
    assert {t["items"][0]["photo"], t["items"][1]["photo"]} == held, "each names the photo the vault had"


def test_two_agents_started_at_once_asking_one_web_port_both_run(make_node):
    """Two agents of one user (two homes) started together, both with the default web port:
    one takes it, the other a free one; neither stops (the ports are tried by binding, so
    there is no window between a check and the bind)."""
    import socket
    import threading
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    asked = probe.getsockname()[1]
    probe.close()
    a, b = make_node("a", start=False), make_node("b", start=False)
    errors = []

    def start(n):
        try:
            n.start("--web-port", str(asked), wait_discovery=False)
        except Exception as e:  # reported below, with the agent's log
            errors.append(e)
    threads = [threading.Thread(target=start, args=(n,)) for n in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    webs = {n.key: wait_for(lambda n=n: n.run("status").get("web"), timeout=h.WAIT, what=f"{n.key}'s web app")
            for n in (a, b)}
    assert a.running and b.running
    assert len(set(webs.values())) == 2, webs
    assert f"http://127.0.0.1:{asked}/" in webs.values(), webs
    import urllib.error
    import urllib.request
    for n in (a, b):  # each web app answers on its port (asking for a login: no session yet)
        try:
            urllib.request.urlopen(webs[n.key], timeout=h.WAIT)
            raise AssertionError(f"{n.key}'s web app let a browser in without a login")
        except urllib.error.HTTPError as e:
            assert e.code == 401, (n.key, e)


def test_the_web_port_is_remembered_when_the_asked_one_is_taken(make_node):
    """A web app bookmarked at the port an agent took because its own was busy still works
    after a restart: the agent tries that port again first."""
    import socket
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    asked = busy.getsockname()[1]
    try:
        a = make_node("a", start=False)
        a.start("--web-port", str(asked))
        first = a.run("status")["web"]
        port = int(re.search(r":(\d+)/$", first).group(1))
        assert port != asked, first
        assert (a.home / "web-port").read_text() == f"{port}\n"
        assert oct((a.home / "web-port").stat().st_mode & 0o777) == "0o600"
        a.stop()
        a.start("--web-port", str(asked))
        assert a.run("status")["web"] == first, "the web app moved to another port at the restart"
        assert "as last time" in a.log_text()
    finally:
        busy.close()
