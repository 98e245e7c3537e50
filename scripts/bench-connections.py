#!/usr/bin/env python3
"""bench-connections.py - what a flood of connections costs an agent, and what it gets back.

    python3 scripts/bench-connections.py BIN [CONNECTIONS] [ROUNDS]

Starts an agent (loopback, no discovery) with the open-files soft limit at 1024, then:
1. CONNECTIONS idle TCP connections from many loopback addresses: how many the agent kept, how
   many it refused, whether `locafoto status` still answers and how long it takes;
2. CONNECTIONS peers that complete a Noise handshake (tests/Integration/rogue.py) and leave a
   65,000-byte frame half sent: the agent's RSS before, during and after they close. This is
   repeated ROUNDS times (default 3): memory that a round leaks would grow from round to round,
   memory that the allocator keeps for the next flood would not.
Prints figures; asserts only that the agent kept answering.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "Integration"))
import rogue  # noqa: E402
from lfharness import clean_env as env  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3


def rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def status(home: Path) -> tuple[float, dict | None]:
    t0 = time.perf_counter()
    p = subprocess.run([BIN, "status", "--json", "--home", str(home)], capture_output=True, text=True, env=env(), timeout=120)
    return time.perf_counter() - t0, (json.loads(p.stdout) if p.returncode == 0 else None)


def source(i: int) -> str:
    return f"127.{1 + i // 62500}.{(i // 250) % 250 + 1}.{i % 250 + 1}"


def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    work = Path(tempfile.mkdtemp(prefix="lfconn", dir="/tmp"))
    home = work / "home"
    passfile = work / "pass"
    passfile.write_text("bench-connections passphrase\n")
    os.chmod(passfile, 0o600)
    subprocess.run([BIN, "vault", "init", "--home", str(home), "--passphrase-file", str(passfile), "--kdf", "interactive"],
                   check=True, capture_output=True, env=env())
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    agent = subprocess.Popen([BIN, "agent", "--home", str(home), "--passphrase-file", str(passfile), "--no-discovery",
                              "--listen", "127.0.0.1", "--port", "0", "--max-connections-per-address", "100000"],
                             stdout=subprocess.DEVNULL, stderr=open(work / "agent.log", "w"), env=env())
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        deadline = time.monotonic() + 120
        while (st := status(home)[1]) is None:
            if time.monotonic() > deadline or agent.poll() is not None:
                sys.exit("bench-connections: the agent did not start")
            time.sleep(0.2)
        port = st["port"]
        print(f"agent soft open-files limit at start 1024, now: "
              + next(l for l in open(f"/proc/{agent.pid}/limits") if l.startswith("Max open files")).split()[3])
        idle_rss = rss_mib(agent.pid)

        socks = []
        for i in range(N):
            s = socket.socket()
            s.bind((source(i), 0))
            s.connect(("127.0.0.1", port))
            socks.append(s)
        time.sleep(1)  # let refusals land; a figure, not an assertion
        dt, st = status(home)
        refused = 0
        for s in socks:
            s.setblocking(False)
            try:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    refused += 1
            except BlockingIOError:
                pass
            except OSError:
                refused += 1
        print(f"{N} idle connections: {N - refused} kept, {refused} refused; status answered: {st is not None} in {dt:.2f} s; "
              f"agent RSS {rss_mib(agent.pid):.0f} MiB")
        for s in socks:
            s.close()
        socks.clear()
        time.sleep(1)

        base = rss_mib(agent.pid)
        for round in range(1, ROUNDS + 1):
            peers = []
            for i in range(N):
                try:
                    r = rogue.Rogue(f"m{i}").connect(port, host="127.0.0.1")
                    r.session.sock.sendall(struct.pack(">H", 65000) + os.urandom(64000))
                    peers.append(r)
                except Exception:  # noqa: BLE001 - refused at the cap: counted below
                    pass
            time.sleep(2)
            held = rss_mib(agent.pid)
            dt, st = status(home)
            print(f"round {round}: {N} peers after handshake, each with a 65,000-byte frame half sent: {len(peers)} "
                  f"connected (the cap admits 256 at once); RSS {base:.0f} -> {held:.0f} MiB; status answered: "
                  f"{st is not None} in {dt:.2f} s")
            for r in peers:
                r.close()
            time.sleep(3)
            print(f"round {round}: after they closed: RSS {rss_mib(agent.pid):.0f} MiB (idle after unlock: {idle_rss:.0f} MiB)")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        agent.terminate()
        agent.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
