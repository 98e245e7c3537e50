#!/usr/bin/env python3
"""bench-transfer.py - locafoto's transfer path next to the tools a user would pick instead.

    python3 scripts/bench-transfer.py --bin BIN [--runs 3] [--workloads W0,W1,W2,W3,W4,W5]
                                      [--tools tar,scp,rsync,localsend,localsendd,locafoto,ls2locafoto,locafoto2ls]
                                      [--localsend CMD] [--localsendd DIR] [--link 1gbit]

Run it through scripts/bench.sh, which installs the tools and puts it in a private network
namespace (loopback only). Workloads W0-W3 are synthetic photos (a JPEG's start: SOI, JFIF and a
frame header, as a LocalSend upload's header check wants; then random bytes, which libvips refuses
at once, so no preview is made for them); W4 and W5 are real photos:
  W0  1 x 1 KiB       W1  1 x 1 GiB       W2  200 x 3 MiB       W3  1000 x 200 KiB
  W4  30 x 12-megapixel JPEG (~4.5 MiB each: colour noise, quality 85, made with `vips`), so the
      sender decodes each of the first 24 to make its preview, as it does for a camera's photos
  W5  a camera roll (issue 24): 40 photos of 12 MP from real photographs (mate-backgrounds),
      made by scripts/make-camera-roll.py once per bench run (seed 24): 32 JPEGs (~1.5 MiB,
      quality 90, camera EXIF, 28 with an EXIF IFD1 160x120 thumbnail, 4 without; portraits
      stored upright and with Orientation 6; GPS on most) and 8 HEICs (~4 MiB, x265; 4 with a
      320-px thumbnail item, 4 without)
Tools, each from a fresh destination folder, both ends on this machine:
  tar      `tar -c | nc` -> `nc | tar -x` (the floor: no encryption, no integrity check)
  scp      scp, cipher aes128-gcm@openssh.com, to an sshd started for the connection (`sshd -i`)
  rsync    rsync -a over the same ssh
  localsend  localsend-cli 0.1.1 (a Python implementation of the LocalSend v2 protocol, HTTPS)
  localsendd localsendd 0.1.1 (LocalSend protocol v2.2 daemons, HTTPS with mutual TLS, SHA-256 of
           every file checked by the receiver): two daemons started for the run (the receiver
           --unattended, writing into the destination), `localsendctl send --wait` on the sender;
           timed from starting localsendctl until it exits, after the receiver's answer to the
           last file (written and verified). Like locafoto's, the daemons are measured from just
           before the send (their start-up, which scans 127.0.0.0/24 for peers, is waited out)
  locafoto two agents (fresh receiver vault each run; the receiver trusts the sender), timed
           from `locafoto send` until it exits, when every photo is verified and imported; the
           send starts once both agents are idle (no media worker left from the warm-up offer)
  locafoto2ls  a locafoto agent sending to localsendd (`send localsend:127.0.0.1`, issue 27: a node
           to a phone's LocalSend app), localsendd accepting unattended; timed like localsendd
  ls2locafoto  localsendd sending to a locafoto agent with `localsend on` (issue 27: a phone's
           LocalSend app to a node), the device trusted after a first offer; timed like localsendd
Runs are interleaved (run 1 of every tool, then run 2, ...; the order rotates per run), nothing
adds a `sync` to any side, the source files are in the page cache for every tool alike (written
once, read by every run). Wall time is from starting the sender to the end of the receiving side.
CPU seconds and peak RSS are per side: from wait4() of one-shot processes (children included),
from /proc deltas and a VmHWM reset (clear_refs) for the long-running agents and daemons (the
sender's CPU includes its CLI: `locafoto send`, `localsendctl`). An agent's or daemon's CPU is
that of its whole process tree (what its child processes, such as media workers, used, live or
reaped); its peak RSS is its own VmHWM or, if higher, the largest sum of RSS over its tree in
samples taken every 50 ms. After each run, every received file is compared by SHA-256 with its
source (locafoto: exported from the vault).

For locafoto, each run also gives (taken on the same run, outside the timed figures):
  time to offer  from starting `locafoto send` to the receiver's `offer.received` event (read
                 from its control API's event stream, opened before the send; the receiver
                 trusts the sender, so it accepts at once and, having cap late-preview, gets no
                 preview); the offer's previewCount is read from the inbox as that event arrives
  pending offer  the same photos sent again once the receiver no longer trusts the sender, from
                 idle agents: the time to `offer.received` (the offer waits for its user), the
                 time until its last preview is in the inbox (its `previewsPending` gone; the
                 last `offer.preview` event), and how many previews it has; then rejected
  until indexed  from the same start until the receiver's media indexer has indexed every photo
                 (one `photo.indexed` event per photo; for photos it cannot read, such as W0-W3's,
                 until the receiver has been idle for 3 s, from the last activity): wall time,
                 and CPU seconds of each side over that time (the sender's with its CLI), i.e.
                 counting the receiver's thumbnails and EXIF reading after the transfer
  memory         peak RSS of each agent with its worker processes, from just after its vault is
                 unlocked (VmHWM reset as soon as `status` says unlocked) to the end of the run,
                 and its RSS after the indexer is done and 3 s of idling (longer than the media
                 workers' 2-s idle exit, so it is the state they leave); the photos whose
                 thumbnail the vault has
With --link RATE (e.g. 1gbit), every run goes through `tc qdisc add dev lo root tbf rate RATE
burst 256kb latency 20ms` in this (private) namespace, removed at the end; a 64 MiB probe over
127.0.0.1 checks that the rate holds, and the tables add each workload's bytes' own time on
that link (its files' bytes x 8 / RATE) and the tools' wall time as a multiple of it.
Prints medians as Markdown tables. Not a test: it asserts only that every file arrived intact.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKLOADS = {"W0": (1, 1024), "W1": (1, 1 << 30), "W2": (200, 3 << 20), "W3": (1000, 200 << 10), "W4": (30, 0),
             "W5": (40, 0)}
REAL_JPEG = {"W4": (4000, 3000)}
CAMERA_ROLL = {"W5": 24}          # workload: make-camera-roll.py's seed
TOOLS = ["tar", "scp", "rsync", "localsend", "localsendd", "locafoto", "locafoto-b", "ls2locafoto", "locafoto2ls"]
CLK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    wall: float
    cpu: tuple[float, float]      # sender, receiver (s)
    rss: tuple[float, float]      # sender, receiver (MiB)
    extra: dict = field(default_factory=dict)


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- process measurement

class OneShot:
    """A process whose whole life is one side of one transfer. It runs under GNU time, which
    reports its CPU and peak RSS, children included: wait4() from this harness would count the
    harness's own memory, which a forked child holds until it execs."""

    def __init__(self, argv: list[str] | str, **kw: object) -> None:
        fd, self.report = tempfile.mkstemp(prefix="bench-time.")
        os.close(fd)
        if isinstance(argv, str):
            argv = ["bash", "-c", argv]
        self.proc = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", self.report, *argv], **kw)  # type: ignore[arg-type]
        self.cpu = 0.0
        self.rss_mib = 0.0

    def wait(self, timeout: float = 3600) -> int:
        # A blocking wait, with a watchdog as the hang guard: Popen.wait(timeout=…) polls with
        # sleeps of up to 50 ms, which rounded every wall time up to a step of 50 ms.
        guard = threading.Timer(timeout, self.proc.kill)
        guard.daemon = True
        guard.start()
        try:
            status = self.proc.wait()
        finally:
            guard.cancel()
        last = Path(self.report).read_text().strip().splitlines()[-1].split()
        os.unlink(self.report)
        self.cpu = float(last[0]) + float(last[1])
        self.rss_mib = int(last[2]) / 1024
        return status

    def stop(self) -> None:
        """SIGTERM to the measured process (not to time, which would leave it running)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        for c in children:
            os.kill(int(c), 15)


class Resident:
    """A long-running process (an agent, a daemon) and the processes it starts (locafoto's media
    workers): CPU as a /proc delta of the whole tree, peak RSS after a VmHWM reset."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def tree(self) -> list[int]:
        """The process, then its descendants (children of any of its threads)."""
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop(0)
            out.append(p)
            try:
                for t in os.listdir(f"/proc/{p}/task"):
                    todo += map(int, Path(f"/proc/{p}/task/{t}/children").read_text().split())
            except OSError:
                pass
        return out

    def cpu_now(self) -> float:
        """CPU seconds of the process and its live descendants, each with the children it reaped
        (so a worker that has exited still counts, through its parent)."""
        total = 0
        for i, p in enumerate(self.tree()):
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                if i == 0:
                    raise
                continue
            total += sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
        return total / CLK

    def status_kib(self, key: str, pid: int | None = None) -> int:
        try:
            for line in Path(f"/proc/{pid or self.pid}/status").read_text().splitlines():
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        except OSError:
            if pid is None:
                raise
        return 0

    def reset_peak(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")


class TreeSampler:
    """Every 50 ms, the RSS of each process of some agents' trees (a thread of this harness,
    about 1 % of a core): the peak of each tree's summed RSS in a time window, the peak of its
    summed RssAnon (the heap and stacks, without the binary's and libraries' file-backed pages;
    the kernel keeps no high-water mark of it, so it is sampled), and the largest VmHWM any
    descendant (a worker process) reached. An agent's own VmHWM is exact; this adds what its
    workers hold at the same time."""

    def __init__(self, agents: list[Resident]) -> None:
        self.agents = agents
        # (time, [(agent's RSS kiB, workers' RSS kiB, the tree's RssAnon kiB)])
        self.samples: list[tuple[float, list[tuple[int, int, int]]]] = []
        self.worker_hwm: list[dict[int, int]] = [{} for _ in agents]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            row = []
            for i, a in enumerate(self.agents):
                pids = a.tree()
                own = a.status_kib("VmRSS", pids[0]) if pids else 0
                anon = sum(a.status_kib("RssAnon", p) for p in pids)
                others = 0
                for p in pids[1:]:
                    others += a.status_kib("VmRSS", p)
                    self.worker_hwm[i][p] = max(self.worker_hwm[i].get(p, 0), a.status_kib("VmHWM", p))
                row.append((own, others, anon))
            self.samples.append((time.perf_counter(), row))

    def peak_mib(self, i: int, t0: float = 0.0, t1: float = float("inf")) -> float:
        return max((r[i][0] + r[i][1] for t, r in self.samples if t0 <= t <= t1), default=0) / 1024

    def peak_anon_mib(self, i: int, t0: float = 0.0, t1: float = float("inf")) -> float:
        return max((r[i][2] for t, r in self.samples if t0 <= t <= t1), default=0) / 1024

    def workers_mib(self, i: int) -> float:
        return max(self.worker_hwm[i].values(), default=0) / 1024

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def wait_listening(port: int, timeout: float = 60) -> None:
    """Until something listens on 127.0.0.1:port, or on any address (IPv4 or dual-stack IPv6), read
    from /proc without connecting."""
    want = {f"0100007F:{port:04X}", f"00000000:{port:04X}", f"{'0' * 32}:{port:04X}"}  # 127.0.0.1, 0.0.0.0, ::
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if f[1] in want and f[3] == "0A":
                    return
        time.sleep(0.01)
    raise TimeoutError(f"nothing listens on port {port}")


def wait_quiet(pids: list[int], quiet: float = 0.5, timeout: float = 30) -> None:
    """Until none of these processes used CPU for `quiet` seconds (start-up work done)."""
    procs = [Resident(p) for p in pids]
    last = [p.cpu_now() for p in procs]
    since = time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = [p.cpu_now() for p in procs]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def tree_rss(a: Resident) -> tuple[float, float]:
    """RSS (MiB) of a process and of its descendants, summed."""
    pids = a.tree()
    return a.status_kib("VmRSS") / 1024, sum(a.status_kib("VmRSS", p) for p in pids[1:]) / 1024


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 on an agent's control socket."""

    def __init__(self, path: Path, timeout: float = 60) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def control_get(sock: Path, path: str):  # noqa: ANN201
    c = UnixHTTPConnection(sock)
    try:
        c.request("GET", path, headers={"Connection": "close"})
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"bench: GET {path} on {sock}: {r.status} {body[:300]!r}")
        return json.loads(body)
    finally:
        c.close()


class EventStream:
    """An agent's `GET /v1/events` (one JSON object a line, chunked) read by a thread: each event
    with the harness's clock and the agent's CPU seconds at the moment it was read."""

    def __init__(self, sock: Path, kinds: str, agent: Resident, on_offer=None) -> None:  # noqa: ANN001
        self.agent = agent
        self.on_offer = on_offer          # called in the reading thread at `offer.received`
        self.offer_probe = None
        self.events: list[tuple[float, float, dict]] = []
        self.cond = threading.Condition()
        self.closed = False
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(str(sock))
        self.s.sendall(f"GET /v1/events?kinds={kinds} HTTP/1.1\r\nHost: localhost\r\n"
                       "Accept: application/x-ndjson\r\n\r\n".encode())
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.wait(lambda evs: any(e["kind"] == "ready" for _, _, e in evs), 30, "the event stream's ready")

    def _read(self) -> None:
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                chunk = self.s.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                log(f"bench: event stream refused: {head[:200]!r}")
                return
            chunked = b"chunked" in head.lower()
            body, lines = b"", b""
            while True:
                if chunked:
                    while b"\r\n" in buf:
                        size_line, rest = buf.split(b"\r\n", 1)
                        size = int(size_line.split(b";")[0], 16)
                        if size == 0:
                            return
                        if len(rest) < size + 2:
                            break
                        body += rest[:size]
                        buf = rest[size + 2:]
                else:
                    body, buf = body + buf, b""
                lines += body
                body = b""
                while b"\n" in lines:
                    line, lines = lines.split(b"\n", 1)
                    if line.strip():
                        event = json.loads(line)
                        t = time.perf_counter()
                        try:
                            cpu = self.agent.cpu_now()
                        except OSError:
                            cpu = float("nan")
                        if event.get("kind") == "offer.received" and self.on_offer and self.offer_probe is None:
                            self.offer_probe = self.on_offer(event)
                        with self.cond:
                            self.events.append((t, cpu, event))
                            self.cond.notify_all()
                chunk = self.s.recv(65536)
                if not chunk:
                    return
                buf += chunk
        except OSError:
            return
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def wait(self, pred, timeout: float, what: str):  # noqa: ANN001, ANN201
        with self.cond:
            if not self.cond.wait_for(lambda: pred(self.events) or self.closed, timeout) or not pred(self.events):
                sys.exit(f"bench: locafoto: {what} did not come")
            return pred(self.events)

    def of(self, kind: str) -> list[tuple[float, float, dict]]:
        with self.cond:
            return [e for e in self.events if e[2]["kind"] == kind]

    def close(self) -> None:
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()
        self.thread.join(timeout=5)


# ---------------------------------------------------------------- data

def make_jpeg(path: Path, width: int, height: int, seed: int) -> None:
    """A real, distinct JPEG: three bands of Gaussian noise (means differ per file), quality 85."""
    with tempfile.TemporaryDirectory(dir=path.parent) as t:
        bands = []
        for b in range(3):
            band = f"{t}/b{b}.v"
            subprocess.run(["vips", "gaussnoise", band, str(width), str(height), "--sigma", "20",
                            "--mean", str(90 + (seed * 7 + b * 31) % 80)], check=True)
            bands.append(band)
        subprocess.run(["vips", "bandjoin", " ".join(bands), f"{t}/j.v"], check=True)
        subprocess.run(["vips", "cast", f"{t}/j.v", f"{t}/c.v", "uchar"], check=True)
        subprocess.run(["vips", "jpegsave", f"{t}/c.v", str(path), "--Q", "85"], check=True)


# The start of a synthetic photo: start of image, a JFIF segment and a baseline frame header (8-bit,
# 3840 high, 5120 wide, three components). A LocalSend upload's header check takes it as a JPEG
# (since 0b5a0e4 a file that is not one is refused); the random bytes after it are no image.
JPEG_START = bytes.fromhex("ffd8" "ffe000104a46494600010100000100010000" "ffc0001108" "0f00" "1400" "03012200021101031101")


def synthetic_photo(size: int) -> bytes:
    return JPEG_START + os.urandom(size - len(JPEG_START))


def make_workload(root: Path, name: str) -> tuple[Path, dict[str, str]]:
    count, size = WORKLOADS[name]
    d = root / "src" / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    sums = {}
    if name in CAMERA_ROLL:
        script = Path(__file__).resolve().parent / "make-camera-roll.py"
        p = subprocess.run([sys.executable, str(script), str(d), "--count", str(count), "--seed", str(CAMERA_ROLL[name]),
                            "--quiet"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: make-camera-roll.py failed: {p.stderr.strip()}")
        log("   " + p.stdout.strip())
        for f in sorted(d.iterdir()):
            sums[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
        return d, sums
    if name in REAL_JPEG:
        for i in range(count):
            p = d / f"IMG_{i:04d}.jpg"
            make_jpeg(p, *REAL_JPEG[name], seed=i)
            sums[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
        return d, sums
    for i in range(count):
        data = synthetic_photo(size) if size < (64 << 20) else None
        p = d / f"IMG_{i:04d}.jpg"
        h = hashlib.sha256()
        with open(p, "wb") as f:
            if data is not None:
                f.write(data)
                h.update(data)
            else:
                f.write(JPEG_START)
                h.update(JPEG_START)
                left = size - len(JPEG_START)
                while left:
                    chunk = os.urandom(min(left, 8 << 20))
                    f.write(chunk)
                    h.update(chunk)
                    left -= len(chunk)
        sums[p.name] = h.hexdigest()
    return d, sums


def verify(dest: Path, sums: dict[str, str], tool: str) -> None:
    got = {p.name: p for p in dest.rglob("*") if p.is_file()}
    missing = sorted(set(sums) - set(got))
    if missing:
        sys.exit(f"bench: {tool} lost {len(missing)} file(s), e.g. {missing[:3]}")
    for name, digest in sums.items():
        h = hashlib.sha256()
        with open(got[name], "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        if h.hexdigest() != digest:
            sys.exit(f"bench: {tool} delivered {name} altered")


# ---------------------------------------------------------------- tools

class TarNc:
    name = "tar"

    def __init__(self, work: Path) -> None:
        self.port = 40100

    def run(self, src: Path, dest: Path) -> Sample:
        rx = OneShot(["bash", "-c", f"nc -l 127.0.0.1 {self.port} | tar -C '{dest}' -xf -"])
        wait_listening(self.port)
        t0 = time.perf_counter()
        tx = OneShot(["bash", "-c", f"tar -C '{src}' -cf - . | nc -N 127.0.0.1 {self.port}"])
        if tx.wait() or rx.wait():
            sys.exit("bench: tar | nc failed")
        wall = time.perf_counter() - t0
        return Sample(wall, (tx.cpu, rx.cpu), (tx.rss_mib, rx.rss_mib))


class SSH:
    """An sshd per connection (`sshd -i` on a socket this harness accepts), so that the
    receiving side's CPU and memory are those of one sshd and what it runs (scp/rsync)."""

    def __init__(self, work: Path) -> None:
        self.dir = work / "ssh"
        self.dir.mkdir(mode=0o700, exist_ok=True)
        for kind in ("host", "client"):
            key = self.dir / kind
            if not key.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        shutil.copy(self.dir / "client.pub", self.dir / "authorized_keys")
        (self.dir / "sshd_config").write_text(
            f"HostKey {self.dir}/host\nAuthorizedKeysFile {self.dir}/authorized_keys\nPermitRootLogin yes\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "Subsystem sftp internal-sftp\nCiphers aes128-gcm@openssh.com\nLogLevel ERROR\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.ssh = (f"ssh -i {self.dir}/client -p {self.port} -c aes128-gcm@openssh.com -o BatchMode=yes "
                    f"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")

    def serve_one(self) -> tuple[threading.Thread, list[OneShot]]:
        box: list[OneShot] = []

        def accept() -> None:
            conn, _ = self.listener.accept()
            d = OneShot(["/usr/sbin/sshd", "-i", "-f", str(self.dir / "sshd_config")],
                        stdin=conn.fileno(), stdout=conn.fileno(), stderr=subprocess.DEVNULL)
            conn.close()
            d.wait()
            box.append(d)

        t = threading.Thread(target=accept, daemon=True)
        t.start()
        return t, box

    def measure(self, argv: list[str] | str, what: str) -> Sample:
        t, box = self.serve_one()
        t0 = time.perf_counter()
        tx = OneShot(argv)
        if tx.wait():
            sys.exit(f"bench: {what} failed")
        t.join(timeout=600)
        wall = time.perf_counter() - t0
        rx = box[0]
        return Sample(wall, (tx.cpu, rx.cpu), (tx.rss_mib, rx.rss_mib))


class Scp:
    name = "scp"

    def __init__(self, ssh: SSH) -> None:
        self.ssh = ssh

    def run(self, src: Path, dest: Path) -> Sample:
        files = " ".join(f"'{p}'" for p in sorted(src.iterdir()))
        opts = self.ssh.ssh.split(" ", 1)[1].replace(" -p ", " -P ")
        return self.ssh.measure(f"scp -q {opts} {files} root@127.0.0.1:'{dest}/'", "scp")


class Rsync:
    name = "rsync"

    def __init__(self, ssh: SSH) -> None:
        self.ssh = ssh

    def run(self, src: Path, dest: Path) -> Sample:
        return self.ssh.measure(["rsync", "-a", "-e", self.ssh.ssh, f"{src}/", f"root@127.0.0.1:{dest}/"], "rsync")


class LocalSend:
    name = "localsend"

    def __init__(self, work: Path, command: str) -> None:
        self.command = command.split()
        self.home = work / "localsend-home"
        self.home.mkdir(exist_ok=True)

    def run(self, src: Path, dest: Path) -> Sample:
        # localsend-cli turns certificate checks off on its requests session, which a CA bundle
        # named in the environment would turn back on (requests prefers it): drop those.
        env = {k: v for k, v in os.environ.items() if k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
        env["HOME"] = str(self.home)
        rx = OneShot(self.command + ["receive", "--output", str(dest), "--json"], env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(53317)
        t0 = time.perf_counter()
        tx = OneShot(self.command + ["send", "127.0.0.1", *map(str, sorted(src.iterdir())), "--clean"], env=env,
                     stdout=subprocess.DEVNULL)
        if tx.wait():
            sys.exit("bench: localsend-cli send failed")
        wall = time.perf_counter() - t0
        rx.stop()
        rx.wait()
        return Sample(wall, (tx.cpu, rx.cpu), (tx.rss_mib, rx.rss_mib))


class Locafoto:
    name = "locafoto"
    SRC_PORT, DST_PORT = 40201, 40202

    def __init__(self, work: Path, binary: str, folder: str = "locafoto") -> None:
        self.bin = binary
        self.work = work / folder
        self.work.mkdir(exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAFOTO_", "XDG_RUNTIME"))}
        self.passfile = self.work / "pass"
        self.passfile.write_text(os.urandom(18).hex() + "\n")
        self.passfile.chmod(0o600)
        self.warm = self.work / "warm.jpg"
        self.warm.write_bytes(synthetic_photo(1024))
        self.runs = 0

    def cli(self, home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([self.bin, *args, "--home", str(home)], capture_output=True, text=True, env=self.env,
                           timeout=600)
        if check and p.returncode != 0:
            sys.exit(f"bench: locafoto {' '.join(args)} failed: {p.stderr.strip()}")
        return p

    def agent(self, home: Path, name: str, port: int, peer: int) -> subprocess.Popen:
        if not (home / "vault").exists():
            self.cli(home, "vault", "init", "--passphrase-file", str(self.passfile), "--kdf", "interactive")
        a = subprocess.Popen([self.bin, "agent", "--home", str(home), "--name", name, "--no-discovery",
                              "--listen", "127.0.0.1", "--port", str(port), "--peer", f"127.0.0.1:{peer}",
                              "--passphrase-file", str(self.passfile)],
                             stdout=subprocess.DEVNULL, stderr=open(home.parent / f"{name}.log", "a"), env=self.env)
        deadline = time.monotonic() + 120
        while True:
            p = self.cli(home, "status", "--json", check=False)
            if p.returncode == 0 and json.loads(p.stdout).get("vault") == "unlocked":
                # Peak RSS "from just after unlock": the Argon2id peak is behind us, what it
                # leaves resident is not.
                Resident(a.pid).reset_peak()
                return a
            if a.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"bench: the locafoto agent {name} did not start (see {home.parent}/{name}.log)")
            time.sleep(0.05)

    def until(self, what: str, probe, timeout: float = 120):  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not (v := probe()):
            if time.monotonic() > deadline:
                sys.exit(f"bench: locafoto: {what} did not happen")
            time.sleep(0.05)
        return v

    def run(self, src: Path, dest: Path) -> Sample:
        self.runs += 1
        run_dir = self.work / f"run{self.runs}"
        run_dir.mkdir()
        s_home, d_home = self.work / "src-home", run_dir / "dst-home"
        dst_name = f"bench-dst-{self.runs}"
        sender = self.agent(s_home, "bench-src", self.SRC_PORT, self.DST_PORT)
        receiver = self.agent(d_home, dst_name, self.DST_PORT, self.SRC_PORT)
        s, r = Resident(sender.pid), Resident(receiver.pid)
        sampler = TreeSampler([s, r])
        events = None
        try:
            # One small offer so that the receiver knows the sender's key, then trust it.
            self.until("the sender to see the receiver", lambda: any(
                p.get("name") == dst_name and p.get("online") for p in json.loads(self.cli(s_home, "peers", "--json").stdout)))
            first = subprocess.Popen([self.bin, "send", dst_name, str(self.warm), "--home", str(s_home)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
            offer = self.until("the first offer", lambda: json.loads(self.cli(d_home, "inbox", "--json").stdout))
            self.cli(d_home, "accept", offer[0]["id"])
            first.wait(timeout=120)
            fp = json.loads(self.cli(s_home, "id", "--json").stdout)["fingerprint"]
            self.cli(d_home, "trust", fp)

            # Start from idle agents, as a user finds them: the warm-up's media workers (if the
            # agent has any) have exited, so the send pays for starting its own.
            self.until("the agents' child processes to exit", lambda: len(s.tree()) == 1 and len(r.tree()) == 1, 30)
            idle = (tree_rss(s), tree_rss(r))
            unlock_peak = (s.status_kib("VmHWM") / 1024, r.status_kib("VmHWM") / 1024)  # unlock .. now
            files = sorted(src.iterdir())
            # The receiver's events, from before the send: the offer's arrival, each photo indexed.
            # The offer's previews are read as it arrives: the inbox forgets them once it is done.
            sock = d_home / "agent.sock"
            events = EventStream(sock, "offer,photo", r, on_offer=lambda ev: next(
                (o.get("previewCount", 0) for o in control_get(sock, "/v1/inbox?all=1&items=0") if o["id"] == ev.get("offer")), None))
            s.reset_peak()
            r.reset_peak()
            c0 = (s.cpu_now(), r.cpu_now())
            t0 = time.perf_counter()
            tx = OneShot([self.bin, "send", dst_name, *map(str, files), "--home", str(s_home)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
            if tx.wait():
                sys.exit(f"bench: locafoto send failed: {tx.proc.stderr.read().decode().strip()[-2000:]}")
            t_end = time.perf_counter()
            wall = t_end - t0
            cpu = (s.cpu_now() - c0[0] + tx.cpu, r.cpu_now() - c0[1])
            rss = (max(s.status_kib("VmHWM") / 1024, sampler.peak_mib(0, t0, t_end)),
                   max(r.status_kib("VmHWM") / 1024, sampler.peak_mib(1, t0, t_end)))
            rss_anon = (sampler.peak_anon_mib(0, t0, t_end), sampler.peak_anon_mib(1, t0, t_end))

            offered = events.wait(lambda evs: [e for e in evs if e[2]["kind"] == "offer.received"], 30, "offer.received")[0]
            to_offer = offered[0] - t0
            previews = events.offer_probe
            t_idx, cpu_idx_r, indexed = self.until_indexed(events, r, len(files), t_end)
            cpu_idx = (s.cpu_now() - c0[0] + tx.cpu, cpu_idx_r - c0[1])
            time.sleep(3)
            idle_after = (tree_rss(s), tree_rss(r))
            sampler.close()
            peak_unlock = (max(unlock_peak[0], s.status_kib("VmHWM") / 1024, sampler.peak_mib(0)),
                           max(unlock_peak[1], r.status_kib("VmHWM") / 1024, sampler.peak_mib(1)))
            workers = (sampler.workers_mib(0), sampler.workers_mib(1))
            thumbs = self.thumbnails(d_home, {f.name for f in files})
            self.cli(d_home, "export", "--since", "1970-01-01", str(dest))
            pending = self.pending_offer(s_home, d_home, dst_name, fp, files, s)
            (dest / self.warm.name).unlink(missing_ok=True)
            return Sample(wall, cpu, rss, {
                "idle_rss": idle, "rss_anon": rss_anon, "cli_rss": tx.rss_mib, "to_offer": to_offer, "previews": previews,
                "indexed_wall": t_idx - t0, "indexed_cpu": cpu_idx, "indexed": (indexed, len(files)),
                "peak_unlock": peak_unlock, "peak_before_send": unlock_peak, "workers_peak": workers,
                "idle_after": idle_after, "thumbnails": thumbs, "pending": pending})
        finally:
            sampler.close()
            if events is not None:
                events.close()
            for a in (sender, receiver):
                a.terminate()
                a.wait(timeout=60)
            shutil.rmtree(run_dir, ignore_errors=True)

    def pending_offer(self, s_home: Path, d_home: Path, dst_name: str, fp: str, files: list[Path],
                      s: Resident) -> tuple[float, float, int]:
        """The same photos offered to a receiver that no longer trusts the sender, so that the
        offer waits for its user: (time to the offer in the inbox, time until its last preview is
        in, previews), from idle agents; then rejected. Outside the timed figures."""
        self.cli(d_home, "untrust", fp)
        self.until("the sender's media workers to exit", lambda: len(s.tree()) == 1, 30)
        sock = d_home / "agent.sock"
        events = EventStream(sock, "offer", Resident(os.getpid()))
        try:
            t0 = time.perf_counter()
            tx = OneShot([self.bin, "send", dst_name, *map(str, files), "--home", str(s_home)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
            offered = events.wait(lambda evs: [e for e in evs if e[2]["kind"] == "offer.received"], 60, "offer.received")[0]
            offer_id = offered[2]["offer"]

            def complete():  # noqa: ANN202
                o = next((o for o in control_get(sock, "/v1/inbox?items=0") if o["id"] == offer_id), None)
                return o if o is not None and not o.get("previewsPending") else None
            o = self.until("the offer's previews", complete, 60)
            t_previews = max([offered[0]] + [e[0] for e in events.of("offer.preview")])
            self.cli(d_home, "reject", offer_id)
            tx.wait()
        finally:
            events.close()
        return offered[0] - t0, t_previews - t0, o.get("previewCount", 0)

    @staticmethod
    def until_indexed(events: EventStream, r: Resident, photos: int, t_end: float) -> tuple[float, float, int]:
        """(time, receiver CPU, photos indexed) once every photo has its `photo.indexed`, or, for
        photos the indexer cannot read, at the receiver's last activity before 3 s of idling
        (activity: more than 10 % of a core over 0.2 s)."""
        last_cpu = r.cpu_now()
        active = (t_end, last_cpu)
        deadline = time.perf_counter() + 900
        while True:
            done = events.of("photo.indexed")
            if len(done) >= photos:
                return done[-1][0], done[-1][1], len(done)
            now, cpu = time.perf_counter(), r.cpu_now()
            if cpu - last_cpu > 0.02:
                active = (now, cpu)
            last_cpu = cpu
            if now - active[0] > 3.0 or now > deadline:
                return active[0], active[1], len(done)
            time.sleep(0.2)

    @staticmethod
    def thumbnails(home: Path, names: set[str]) -> int:
        """How many of the sent photos the receiving vault has a thumbnail of."""
        sock = home / "agent.sock"
        photos = control_get(sock, "/v1/photos?hidden=include&limit=100000")
        mine = [p["id"] for p in photos if p.get("name") in names]
        return sum(1 for i in mine if control_get(sock, f"/v1/photos/{i}")["media"].get("hasThumbnail"))


class LocalSendD:
    """localsendd 0.1.1 from PyPI: a LocalSend protocol v2.2 daemon (HTTPS, mutual TLS) driven by
    localsendctl over its control socket."""
    name = "localsendd"
    RX_PORT, TX_PORT = 53317, 53318      # the receiver on LocalSend's port: `send --to IP` goes there

    def __init__(self, work: Path, bindir: str) -> None:
        self.daemon = os.path.join(bindir, "localsendd")
        self.ctl = os.path.join(bindir, "localsendctl")
        self.dir = work / "localsendd"
        self.dir.mkdir(exist_ok=True)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("XDG_", "LOCALSEND")) and k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}

    def start(self, side: str, port: int, *extra: str) -> tuple[subprocess.Popen, Path]:
        sock = self.dir / f"{side}.sock"
        sock.unlink(missing_ok=True)
        env = dict(self.env, XDG_STATE_HOME=str(self.dir / f"{side}-state"), XDG_CONFIG_HOME=str(self.dir / "no-config"))
        d = subprocess.Popen([self.daemon, "--port", str(port), "--socket", str(sock), "--alias", f"bench-{side}",
                              "--encryption", "--log-level", "warning", *extra],
                             stdout=open(self.dir / f"{side}.log", "a"), stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 60
            while not sock.exists():
                if d.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"bench: localsendd ({side}) did not start (see {self.dir}/{side}.log)")
                time.sleep(0.02)
            wait_listening(port)
            # Its start-up subnet scan (127.0.0.2-254 here, HTTPS then HTTP) is not the transfer's work.
            wait_quiet([d.pid])
        except BaseException:
            d.terminate()
            d.wait(timeout=60)
            raise
        return d, sock

    def run(self, src: Path, dest: Path) -> Sample:
        tx_d, tx_sock = self.start("tx", self.TX_PORT)
        rx_d, _ = None, None
        try:
            rx_d, _ = self.start("rx", self.RX_PORT, "--download-dir", str(dest), "--unattended")
            return timed_send(tx_d.pid, rx_d.pid, [self.ctl, "--socket", str(tx_sock), "send",
                                                    *map(str, sorted(src.iterdir())), "--to", "127.0.0.1", "--wait",
                                                    "--quiet"], self.env)
        finally:
            for d in (tx_d, rx_d):
                if d is not None:
                    d.terminate()
                    d.wait(timeout=60)


def localsend_agent(fota: "Locafoto", home: Path, name: str, port: int, log: str) -> subprocess.Popen:
    """A locafoto agent with a new vault in `home` and LocalSend on at `port` (no multicast),
    once it is unlocked."""
    fota.cli(home, "vault", "init", "--passphrase-file", str(fota.passfile), "--kdf", "interactive")
    agent = subprocess.Popen(
        [fota.bin, "agent", "--home", str(home), "--name", name, "--no-discovery", "--listen", "127.0.0.1",
         "--port", "0", "--localsend-port", str(port), "--no-localsend-multicast",
         "--passphrase-file", str(fota.passfile)],
        stdout=subprocess.DEVNULL, stderr=open(fota.work / log, "a"), env=fota.env)
    try:
        fota.until("the agent to unlock", lambda: (p := fota.cli(home, "status", "--json", check=False))
                   .returncode == 0 and json.loads(p.stdout).get("vault") == "unlocked")
        fota.cli(home, "localsend", "on")
    except BaseException:
        agent.terminate()
        agent.wait(timeout=60)
        raise
    return agent


def timed_send(sender: int, receiver: int, command: list[str], env: dict) -> Sample:
    """Runs the send `command` (a CLI that waits for the end) between two quiet processes:
    wall time, CPU per side (the CLI's counted with the sender), peak RSS per side."""
    s, r = Resident(sender), Resident(receiver)
    wait_quiet([sender, receiver])
    s.reset_peak()
    r.reset_peak()
    c0 = (s.cpu_now(), r.cpu_now())
    t0 = time.perf_counter()
    tx = OneShot(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if tx.wait():
        sys.exit(f"bench: {os.path.basename(command[0])} send failed: {tx.proc.stdout.read().decode().strip()[-2000:]}")
    wall = time.perf_counter() - t0
    cpu = (s.cpu_now() - c0[0] + tx.cpu, r.cpu_now() - c0[1])
    rss = (s.status_kib("VmHWM") / 1024, r.status_kib("VmHWM") / 1024)
    return Sample(wall, cpu, rss, {"ctl_rss": tx.rss_mib})


class LocalSendAndLocafoto:
    """A localsendd and a locafoto agent, one sending to the other."""

    def __init__(self, work: Path, bindir: str, binary: str) -> None:
        self.lsd = LocalSendD(work, bindir)
        self.fota = Locafoto(work, binary)
        self.runs = 0

    def next_home(self, prefix: str) -> Path:
        self.runs += 1
        return self.fota.work / f"{prefix}-run{self.runs}"

    @staticmethod
    def stop(home: Path, *processes: subprocess.Popen | None) -> None:
        for d in processes:
            if d is not None:
                d.terminate()
                d.wait(timeout=60)
        shutil.rmtree(home, ignore_errors=True)


class LocalSendToLocafoto(LocalSendAndLocafoto):
    """localsendd 0.1.1 sending to a locafoto agent that speaks LocalSend (`localsend on`, issue
    27): the phone-to-node path. The agent trusts the device after a first offer (accepted by
    hand), so the timed send is unattended as localsendd's own receiver is; timed from starting
    `localsendctl send --wait` until it exits, which is after the agent answered every upload,
    and it answers each once the photo is committed to its vault."""
    name = "ls2locafoto"

    def run(self, src: Path, dest: Path) -> Sample:
        home = self.next_home("ls")
        tx_d, tx_sock = self.lsd.start("ls2f-tx", LocalSendD.TX_PORT)
        agent = None
        try:
            agent = localsend_agent(self.fota, home, "bench-ls-dst", LocalSendD.RX_PORT, "ls-dst.log")
            # A first offer, accepted by hand, so that the agent knows the device; then trusted.
            first = OneShot([self.lsd.ctl, "--socket", str(tx_sock), "send", str(self.fota.warm), "--to", "127.0.0.1",
                             "--wait", "--quiet"], env=self.lsd.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            offer = self.fota.until("the first offer", lambda: json.loads(self.fota.cli(home, "inbox", "--json").stdout))
            self.fota.cli(home, "accept", "--no-wait", offer[0]["id"])
            first.wait()
            self.fota.cli(home, "localsend", "trust", "bench-ls2f-tx")
            sample = timed_send(tx_d.pid, agent.pid, [self.lsd.ctl, "--socket", str(tx_sock), "send",
                                                      *map(str, sorted(src.iterdir())), "--to", "127.0.0.1", "--wait",
                                                      "--quiet"], self.lsd.env)
            self.fota.cli(home, "export", "--since", "1970-01-01", str(dest))
            (dest / self.fota.warm.name).unlink(missing_ok=True)
            return sample
        finally:
            self.stop(home, tx_d, agent)


class LocafotoToLocalSend(LocalSendAndLocafoto):
    """A locafoto agent sending to localsendd 0.1.1 (`locafoto send localsend:ADDRESS`, issue
    27: a node to a phone's LocalSend app), localsendd accepting unattended as in its own run;
    timed from starting `locafoto send` until it exits, which is after localsendd answered every
    upload, and it answers each once the file is written."""
    name = "locafoto2ls"

    def run(self, src: Path, dest: Path) -> Sample:
        home = self.next_home("f2ls")
        rx_d, _ = self.lsd.start("f2ls-rx", LocalSendD.RX_PORT, "--download-dir", str(dest), "--unattended")
        agent = None
        try:
            agent = localsend_agent(self.fota, home, "bench-f2ls-src", LocalSendD.TX_PORT, "f2ls-src.log")
            to = f"localsend:127.0.0.1:{LocalSendD.RX_PORT}"
            # A first send, as for the other tools, so that nothing is made for the first time
            # in the timed one.
            self.fota.cli(home, "send", to, str(self.fota.warm))
            (dest / self.fota.warm.name).unlink(missing_ok=True)
            return timed_send(agent.pid, rx_d.pid, [self.fota.bin, "send", to, *map(str, sorted(src.iterdir())),
                                                    "--home", str(home)], self.fota.env)
        finally:
            self.stop(home, agent, rx_d)


# ---------------------------------------------------------------- the link

def link_rate(text: str) -> float:
    """tc's rate units (SI, bits): 1gbit, 500mbit, 100kbit, 1e9bit."""
    m = re.fullmatch(r"([0-9.e]+)\s*(bit|kbit|mbit|gbit|tbit)", text.strip().lower())
    if not m:
        raise argparse.ArgumentTypeError(f"not a tc rate in bits: {text!r} (e.g. 1gbit, 500mbit)")
    return float(m.group(1)) * {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}[m.group(2)]


def probe_loopback(size: int = 64 << 20) -> float:
    """Bits per second of one TCP stream over 127.0.0.1 (a check that the qdisc holds)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def drain() -> None:
        c, _ = srv.accept()
        while c.recv(1 << 20):
            pass
        c.close()

    t = threading.Thread(target=drain)
    t.start()
    c = socket.create_connection(srv.getsockname())
    block = bytes(1 << 20)
    t0 = time.perf_counter()
    for _ in range(size >> 20):
        c.sendall(block)
    c.shutdown(socket.SHUT_WR)
    t.join()
    elapsed = time.perf_counter() - t0
    c.close()
    srv.close()
    return size * 8 / elapsed


def link_up(rate: str, burst: str) -> str:
    before = probe_loopback()
    subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", burst, "latency", "20ms"],
                   check=True)
    shown = subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True, check=True).stdout.strip()
    after = probe_loopback()
    want = link_rate(rate)
    note = (f"{shown}; one TCP stream over 127.0.0.1: {before / 1e9:.1f} Gbit/s before, {after / 1e9:.3f} Gbit/s "
            f"through it ({after / want * 100:.0f} % of {rate})")
    log("== link: " + note)
    if not 0.8 * want <= after <= 1.1 * want:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=False)
        sys.exit(f"bench: the tbf qdisc on lo does not give {rate}: {note}")
    return note


def link_down() -> None:
    stats = subprocess.run(["tc", "-s", "qdisc", "show", "dev", "lo"], capture_output=True, text=True).stdout
    log("== link at the end: " + " ".join(stats.split()))
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=False)


# ---------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--bin-b", default=None, metavar="PATH",
                    help="a second locafoto binary, the tool locafoto-b: an A/B of two builds in one interleaved run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workloads", default="W0,W1,W2,W3,W4,W5")
    ap.add_argument("--tools", default=None,
                    help="comma-separated (default: all of them; locafoto-b only with --bin-b)")
    ap.add_argument("--localsend", default="localsend-cli", help="command that runs localsend-cli")
    ap.add_argument("--localsendd", default=None,
                    help="folder with localsendd and localsendctl (default: the one on PATH)")
    ap.add_argument("--link", default=None, metavar="RATE",
                    help="rate-limit loopback with a tbf qdisc for the runs, e.g. 1gbit (needs a private namespace)")
    ap.add_argument("--link-burst", default="256kb", help="the tbf qdisc's burst (default 256kb)")
    ap.add_argument("--work", default=None, help="scratch folder (default: a new one under /var/tmp)")
    a = ap.parse_args()
    workloads = a.workloads.split(",")
    tools = a.tools.split(",") if a.tools else [t for t in TOOLS if t != "locafoto-b" or a.bin_b]
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w}")
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t}")
    if ("locafoto-b" in tools) != (a.bin_b is not None):
        ap.error("the tool locafoto-b and --bin-b go together")
    if a.link:
        try:
            link_rate(a.link)
        except argparse.ArgumentTypeError as e:
            ap.error(str(e))
    lsd_dir = a.localsendd or os.path.dirname(shutil.which("localsendd") or "")
    work = Path(a.work or tempfile.mkdtemp(prefix="locafoto-bench.", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    ssh = SSH(work) if {"scp", "rsync"} & set(tools) else None
    runners = {"tar": lambda: TarNc(work), "scp": lambda: Scp(ssh), "rsync": lambda: Rsync(ssh),
               "localsend": lambda: LocalSend(work, a.localsend), "localsendd": lambda: LocalSendD(work, lsd_dir),
               "locafoto": lambda: Locafoto(work, os.path.abspath(a.bin)),
               "locafoto-b": lambda: Locafoto(work, os.path.abspath(a.bin_b or ""), "locafoto-b"),
               "ls2locafoto": lambda: LocalSendToLocafoto(work, lsd_dir, os.path.abspath(a.bin)),
               "locafoto2ls": lambda: LocafotoToLocalSend(work, lsd_dir, os.path.abspath(a.bin))}
    impl = {t: runners[t]() for t in tools}
    samples: dict[tuple[str, str], list[Sample]] = {}
    sizes: dict[str, int] = {}
    link_note = None
    try:
        for w in workloads:
            what = (f"{REAL_JPEG[w][0]}x{REAL_JPEG[w][1]} JPEG" if w in REAL_JPEG else
                    "camera-roll photos (make-camera-roll.py)" if w in CAMERA_ROLL else f"{WORKLOADS[w][1]} bytes")
            log(f"== {w}: making {WORKLOADS[w][0]} x {what}")
            src, sums = make_workload(work, w)
            sizes[w] = sum(f.stat().st_size for f in src.iterdir())
            if a.link and link_note is None:
                link_note = link_up(a.link, a.link_burst)
            for run in range(a.runs):
                order = tools[run % len(tools):] + tools[:run % len(tools)]
                for t in order:
                    dest = work / "dest"
                    shutil.rmtree(dest, ignore_errors=True)
                    dest.mkdir()
                    s = impl[t].run(src, dest)
                    verify(dest, sums, t)
                    samples.setdefault((w, t), []).append(s)
                    log(f"   {w} run {run + 1} {t:10} {s.wall:7.3f} s  cpu {s.cpu[0]:.2f}/{s.cpu[1]:.2f} s  "
                        f"rss {s.rss[0]:.0f}/{s.rss[1]:.0f} MiB {brief(s.extra)}")
            shutil.rmtree(src)
    finally:
        if link_note is not None:
            link_down()
        shutil.rmtree(work / "dest", ignore_errors=True)
    report(workloads, tools, samples, a.runs, sizes, a.link, link_note)
    shutil.rmtree(work, ignore_errors=True)


def brief(extra: dict) -> str:
    def f(v: object, top: bool = True) -> str:
        if isinstance(v, float):
            return f"{v:.2f}"
        if isinstance(v, tuple):
            inner = "/".join(f(x, False) for x in v)
            return inner if top else f"({inner})"
        return str(v)
    return " ".join(f"{k}={f(v)}" for k, v in extra.items())


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def report(workloads: list[str], tools: list[str], samples: dict, runs: int, sizes: dict[str, int],
           link: str | None, link_note: str | None) -> None:
    label = {"tar": "tar\\|nc", "scp": "scp (aes128-gcm)", "rsync": "rsync over ssh", "localsend": "localsend-cli",
             "localsendd": "localsendd (HTTPS)", "locafoto": "locafoto", "locafoto-b": "locafoto (--bin-b)",
             "ls2locafoto": "localsendd → locafoto",
             "locafoto2ls": "locafoto → localsendd"}
    desc = {"W0": "1 × 1 KiB", "W1": "1 × 1 GiB", "W2": "200 × 3 MiB", "W3": "1000 × 200 KiB", "W4": "30 × 12 MP JPEG",
            "W5": "camera roll, 40 × 12 MP JPEG+HEIC"}
    rate = link_rate(link) if link else None
    where = f"on a {link} link (tbf on lo)" if link else "on loopback"
    print(f"\nWall time {where}, median of {runs} interleaved runs; ratios are to tar|nc in the same run set.\n")
    if link_note:
        print(f"Link: {link_note}.\n")
    print("| workload | " + ("bytes alone | " if rate else "") + " | ".join(label[t] for t in tools) + " |")
    print("|---" * (len(tools) + 1 + (1 if rate else 0)) + "|")
    for w in workloads:
        base = med([s.wall for s in samples[(w, "tar")]]) if "tar" in tools else None
        cells = [f"{sizes[w] * 8 / rate:.2f} s ({sizes[w] / 1e6:.1f} MB)"] if rate else []
        for t in tools:
            m = med([s.wall for s in samples[(w, t)]])
            cells.append(f"{m:.2f} s" if t == "tar" or base is None or w == "W0" else f"{m / base:.2f}× ({m:.2f} s)")
        print(f"| {w}: {desc[w]} | " + " | ".join(cells) + " |")
    if rate:
        print(f"\nWall time as a multiple of the bytes' own time on the {link} link (the files' bytes × 8 / rate; "
              "not for a workload whose bytes take under 10 ms):\n")
        print("| workload | " + " | ".join(label[t] for t in tools) + " |")
        print("|---" * (len(tools) + 1) + "|")
        for w in workloads:
            own = sizes[w] * 8 / rate
            if own < 0.01:       # W0: latency, not bytes
                print(f"| {w} | " + " | ".join("—" for t in tools) + " |")
                continue
            print(f"| {w} | " + " | ".join(f"{med([s.wall for s in samples[(w, t)]]) / own:.2f}×" for t in tools) + " |")
    print("\nCPU seconds sender / receiver, and peak RSS sender / receiver (MiB), medians:\n")
    print("| workload | " + " | ".join(label[t] for t in tools) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for w in workloads:
        cells = []
        for t in tools:
            ss = samples[(w, t)]
            cells.append(f"{med([s.cpu[0] for s in ss]):.2f} / {med([s.cpu[1] for s in ss]):.2f} s, "
                         f"{med([s.rss[0] for s in ss]):.0f} / {med([s.rss[1] for s in ss]):.0f} MiB")
        print(f"| {w} | " + " | ".join(cells) + " |")
    for lt in [t for t in ("locafoto", "locafoto-b") if t in tools]:
        def pair(ss: list[Sample], key: str, fmt: str, part=lambda v: v) -> str:  # noqa: ANN001
            return f"{med([part(s.extra[key][0]) for s in ss]):{fmt}} / {med([part(s.extra[key][1]) for s in ss]):{fmt}}"

        def whole(v: tuple[float, float]) -> float:
            return v[0] + v[1]

        print(f"\n{label[lt]}, medians: time to offer (from `send` to the receiver's `offer.received`), previews in the "
              "offer, and from `send` until the receiver's indexer has indexed every photo (wall, CPU per side, "
              "workers included); peak RSS per side from just after unlock to the end (the agent and its worker "
              "processes together), the largest worker's, RSS once indexed and 3 s idle (agent + workers), and "
              "the peak RssAnon during the send (agent + workers, sampled every 50 ms: the heap and stacks, without "
              "file-backed pages):\n")
        print("| workload | time to offer | previews | until indexed | indexed | thumbnails | CPU until indexed, "
              "sender / receiver | peak RSS since unlock, sender / receiver | largest worker | idle RSS after | "
              "peak RssAnon during the send, sender / receiver |")
        print("|---" * 11 + "|")
        for w in workloads:
            ss = samples[(w, lt)]
            n = ss[0].extra["indexed"][1]
            pv = [s.extra["previews"] for s in ss if s.extra["previews"] is not None]
            print(f"| {w} | {med([s.extra['to_offer'] for s in ss]):.2f} s | {f'{med(pv):.0f}' if pv else '?'} | "
                  f"{med([s.extra['indexed_wall'] for s in ss]):.2f} s | "
                  f"{min(s.extra['indexed'][0] for s in ss)} of {n} | {min(s.extra['thumbnails'] for s in ss)} of {n} | "
                  f"{pair(ss, 'indexed_cpu', '.2f')} s | {pair(ss, 'peak_unlock', '.0f')} MiB | "
                  f"{pair(ss, 'workers_peak', '.0f')} MiB | {pair(ss, 'idle_after', '.0f', whole)} MiB"
                  + (f" (workers {pair(ss, 'idle_after', '.0f', lambda v: v[1])})"
                     if any(s.extra['idle_after'][i][1] for s in ss for i in (0, 1)) else "")
                  + f" | {pair(ss, 'rss_anon', '.0f')} MiB |")
        print(f"\n{label[lt]}, medians, the same photos offered to a receiver that does not trust the sender (the offer "
              "waits for its user; previews follow it, cap late-preview): from `send` to `offer.received`, and to "
              "the last of its previews in the inbox:\n")
        print("| workload | time to offer, pending | until its previews are in | previews |")
        print("|---" * 4 + "|")
        for w in workloads:
            ss = samples[(w, lt)]
            print(f"| {w} | {med([s.extra['pending'][0] for s in ss]):.2f} s | {med([s.extra['pending'][1] for s in ss]):.2f} s | "
                  f"{med([s.extra['pending'][2] for s in ss]):.0f} |")
        idle = [s.extra["idle_rss"] for w in workloads for s in samples[(w, lt)]]
        print(f"\n{label[lt]}: the agents' RSS idle after unlock, before a send (median, workers included): sender "
              f"{med([whole(i[0]) for i in idle]):.0f} MiB, receiver {med([whole(i[1]) for i in idle]):.0f} MiB; the "
              "sender's CPU includes the `locafoto send` CLI (its own peak RSS "
              f"{med([s.extra['cli_rss'] for w in workloads for s in samples[(w, lt)]]):.0f} MiB); CPU and "
              "RSS include the agents' child processes (media workers).")
    if "localsendd" in tools:
        print(f"\nlocalsendd: the sender's CPU includes `localsendctl send --wait` (its own peak RSS "
              f"{med([s.extra['ctl_rss'] for w in workloads for s in samples[(w, 'localsendd')]]):.0f} MiB); the daemons' "
              "peak RSS is from just before the send.")


if __name__ == "__main__":
    main()
