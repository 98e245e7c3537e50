"""Nodes run by an unprivileged user, as in the container image (uid 10001): a relay keeps
serving after a peer connection, and two agents meet by a direct handshake (outgoing and
incoming connections). Regression: TCP_NODELAY was set as a socket-level option, i.e. SO_DEBUG,
which only root (CAP_NET_ADMIN) may set; every connection of a non-root node failed, and the
first incoming one ended its listener (the relay or agent exited). The rest of the suite runs as
root, where that went unnoticed.

Needs root (to drop to the unprivileged user with setpriv)."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

import lfharness as h

NOBODY = 65534


@pytest.fixture
def unprivileged():
    """(run, root): run(*argv) runs the binary as uid/gid 65534; root is a folder it may use."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run nodes as an unprivileged user")
    if not shutil.which("setpriv"):
        pytest.fail("setpriv (util-linux) not found", pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="lfnr", dir="/tmp"))
    os.chmod(root, 0o755)
    binary = root / "locafoto"
    shutil.copy2(h.BIN, binary)
    os.chmod(binary, 0o755)
    (root / "pass").write_text(h.PASSPHRASE + "\n")
    os.chmod(root / "pass", 0o600)
    home = root / "nodes"
    home.mkdir()
    for p in (root / "pass", home):
        os.chown(p, NOBODY, NOBODY)
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    env = h.clean_env()
    env["HOME"] = str(home)

    def argv(*args: str) -> list[str]:
        return prefix + [str(binary), *args]

    procs: list[subprocess.Popen] = []

    def spawn(*args: str, log: Path) -> subprocess.Popen:
        with open(log, "ab") as f:
            p = subprocess.Popen(argv(*args), env=env, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run(argv(*args), env=env, capture_output=True, text=True, timeout=h.CLI_TIMEOUT)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(args)}: exit status {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    try:
        yield run, spawn, home
    finally:
        for p in procs:
            h.terminate(p)
        if not os.environ.get("LOCAFOTO_KEEP_TMP"):
            shutil.rmtree(root, ignore_errors=True)


def alive(p: subprocess.Popen, log: Path) -> None:
    assert p.poll() is None, f"exited with status {p.returncode}\n{log.read_text(errors='replace')}"


def test_unprivileged_relay_survives_a_connection(unprivileged):
    run, spawn, home = unprivileged
    log = home / "relay.log"
    relay = spawn("relay", "run", "--home", str(home / "r"), "--name", h.unique("nrrelay"), "--listen", "127.0.0.1",
                  "--port", "0", "--open", "--no-discovery", log=log)

    def port():
        alive(relay, log)
        m = re.search(r"listening on port (\d+)", log.read_text(errors="replace"))
        return int(m.group(1)) if m else None
    p = h.wait_for(port, what="the unprivileged relay to listen")
    with socket.create_connection(("127.0.0.1", p), timeout=5) as s:
        s.sendall(b"not a handshake\n")
    # The relay logs the end of that session (not a handshake); it must still run then.
    def session_ended():
        alive(relay, log)
        return "relay session with" in log.read_text(errors="replace")
    h.wait_for(session_ended, what="the unprivileged relay to log the end of the session")
    status = json.loads(run("relay", "status", "--home", str(home / "r"), "--json").stdout)
    assert status["admission"] == "open", status
    alive(relay, log)

def test_unprivileged_agents_meet(unprivileged):
    run, spawn, home = unprivileged
    nodes = {}
    for key in ("a", "c"):
        run("vault", "init", "--home", str(home / key), "--passphrase-file", str(home.parent / "pass"), "--kdf", "interactive")
        log = home / f"{key}.log"
        proc = spawn("agent", "--home", str(home / key), "--name", h.unique(f"nr{key}"), "--listen", "127.0.0.1",
                     "--port", "0", "--no-discovery", "--passphrase-file", str(home.parent / "pass"), log=log)

        def status(key=key, proc=proc, log=log):
            alive(proc, log)
            r = run("status", "--home", str(home / key), "--json", check=False)
            return json.loads(r.stdout) if r.returncode == 0 else None
        nodes[key] = (proc, log, h.wait_for(status, what=f"unprivileged agent {key} to answer `status`"))
    (a, alog, _), (c, clog, cst) = nodes["a"], nodes["c"]
    paired = json.loads(run("pair", f"127.0.0.1:{cst['port']}", "--home", str(home / "a"), "--json").stdout)
    assert paired["fingerprint"] == cst["fingerprint"], paired
    alive(a, alog)
    alive(c, clog)
