"""Auto-lock (issue 11 §1): the vault locks after `agent --auto-lock` of idle time, when the
machine is about to sleep (logind's PrepareForSleep(true)) and when the user's session is locked
(logind's Session.Lock). logind itself cannot run here (it needs systemd as PID 1 and a seat):
a stand-in (fake_logind.py, python3-dbus) owns org.freedesktop.login1 on a private bus started
with dbus-daemon, and the agent is pointed at it with DBUS_SYSTEM_BUS_ADDRESS (the standard
override; by default the agent uses the real system bus). Every wait is on an event; timeouts
are hang guards only."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import lfharness as h

DEBIAN_PYTHON = "/usr/bin/python3"  # python3-dbus is Debian's; pyenv's python3 may not have it
FAKE_LOGIND = Path(__file__).with_name("fake_logind.py")
SESSION = "c7"
SESSION_PATH = f"/org/freedesktop/login1/session/{SESSION}"



class Events:
    """The agent's vault events, from `ready` on."""

    def __init__(self, node):
        self.c = h.UnixHTTP(node.socket)
        self.c.request("GET", "/v1/events?kinds=vault")
        self.r = self.c.getresponse()
        assert json.loads(self.r.readline())["kind"] == "ready"

    def next(self):
        line = self.r.readline()
        assert line, "the event stream ended"
        return json.loads(line)

    def close(self):
        self.c.close()


class FakeLogind:
    def __init__(self):
        for tool in ("dbus-daemon", "dbus-send"):
            if shutil.which(tool) is None:
                pytest.fail(f"{tool} is not installed: run scripts/setup.sh", pytrace=False)
        probe = subprocess.run([DEBIAN_PYTHON, "-c", "import dbus"], capture_output=True)
        if probe.returncode != 0:
            pytest.fail("python3-dbus is not installed for /usr/bin/python3: run scripts/setup.sh", pytrace=False)
        bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                             capture_output=True, text=True, check=True)
        self.address, pid = bus.stdout.split("\n")[:2]
        self.bus_pid = int(pid)
        self.proc = subprocess.Popen([DEBIAN_PYTHON, str(FAKE_LOGIND), self.address], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "sent"

    def forge(self, path):
        """The same Lock signal from a connection that does not own org.freedesktop.login1."""
        subprocess.run(["dbus-send", f"--bus={self.address}", "--type=signal", path, "org.freedesktop.login1.Session.Lock"],
                       check=True, timeout=h.CLI_TIMEOUT)

    def close(self):
        if self.proc.stdin.closed:
            return
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        os.kill(self.bus_pid, 15)


@pytest.fixture
def logind():
    f = FakeLogind()
    yield f
    f.close()


def test_idle_time_locks_the_vault(make_node):
    a = make_node("a", start=False)
    a.start("--auto-lock", "1s", "--no-lock-on-sleep", locked=True, wait_discovery=False)
    events = Events(a)
    status = a.run("status")
    assert status["autoLockSeconds"] == 1 and status["lockOnSleep"] is False, status
    a.run("unlock", "--passphrase-file", str(a.passfile))
    assert events.next()["kind"] == "vault.unlocked"
    e = events.next()  # nothing uses the vault: it locks about a second later
    assert e["kind"] == "vault.locked" and "idle" in e.get("message", ""), e
    assert a.run("status")["vault"] == "locked"
    locked = a.run("list", check=False)
    assert locked.returncode == 75, locked.output
    events.close()


def test_sleep_and_session_lock_lock_the_vault(make_node, logind):
    # avahi is reached through the system bus too, so discovery is off here (not needed).
    a = make_node("a", start=False)
    a.start(wait_discovery=False, env={"DBUS_SYSTEM_BUS_ADDRESS": logind.address, "XDG_SESSION_ID": SESSION})
    h.wait_for(lambda: f"screen of session {SESSION_PATH} locks" in a.log_text(), h.WAIT, "the agent to follow logind")
    events = Events(a)
    # None of these may lock: a Lock forged by a process that is not logind, another session's
    # Lock, and a resume. The first lock must then be the sleep's.
    logind.forge(SESSION_PATH)
    logind.send("lock /org/freedesktop/login1/session/c8")
    logind.send("sleep false")
    logind.send("sleep true")
    e = events.next()
    assert e["kind"] == "vault.locked" and "sleep" in e.get("message", ""), e
    assert a.run("status")["vault"] == "locked"

    a.run("unlock", "--passphrase-file", str(a.passfile))
    assert events.next()["kind"] == "vault.unlocked"
    logind.send(f"lock {SESSION_PATH}")
    e = events.next()
    assert e["kind"] == "vault.locked" and "session" in e.get("message", ""), e
    events.close()
    # The bus going away does not stop the agent (teardown checks it exits 0 on SIGTERM).
    logind.close()
    h.wait_for(lambda: "system bus went away" in a.log_text(), h.WAIT, "the agent to notice the bus is gone")
    assert a.run("status")["vault"] == "locked"



def test_without_a_system_bus_the_agent_says_so_and_runs(make_node, workdir):
    a = make_node("a", start=False)
    a.start(wait_discovery=False, env={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={workdir}/no-bus"})
    h.wait_for(lambda: "does not lock on sleep or screen lock" in a.log_text(), h.WAIT, "the agent to say logind is out of reach")
    assert a.run("status")["vault"] == "unlocked"
