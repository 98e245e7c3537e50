"""Issue 8 §4: local trust.

Before: with a shared XDG_RUNTIME_DIR another user could bind the control socket path first and
`locafoto unlock` sent it the passphrase; a second `locafoto agent` on the same home renamed
the running node and turned its live incoming offer into `interrupted`; passphrase files readable
by others and short passphrases passed silently.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import lfharness as h
import rogue

NOBODY = 65534
# The other user runs Debian's python (a pyenv interpreter under /root is out of its reach).
SYSTEM_PYTHON = "/usr/bin/python3"

ATTACKER = r"""
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(4)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    got = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += d
    except OSError:
        pass
    with open(log, "ab") as f:
        f.write(got)
    c.close()
"""


def socket_path(runtime: str, home) -> str:
    return f"{runtime}/locafoto-{hashlib.sha256(str(home).encode()).digest()[:6].hex()}.sock"


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([h.BIN, *args], capture_output=True, text=True, timeout=60, env=env)


def test_cli_refuses_a_socket_another_user_bound_first(make_node, request):
    a = make_node("a", start=False)
    # A shared runtime folder the other user can reach (the test's own workdir is private).
    runtime = Path(tempfile.mkdtemp(prefix="lfrun", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(runtime, ignore_errors=True))
    os.chmod(runtime, 0o1777)  # shared, sticky: anybody may create a file in it
    path = socket_path(str(runtime), a.home)
    log = runtime / "stolen"
    log.touch()
    os.chmod(log, 0o666)

    def drop():
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    attacker = subprocess.Popen([SYSTEM_PYTHON, "-c", ATTACKER, path, str(log)], stdout=subprocess.PIPE, text=True, preexec_fn=drop)
    try:
        assert attacker.stdout.readline().strip() == "listening"
        env = h.clean_env() | {"XDG_RUNTIME_DIR": str(runtime)}
        r = cli(["unlock", "--home", str(a.home), "--passphrase-file", str(a.passfile)], env)
        assert r.returncode == 77, r
        assert f"belongs to user {NOBODY}" in r.stderr and "Nothing was sent" in r.stderr, r.stderr
        assert "unlocked" not in r.stdout.lower()

        # Same socket, now owned by this user (root can hand it over) but still answered by the
        # other user's process: the credentials of the process refuse it.
        os.chown(path, os.geteuid(), os.getegid())
        r = cli(["unlock", "--home", str(a.home), "--passphrase-file", str(a.passfile)], env)
        assert r.returncode == 77, r
        assert f"runs as user {NOBODY}" in r.stderr, r.stderr
    finally:
        attacker.kill()
        attacker.wait()
    assert log.read_bytes() == b"", f"the impostor received {log.read_bytes()[:200]!r}"


def test_cli_refuses_a_socket_folder_others_may_write(make_node, workdir):
    a = make_node("a", start=False)
    runtime = workdir / "open"
    runtime.mkdir()
    os.chmod(runtime, 0o777)  # not sticky: anyone could replace the socket
    env = h.clean_env() | {"XDG_RUNTIME_DIR": str(runtime)}
    r = cli(["status", "--home", str(a.home)], env)
    assert r.returncode == 77 and "writable by other users" in r.stderr, r
    # The agent refuses to put its socket there too.
    r = subprocess.run([h.BIN, "agent", "--home", str(a.home), "--locked", "--no-discovery", "--port", "0", "--listen", "127.0.0.1"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode != 0 and "writable by other users" in r.stderr, r


def test_second_agent_on_the_same_home_leaves_the_first_alone(make_node, workdir):
    a = make_node("a")
    s = rogue.Rogue("live").connect(a.port)
    try:
        offer = s.offer([rogue.fake_item("waiting.jpg")])
        h.wait_for(lambda: a.run("inbox"), timeout=60, what="the live offer")
        for runtime in (None, workdir / "xdg"):
            env = h.clean_env()
            if runtime:
                runtime.mkdir(mode=0o700)
                env["XDG_RUNTIME_DIR"] = str(runtime)
            r = subprocess.run([h.BIN, "agent", "--home", str(a.home), "--name", "intruder", "--port", "0", "--listen", "127.0.0.1",
                                "--passphrase-file", str(a.passfile)], capture_output=True, text=True, timeout=60, env=env)
            assert r.returncode != 0, r
            assert f"an agent is already running for this home ({a.home}) (pid {a.proc.pid})" in r.stderr, r.stderr
        status = a.run("status")
        assert status["name"] == a.name, status
        o = a.run("inbox")[0]
        assert o["id"] == offer and o["state"] == "pending" and o["connected"], o
    finally:
        s.close()


def test_passphrase_warnings(workdir):
    env = h.clean_env()
    weak = workdir / "weak"
    weak.write_text("short\n")
    os.chmod(weak, 0o644)
    home = workdir / "w"
    r = cli(["vault", "init", "--home", str(home), "--passphrase-file", str(weak), "--kdf", "interactive"], env)
    assert r.returncode == 0, r
    assert "can be read or changed by other users" in r.stderr and "chmod 600" in r.stderr, r.stderr
    assert "has 5 characters; use at least 12" in r.stderr, r.stderr

    good = workdir / "good"
    good.write_text(h.PASSPHRASE + "\n")
    os.chmod(good, 0o600)
    r = cli(["vault", "init", "--home", str(workdir / "g"), "--passphrase-file", str(good), "--kdf", "interactive"], env)
    assert r.returncode == 0 and "warning" not in r.stderr, r
