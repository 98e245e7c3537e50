"""Offers as desktop notifications (issue 10 §3), against a real notification server: dunst on
a private D-Bus session bus, drawing on Xvfb. The user's choice is made where a dunst user makes
it, in dunst's own context menu (`dunstctl context`), which dunst hands to its `dmenu` program:
here a script that picks the line with the label the test asks for, as a person would click it.
What the agent sent is read off the bus with dbus-monitor. Without a session bus the agent says
so once and carries on."""

import os
import re
import shutil
import subprocess
import time

import pytest

import lfharness as h
from lfharness import fixture, finish, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")

for tool in ("dunst", "dunstctl", "Xvfb", "dbus-daemon", "dbus-monitor"):
    if shutil.which(tool) is None:  # scripts/setup.sh installs them; say which is missing
        pytest.fail(f"{tool} is not installed: run scripts/setup.sh (it installs dunst, xvfb and dbus)", pytrace=False)


class Desktop:
    """Xvfb, a private session bus, dunst on both, and a monitor of the notifications sent."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        self.choice = root / "choice"
        self.menu = root / "menu.txt"
        picker = root / "pick.sh"
        picker.write_text(f'#!/bin/sh\ntee "{self.menu}" | grep -m1 -F -- "#$(cat "{self.choice}") "\n')
        picker.chmod(0o755)
        (root / "dunstrc").write_text(f"[global]\n    dmenu = {picker}\n")
        r, w = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                                pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        self.procs.append(xvfb)
        with os.fdopen(r) as f:
            self.display = ":" + f.readline().strip()
        bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                             capture_output=True, text=True, check=True)
        self.address, pid = bus.stdout.split("\n")[:2]
        self.bus_pid = int(pid)
        env = {**os.environ, "DISPLAY": self.display, "DBUS_SESSION_BUS_ADDRESS": self.address}
        self.env = env
        self.log = open(root / "monitor.txt", "w")
        self.procs.append(subprocess.Popen(
            ["dbus-monitor", "--address", self.address, "interface='org.freedesktop.Notifications'"],
            stdout=self.log, stderr=subprocess.DEVNULL))
        self.procs.append(subprocess.Popen(["dunst", "-config", str(root / "dunstrc")], env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: self.ctl("count", "displayed") == "0", h.WAIT, "dunst to answer on the private bus")

    def ctl(self, *args):
        r = subprocess.run(["dunstctl", *args], capture_output=True, text=True, env=self.env)
        return r.stdout.strip() if r.returncode == 0 else None

    def choose(self, label):
        """Opens dunst's context menu and picks `label` there."""
        self.choice.write_text(label)
        assert self.ctl("context") is not None

    def sent(self):
        self.log.flush()
        return (self.root / "monitor.txt").read_text()

    def close(self):
        """Ends dunst, the monitor, Xvfb and the bus (once; a test may end them before teardown)."""
        if self.log.closed:
            return
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        os.kill(self.bus_pid, 15)
        self.log.close()


@pytest.fixture
def desktop(workdir):
    d = Desktop(workdir)
    yield d
    d.close()


def receiver_on(desktop, make_node):
    b = make_node("b", start=False)
    b.start(env={"DBUS_SESSION_BUS_ADDRESS": desktop.address})
    wait_for(lambda: "desktop notifications (dunst" in b.log_text(), h.WAIT, "the agent to find the notification server")
    return b


def test_accept_from_the_notification_imports_the_photos(make_node, desktop):
    a = make_node("a")
    b = receiver_on(desktop, make_node)
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG), str(PNG))
    wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the notification on screen")
    shown = desktop.sent()
    assert f'string "Photos from {a.name}"' in shown, shown
    assert "2 photos" in shown and a.fingerprint in shown, "name, count and fingerprint in the notification"
    assert re.search(r"2 photos \([\d.]+ (B|KiB|MiB)\)", shown) and " MB" not in shown and " KB" not in shown, \
        f"sizes are 1024-based and spelled so:\n{shown}"
    assert 'string "accept"' in shown and 'string "Accept"' in shown and 'string "Reject"' in shown, shown

    desktop.choose("Accept")
    rc, out, err = finish(sender)
    assert rc == 0, out + err
    assert sorted(p["name"] for p in b.photos()) == ["sample.jpg", "sample.png"]
    assert f"Photos from {a.name}" in desktop.menu.read_text()
    wait_for(lambda: f"Photos from {a.name} imported" in desktop.sent(), h.WAIT, "the notification to say the photos are in")


def test_a_session_bus_that_goes_away_leaves_the_agent_running(make_node, desktop):
    """The user's session ends (its bus and notification server with it) under a running agent:
    the agent says once that notifications are off, an offer still waits in the inbox, and the
    agent stops cleanly (the teardown checks its exit status). Before the fix, the next
    notification used the bus connection that had been freed: a crash at the next offer or at
    shutdown."""
    a = make_node("a")
    b = receiver_on(desktop, make_node)
    a.wait_sees(b)
    desktop.close()
    wait_for(lambda: "the session bus closed" in b.log_text(), h.WAIT, "the agent to see its session bus go")
    sender = a.popen("send", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    b.run("accept", offer["id"][:8])
    assert finish(sender)[0] == 0
    assert [p["name"] for p in b.photos()] == ["sample.jpg"]
    log = b.log_text()
    assert log.count("desktop notifications are off") == 1, log
    assert "cannot show a notification" not in log, log


def test_reject_from_the_notification_refuses_the_offer(make_node, desktop):
    a = make_node("a")
    b = receiver_on(desktop, make_node)
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the notification on screen")
    desktop.choose("Reject")
    rc, out, err = finish(sender)
    assert rc == 1 and "rejected" in out + err, out + err
    assert b.photos() == []
    [o] = b.inbox(all=True)
    assert o["state"] == "rejected", o


def test_an_offer_decided_elsewhere_leaves_the_screen(make_node, desktop):
    a = make_node("a")
    b = receiver_on(desktop, make_node)
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the notification on screen")
    offer = b.wait_offer()
    b.run("reject", offer["id"][:8])
    wait_for(lambda: desktop.ctl("count", "displayed") == "0", h.WAIT, "the notification to be closed")
    assert "CloseNotification" in desktop.sent(), desktop.sent()
    finish(sender)


def test_without_a_session_bus_the_agent_says_so_once_and_carries_on(make_node):
    a, b = make_node("a"), make_node("b")  # the harness gives agents no session bus
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    b.run("accept", offer["id"][:8])
    assert finish(sender)[0] == 0
    log = b.log_text()
    assert log.count("desktop notifications are off") == 1, log
    assert "DBUS_SESSION_BUS_ADDRESS" in log and "locafoto receive" in log, log


def test_the_notification_shows_the_preview(make_node, desktop):
    """dunst lists icon-static: the offer's first preview goes along as the image-data hint,
    decoded to RGB pixels of the preview's size (read off the bus); without previews, none. The
    previews follow the offer (cap late-preview): the notification gets its picture when the
    first comes, by replacing itself (still one on screen)."""
    from test_preview import jpeg_size, preview

    a = make_node("a")
    b = receiver_on(desktop, make_node)
    assert "with previews" in b.log_text(), "dunst lists icon-static/body-images; the agent should use them"
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the notification on screen")
    offer = b.wait_offer()
    status, _, jpeg = preview(b, offer["id"][:8], 0)
    assert status == 200
    width, height = jpeg_size(jpeg)
    shown = wait_for(lambda: 'string "image-data"' in (t := desktop.sent()) and t, h.WAIT, "the notification's picture")
    assert desktop.ctl("count", "displayed") == "1", "the picture came as a second notification"
    hint = shown.split('string "image-data"', 1)[1]
    numbers = [line.split()[1] for line in hint.splitlines()[:10] if line.strip().startswith(("int32", "boolean"))]
    assert numbers[:6] == [str(width), str(height), str(width * 3), "false", "8", "3"], hint[:400]
    b.run("reject", offer["id"][:8])
    finish(sender)

    wait_for(lambda: desktop.ctl("count", "displayed") == "0", h.WAIT, "the notification closed")
    before = desktop.sent().count('string "image-data"')
    sender = a.popen("send", "--no-preview", b.fp_prefix, str(JPG))
    wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the second notification on screen")
    assert desktop.sent().count('string "image-data"') == before, "a notification without a preview carried image-data"
    b.run("reject", b.inbox()[0]["id"][:8])
    finish(sender)


def test_a_localsend_offer_is_labelled_and_accepted_from_the_notification(make_node, desktop, workdir):
    """Issue 27: a LocalSend device's offer is shown as one ("LocalSend device, not verified",
    its certificate), and Accept in the notification lets its photo into the vault."""
    from test_localsend import LocalSendD, free_port, result_of
    b = make_node("b", start=False)
    port = free_port()
    b.start("--localsend-port", str(port), "--no-localsend-multicast",
            env={"DBUS_SESSION_BUS_ADDRESS": desktop.address})
    wait_for(lambda: "desktop notifications (dunst" in b.log_text(), h.WAIT, "the agent to find the notification server")
    b.run("localsend", "on")
    d = workdir / "lsd"
    d.mkdir()
    phone = LocalSendD(d, "Pixel of Ana")
    try:
        c = phone.send_async(port, h.REPO / "Tests" / "LocafotoMediaTests" / "Fixtures" / "photo.jpg")
        wait_for(lambda: desktop.ctl("count", "displayed") == "1", h.WAIT, "the notification on screen")
        shown = desktop.sent()
        assert 'string "Photos from Pixel of Ana"' in shown, shown
        assert f"LocalSend device, not verified: certificate {phone.fingerprint}" in shown, shown
        desktop.choose("Accept")
        result = result_of(c)
        assert result["kind"] == "sent", result
    finally:
        phone.stop()
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]
