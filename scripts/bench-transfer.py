#!/usr/bin/env python3
"""bench-transfer.py - locafoto's transfer path next to the tools a user would pick instead.

    python3 scripts/bench-transfer.py --bin BIN [--runs 3] [--workloads W0,W1,W2,W3,W4]
                                      [--tools tar,scp,rsync,localsend,locafoto] [--localsend CMD]

Run it through scripts/bench.sh, which installs the tools and puts it in a private network
namespace (loopback only). Workloads W0-W3 are synthetic photos (a JPEG signature, then random
bytes, which libvips refuses at once, so no preview is made for them); W4 is real photos:
  W0  1 x 1 KiB       W1  1 x 1 GiB       W2  200 x 3 MiB       W3  1000 x 200 KiB
  W4  30 x 12-megapixel JPEG (~4.5 MiB each: colour noise, quality 85, made with `vips`), so the
      sender decodes each of the first 24 to make its preview, as it does for a camera's photos
Tools, each from a fresh destination folder, both ends on this machine:
  tar      `tar -c | nc` -> `nc | tar -x` (the floor: no encryption, no integrity check)
  scp      scp, cipher aes128-gcm@openssh.com, to an sshd started for the connection (`sshd -i`)
  rsync    rsync -a over the same ssh
  localsend  localsend-cli (a Python implementation of the LocalSend v2 protocol, HTTPS)
  locafoto two agents (fresh receiver vault each run; the receiver trusts the sender), timed
           from `locafoto send` until it exits, when every photo is verified and imported
Runs are interleaved (run 1 of every tool, then run 2, ...; the order rotates per run), nothing
adds a `sync` to any side, the source files are in the page cache for every tool alike (written
once, read by every run). Wall time is from starting the sender to the end of the receiving side.
CPU seconds and peak RSS are per side: from wait4() of one-shot processes (children included),
from /proc deltas and a VmHWM reset (clear_refs) for the long-running agents. After each run,
every received file is compared by SHA-256 with its source (locafoto: exported from the vault).
Prints medians as Markdown tables. Not a test: it asserts only that every file arrived intact.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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

WORKLOADS = {"W0": (1, 1024), "W1": (1, 1 << 30), "W2": (200, 3 << 20), "W3": (1000, 200 << 10), "W4": (30, 0)}
REAL_JPEG = {"W4": (4000, 3000)}
TOOLS = ["tar", "scp", "rsync", "localsend", "locafoto"]
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
        status = self.proc.wait(timeout=timeout)
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
    """A long-running process (an agent): CPU as a /proc delta, peak RSS after a VmHWM reset."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def cpu_now(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK

    def status_kib(self, key: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return 0

    def reset_peak(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")


def wait_listening(port: int, timeout: float = 60) -> None:
    """Until something listens on 127.0.0.1:port (read from /proc, without connecting)."""
    want = {f"0100007F:{port:04X}", f"00000000:{port:04X}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            f = line.split()
            if f[1] in want and f[3] == "0A":
                return
        time.sleep(0.01)
    raise TimeoutError(f"nothing listens on port {port}")


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


def make_workload(root: Path, name: str) -> tuple[Path, dict[str, str]]:
    count, size = WORKLOADS[name]
    d = root / "src" / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    sums = {}
    if name in REAL_JPEG:
        for i in range(count):
            p = d / f"IMG_{i:04d}.jpg"
            make_jpeg(p, *REAL_JPEG[name], seed=i)
            sums[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
        return d, sums
    for i in range(count):
        data = b"\xff\xd8\xff\xe0" + os.urandom(size - 4) if size < (64 << 20) else None
        p = d / f"IMG_{i:04d}.jpg"
        h = hashlib.sha256()
        with open(p, "wb") as f:
            if data is not None:
                f.write(data)
                h.update(data)
            else:
                head = b"\xff\xd8\xff\xe0"
                f.write(head)
                h.update(head)
                left = size - 4
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

    def __init__(self, work: Path, binary: str) -> None:
        self.bin = binary
        self.work = work / "locafoto"
        self.work.mkdir(exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAFOTO_", "XDG_RUNTIME"))}
        self.passfile = self.work / "pass"
        self.passfile.write_text(os.urandom(18).hex() + "\n")
        self.passfile.chmod(0o600)
        self.warm = self.work / "warm.jpg"
        self.warm.write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(1020))
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

            s, r = Resident(sender.pid), Resident(receiver.pid)
            idle = (s.status_kib("VmRSS") / 1024, r.status_kib("VmRSS") / 1024)
            s.reset_peak()
            r.reset_peak()
            c0 = (s.cpu_now(), r.cpu_now())
            t0 = time.perf_counter()
            tx = OneShot([self.bin, "send", dst_name, *map(str, sorted(src.iterdir())), "--home", str(s_home)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
            if tx.wait():
                sys.exit(f"bench: locafoto send failed: {tx.proc.stderr.read().decode().strip()[-2000:]}")
            wall = time.perf_counter() - t0
            cpu = (s.cpu_now() - c0[0] + tx.cpu, r.cpu_now() - c0[1])
            rss = (s.status_kib("VmHWM") / 1024, r.status_kib("VmHWM") / 1024)
            self.cli(d_home, "export", "--since", "1970-01-01", str(dest))
            (dest / self.warm.name).unlink(missing_ok=True)
            return Sample(wall, cpu, rss, {"idle_rss": idle, "cli_rss": tx.rss_mib})
        finally:
            for a in (sender, receiver):
                a.terminate()
                a.wait(timeout=60)
            shutil.rmtree(run_dir, ignore_errors=True)


# ---------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workloads", default="W0,W1,W2,W3,W4")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--localsend", default="localsend-cli", help="command that runs localsend-cli")
    ap.add_argument("--work", default=None, help="scratch folder (default: a new one under /var/tmp)")
    a = ap.parse_args()
    workloads = a.workloads.split(",")
    tools = a.tools.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w}")
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t}")
    work = Path(a.work or tempfile.mkdtemp(prefix="locafoto-bench.", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    ssh = SSH(work) if {"scp", "rsync"} & set(tools) else None
    runners = {"tar": lambda: TarNc(work), "scp": lambda: Scp(ssh), "rsync": lambda: Rsync(ssh),
               "localsend": lambda: LocalSend(work, a.localsend), "locafoto": lambda: Locafoto(work, os.path.abspath(a.bin))}
    impl = {t: runners[t]() for t in tools}
    samples: dict[tuple[str, str], list[Sample]] = {}
    try:
        for w in workloads:
            log(f"== {w}: making {WORKLOADS[w][0]} x " + (f"{REAL_JPEG[w][0]}x{REAL_JPEG[w][1]} JPEG" if w in REAL_JPEG else f"{WORKLOADS[w][1]} bytes"))
            src, sums = make_workload(work, w)
            for run in range(a.runs):
                order = tools[run % len(tools):] + tools[:run % len(tools)]
                for t in order:
                    dest = work / "dest"
                    shutil.rmtree(dest, ignore_errors=True)
                    dest.mkdir()
                    s = impl[t].run(src, dest)
                    verify(dest, sums, t)
                    samples.setdefault((w, t), []).append(s)
                    log(f"   {w} run {run + 1} {t:9} {s.wall:7.3f} s  cpu {s.cpu[0]:.2f}/{s.cpu[1]:.2f} s  "
                        f"rss {s.rss[0]:.0f}/{s.rss[1]:.0f} MiB {s.extra or ''}")
            shutil.rmtree(src)
    finally:
        shutil.rmtree(work / "dest", ignore_errors=True)
    report(workloads, tools, samples, a.runs)
    shutil.rmtree(work, ignore_errors=True)


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def report(workloads: list[str], tools: list[str], samples: dict, runs: int) -> None:
    label = {"tar": "tar\\|nc", "scp": "scp (aes128-gcm)", "rsync": "rsync over ssh", "localsend": "localsend-cli",
             "locafoto": "locafoto"}
    desc = {"W0": "1 × 1 KiB", "W1": "1 × 1 GiB", "W2": "200 × 3 MiB", "W3": "1000 × 200 KiB", "W4": "30 × 12 MP JPEG"}
    print(f"\nWall time, median of {runs} interleaved runs; ratios are to tar|nc in the same run set.\n")
    print("| workload | " + " | ".join(label[t] for t in tools) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for w in workloads:
        base = med([s.wall for s in samples[(w, "tar")]]) if "tar" in tools else None
        cells = []
        for t in tools:
            m = med([s.wall for s in samples[(w, t)]])
            cells.append(f"{m:.2f} s" if t == "tar" or base is None or w == "W0" else f"{m / base:.2f}× ({m:.2f} s)")
        print(f"| {w}: {desc[w]} | " + " | ".join(cells) + " |")
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
    if "locafoto" in tools:
        idle = [s.extra["idle_rss"] for w in workloads for s in samples[(w, "locafoto")]]
        print(f"\nlocafoto agents' RSS idle after unlock, before a send (median): sender "
              f"{med([i[0] for i in idle]):.0f} MiB, receiver {med([i[1] for i in idle]):.0f} MiB; the sender's CPU "
              "includes the `locafoto send` CLI.")


if __name__ == "__main__":
    main()
