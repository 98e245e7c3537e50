"""Helpers for the Locafoto end-to-end suite: real `locafoto agent` processes on loopback.

Every node lives in a short directory under /tmp (the control socket `<home>/agent.sock`
must stay well under the 108-byte Unix socket limit). XDG_RUNTIME_DIR and the LOCAFOTO_*
variables are removed from the environment of the agents *and* of every CLI call, so both
sides agree that the socket is `<home>/agent.sock`.
"""

from __future__ import annotations

import http.client
import json as jsonlib
import os
import re
import shlex
import shutil
import secrets
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "Tests" / "LocafotoFormatsTests" / "Fixtures"

# LOCAFOTO_BIN (relative to the current directory) or the debug build of this checkout.
BIN = str(Path(os.environ["LOCAFOTO_BIN"]).absolute() if os.environ.get("LOCAFOTO_BIN") else REPO / ".build/debug/locafoto")

PASSPHRASE = "correct horse battery staple"
STOP_TIMEOUT = 10.0      # an agent must exit this quickly after SIGTERM
WAIT = 20.0              # default for anything that involves mDNS
CLI_TIMEOUT = 60.0       # one CLI call


def fixture(name: str) -> Path:
    return FIXTURES / name


def unique(base: str) -> str:
    """A display name no other test (or other agent on this avahi-daemon) uses."""
    return f"{base}-{secrets.token_hex(3)}"


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    # No session bus either: agents under test must not show notifications on a developer's desktop
    # (test_notifications.py gives them a private one).
    for k in ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "LOCAFOTO_HOME", "LOCAFOTO_SOCKET", "LOCAFOTO_PASSPHRASE_FILE",
              "LOCAFOTO_RELAYS", "LOCAFOTO_RELAY_ALLOW", "LOCAFOTO_RELAY_OPEN"):
        env.pop(k, None)
    env.update(crash_backtraces())
    return env


def crash_backtraces() -> dict[str, str]:
    """Swift's crash backtracer for a statically linked binary, which cannot find it alone: a
    crash (a signal 11 seen at teardown, say) then writes each thread's stack into the node's log,
    which a failing test shows. Nothing changes until something crashes."""
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    tracer = Path(os.path.realpath(swift)).parent.parent / "libexec/swift/linux/swift-backtrace-static"
    if not tracer.is_file():
        return {}
    return {"SWIFT_BACKTRACE": f"enable=yes,interactive=no,symbolicate=fast,swift-backtrace={tracer}"}


def wait_for(predicate: Callable[[], Any], timeout: float = WAIT, what: str = "a condition", interval: float = 0.2) -> Any:
    """Polls `predicate` until it returns something truthy and returns that value.

    Exceptions from the predicate count as "not yet"; the last value and the last exception
    are in the failure message.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    last_exc: BaseException | None = None
    while True:
        try:
            last = predicate()
            last_exc = None
            if last:
                return last
        except AssertionError as e:  # helper assertions inside predicates
            last_exc = e
        except Exception as e:  # noqa: BLE001 - reported below
            last_exc = e
        if time.monotonic() >= deadline:
            msg = f"timed out after {timeout:.0f}s waiting for {what}; last value: {last!r}"
            if last_exc is not None:
                msg += f"; last error: {last_exc!r}"
            raise AssertionError(msg)
        time.sleep(interval)


def localsendd_state(sock: Path, proc: subprocess.Popen, log: Path) -> dict:
    """localsendd's state, once its control socket answers. The socket's file appears when
    localsendd binds it, a moment before it listens: until then a connection is refused, so
    this waits for an answer, not for the file."""
    from localsendd.client import Client

    def answer() -> dict | str:
        if proc.poll() is not None:
            return "exited"  # truthy: ends the wait at once
        with Client(str(sock), timeout=30) as c:
            return c.state()

    state = wait_for(answer, what=f"localsendd's control socket {sock} to answer")
    assert state != "exited", f"localsendd exited with status {proc.returncode}:\n{log.read_text(errors='replace')}"
    return state


class CLIFailure(AssertionError):
    pass


def _describe(cmd: list[str], p: subprocess.CompletedProcess) -> str:
    return (f"command: {' '.join(cmd)}\nexit status: {p.returncode}\n"
            f"stdout:\n{p.stdout.strip()}\nstderr:\n{p.stderr.strip()}")



class UnixHTTP(http.client.HTTPConnection):
    """http.client on an agent's control socket (it decodes the chunked event stream); every
    read has the WAIT hang guard."""

    def __init__(self, path):
        super().__init__("locafoto", timeout=WAIT)
        self.path = str(path)

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT)
        self.sock.connect(self.path)


def terminate(p: subprocess.Popen, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM, then wait up to `timeout`; a process still running then is killed (SIGKILL).
    True when it exited by itself (or had already)."""
    if p.poll() is not None:
        return True
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=10)
        return False

class Node:
    """One node home plus (optionally) its running agent."""

    def __init__(self, root: Path, key: str, name: str):
        self.key = key
        self.name = name
        self.home = root / key
        self.passfile = root / "pass"
        self.logfile = root / f"{key}.log"
        self.proc: subprocess.Popen | None = None
        self.fingerprint: str | None = None
        self.port: int | None = None
        self._log_handle = None
        assert len(str(self.socket)) < 100, f"control socket path too long: {self.socket}"

    # -- paths -------------------------------------------------------------------------
    @property
    def socket(self) -> Path:
        return self.home / "agent.sock"

    @property
    def spool(self) -> Path:
        return self.home / "spool"

    @property
    def vault_photos(self) -> Path:
        return self.home / "vault" / "photos"

    @property
    def fp_prefix(self) -> str:
        assert self.fingerprint
        return self.fingerprint.split("-")[0]

    # -- lifecycle -----------------------------------------------------------------------
    def init_vault(self) -> None:
        self.run("vault", "init", "--passphrase-file", str(self.passfile), "--kdf", "interactive")

    def start(self, *extra: str, locked: bool = False, wait_discovery: bool = True, env: dict[str, str] | None = None) -> "Node":
        assert not self.running, f"{self.key} already runs"
        args = [BIN, "agent", "--home", str(self.home), "--name", self.name, "--listen", "127.0.0.1", "--port", "0"]
        if locked:
            args.append("--locked")
        else:
            args += ["--passphrase-file", str(self.passfile)]
        if not {"--web-port", "--no-web"} & set(extra):
            # Any free port: agents started at once must not compete for the default one.
            args += ["--web-port", "0"]
        args += list(extra)
        self._launch(args, {**clean_env(), **(env or {})})
        if wait_discovery:
            st = wait_for(lambda: (lambda s: s if s["discovery"] == "running" else None)(self.run("status")),
                          timeout=WAIT, what=f"{self.key}'s mDNS discovery to run (is avahi-daemon up? `bash scripts/avahi-lo.sh start`)")
            assert st["discovery"] == "running"
        return self

    def _launch(self, args: list[str], env: dict[str, str], where: str = "") -> dict[str, Any]:
        """Starts the agent (its output to the node's log) and waits until it answers `status`;
        takes its fingerprint and port from the answer, which it returns."""
        self._log_handle = open(self.logfile, "ab")
        self._log_handle.write(f"===== {' '.join(args)}\n".encode())
        self._log_handle.flush()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log_handle, stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)

        def answers():
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with status {self.proc.returncode}")
            r = self.run("status", check=False)
            return r.data if r.returncode == 0 else None

        try:
            status = wait_for(answers, timeout=WAIT, what=f"agent {self.key}{where} to answer `status`")
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- agent log ---\n{self.log_text()}") from None
        self.fingerprint = status["fingerprint"]
        self.port = int(status["port"])
        assert status["name"] == self.name, status
        return status

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, strict: bool = True) -> str | None:
        """SIGTERM, then require a clean exit (status 0) within STOP_TIMEOUT.

        A hung agent is killed (SIGKILL). strict: raise on any problem; otherwise return a
        description of the problem (None when the shutdown was clean).
        """
        assert self.proc is not None, f"{self.key} was never started"
        p = self.proc
        problem = None
        if not terminate(p):
            problem = f"agent {self.key} ({self.name}) did not exit within {STOP_TIMEOUT:.0f}s of SIGTERM (killed with SIGKILL)"
        self._close_log()
        if problem is None and p.returncode != 0:
            problem = f"agent {self.key} ({self.name}) exited with status {p.returncode} after SIGTERM"
        if problem and strict:
            raise AssertionError(f"{problem}\n--- agent log ---\n{self.log_text()}")
        return problem

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._close_log()

    def _close_log(self) -> None:
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None

    def log_text(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"

    # -- CLI -----------------------------------------------------------------------------
    def cmd(self, *args: str, json: bool = True) -> list[str]:
        c = [BIN, *args, "--home", str(self.home)]
        if json:
            c.append("--json")
        return c

    def run(self, *args: str, json: bool = True, check: bool = True, input: bytes | str | None = None,
            timeout: float = CLI_TIMEOUT) -> Any:
        """Runs `locafoto ARGS --home H [--json]`.

        json and check: returns the parsed JSON (fails with the whole story otherwise).
        Otherwise: the CompletedProcess, with `.data` = parsed stdout JSON or None and
        `.output` = stdout + stderr.
        """
        c = self.cmd(*args, json=json)
        text = not isinstance(input, bytes)
        p = subprocess.run(c, input=input, capture_output=True, text=text, timeout=timeout, env=clean_env())
        if not text:
            p.stdout = p.stdout.decode(errors="replace")
            p.stderr = p.stderr.decode(errors="replace")
        p.output = p.stdout + p.stderr
        p.data = None
        if json:
            try:
                p.data = jsonlib.loads(p.stdout) if p.stdout.strip() else None
            except ValueError:
                p.data = None
        if check:
            if p.returncode != 0:
                raise CLIFailure(f"{self.key}: CLI call failed\n{_describe(c, p)}")
            if json:
                if p.data is None and p.stdout.strip():
                    raise CLIFailure(f"{self.key}: output is not JSON\n{_describe(c, p)}")
                return p.data
        return p

    def popen(self, *args: str, json: bool = False) -> subprocess.Popen:
        """Starts a CLI call in the background (e.g. `send`, which waits for the peer)."""
        c = self.cmd(*args, json=json)
        p = subprocess.Popen(c, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
        p.cmdline = c
        return p

    # -- convenience ---------------------------------------------------------------------
    def peers(self) -> list[dict]:
        return self.run("peers")

    def peer(self, fingerprint: str) -> dict | None:
        for p in self.peers():
            if p["fingerprint"] == fingerprint:
                return p
        return None

    def sees_online(self, other: "Node") -> dict | None:
        p = self.peer(other.fingerprint)
        return p if p and p.get("online") else None

    def wait_sees(self, other: "Node", timeout: float = WAIT) -> dict:
        return wait_for(lambda: self.sees_online(other), timeout, f"{self.key} ({self.name}) to see {other.key} ({other.name}) online")

    def inbox(self, all: bool = False) -> list[dict]:
        return self.run("inbox", *(["--all"] if all else []))

    def ended_inbox(self, timeout: float = WAIT) -> list[dict]:
        """The whole inbox once no offer in it is open (pending or accepted). A sender's `send`
        ends at the last ITEM_RESULT, which may reach it before this receiver has read DONE and
        recorded the offer completed (protocol/messages.md "DONE")."""
        def ended() -> list[dict] | None:
            offers = self.inbox(all=True)
            return offers if offers and all(o["state"] not in ("pending", "accepted") for o in offers) else None
        return wait_for(ended, timeout, f"every offer in {self.key}'s inbox to end")

    def ended_offer(self, offer_id: str, timeout: float = WAIT) -> dict:
        """Offer `offer_id` of this node's inbox once it has ended (see `ended_inbox`)."""
        return wait_for(lambda: next((o for o in self.inbox(all=True) if o["id"] == offer_id
                                      and o["state"] not in ("pending", "accepted")), None),
                        timeout, f"offer {offer_id[:8]} in {self.key}'s inbox to end")

    def photos(self) -> list[dict]:
        return self.run("list")

    def wait_offer(self, timeout: float = WAIT, previews: bool = True) -> dict:
        """The one offer in the inbox; with `previews`, once no more of its previews are coming
        (cap late-preview: they follow the offer)."""
        offers = wait_for(lambda: (o := self.inbox()) and (not previews or not o[0].get("previewsPending")) and o,
                          timeout, f"an offer in {self.key}'s inbox" + (" with its previews" if previews else ""))
        assert len(offers) == 1, f"expected one offer in {self.key}'s inbox, got {offers}"
        return offers[0]

    def __repr__(self) -> str:
        return f"Node({self.key}, {self.name}, {self.fingerprint})"


def finish(p: subprocess.Popen, timeout: float = 60) -> tuple[int, str, str]:
    """Waits for a background CLI call; returns (status, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"`{' '.join(p.cmdline)}` did not finish within {timeout}s\nstdout:\n{out}\nstderr:\n{err}")
    return p.returncode, out, err


def run(node: Node, *args: str, json: bool = True, check: bool = True, **kw: Any) -> Any:
    return node.run(*args, json=json, check=check, **kw)


def files_in(directory: Path) -> list[Path]:
    """Every non-directory entry below `directory` (missing directory: none)."""
    if not directory.exists():
        return []
    return sorted(p for p in directory.rglob("*") if not p.is_dir())


def export_bytes(node: Node, photo_id: str, dest: Path) -> bytes:
    dest.mkdir(parents=True, exist_ok=True)
    r = node.run("export", photo_id, str(dest))
    path = Path(r["path"])
    assert path.parent == dest, r
    return path.read_bytes()


def assert_holds_exactly(node: Node, files: list[Path], workdir: Path) -> None:
    """The node's vault holds these files and nothing else: one photo a file, by name, each
    exported byte for byte the same."""
    photos = node.photos()
    assert sorted(p["name"] for p in photos) == sorted(f.name for f in files), photos
    by_name = {f.name: f for f in files}
    for p in photos:
        assert export_bytes(node, p["id"], workdir / p["id"][:8]) == by_name[p["name"]].read_bytes(), p["name"]


def http_unix(path: Path, method: str, target: str, body: bytes | None = None, timeout: float = 10) -> tuple[int, dict, bytes]:
    """One HTTP/1.1 request on a Unix socket (what `curl --unix-socket` would do)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
        head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        s.sendall(head.encode() + b"\r\n" + (body or b""))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if "content-length" in headers:
        assert len(payload) == int(headers["content-length"]), (headers, payload)
    return status, headers, payload


class Terminal:
    """A private tmux server running one command in a 200-column window: what a person sees
    (capture-pane) and types (send-keys)."""

    def __init__(self, command: list[str]):
        self.socket = f"lf{uuid.uuid4().hex[:8]}"
        line = " ".join(shlex.quote(x) for x in command) + "; echo EXIT=$?; sleep 600"
        subprocess.run(["tmux", "-L", self.socket, "new-session", "-d", "-x", "200", "-y", "50", line], check=True,
                       env=clean_env())

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-J"], capture_output=True, text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.socket, "send-keys", *keys], check=True)

    def wait(self, text: str, what: str) -> str:
        return wait_for(lambda: (lambda s: s if text in s else None)(self.screen()), WAIT, what)

    def wait_match(self, pattern: str, what: str) -> "re.Match":
        return wait_for(lambda: re.search(pattern, self.screen()), WAIT, what, interval=0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
