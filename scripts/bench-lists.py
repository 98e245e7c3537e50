#!/usr/bin/env python3
"""bench-lists.py - `locafoto list` on 100,000 photos and `locafoto inbox` with five 10,000-item
offers, through the real CLI and agent: every answer checked for completeness, and timed.

    python3 scripts/bench-lists.py BIN [PHOTOS] [RUNS]

A vault is made with `locafoto vault init`; its catalog is filled with PHOTOS synthetic rows
straight through SQLite (scripts/bench-catalog.py's fill: no LOCA files, only the catalog is
read by a list). The inbox gets five 10,000-item offers from a hostile Python peer
(Tests/Integration/rogue.py: real Noise sessions). Each command runs RUNS times; medians and the
worst run are printed. Fails if any answer is not complete (a count differs).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "Tests" / "Integration"))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("bench_catalog", REPO / "scripts" / "bench-catalog.py")
bench_catalog = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_catalog)
import rogue  # noqa: E402
from lfharness import clean_env as env  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
PHOTOS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5


def cli(home: Path, *args: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run([BIN, *args, "--home", str(home)], capture_output=True, text=True, env=env(), timeout=600)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench-lists: `locafoto {' '.join(args)}` failed: {p.stderr.strip()}")
    return dt, p.stdout


def timed(label: str, home: Path, args: list[str], check) -> None:
    times = []
    for _ in range(RUNS):
        dt, out = cli(home, *args)
        check(out)
        times.append(dt)
    print(f"{label:<42} median {statistics.median(times):6.2f} s   worst {max(times):6.2f} s   ({RUNS} runs, all complete)")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="lfbench", dir="/tmp"))
    home = work / "home"
    passfile = work / "pass"
    passfile.write_text("bench-lists passphrase\n")
    os.chmod(passfile, 0o600)
    subprocess.run([BIN, "vault", "init", "--home", str(home), "--passphrase-file", str(passfile), "--kdf", "interactive"],
                   check=True, capture_output=True, env=env())
    db = sqlite3.connect(home / "vault" / "catalog.sqlite")
    _, insert_s, _ = bench_catalog.fill(db, PHOTOS, random.Random(8))
    # `list` leaves hidden photos out (about 2 % of the synthetic ones).
    visible = db.execute("SELECT COUNT(*) FROM photo WHERE isHidden = 0 AND privateAlbumId IS NULL").fetchone()[0]
    db.close()
    print(f"catalog: {PHOTOS} photo rows inserted in {insert_s:.1f} s ({visible} not hidden)")
    agent = subprocess.Popen([BIN, "agent", "--home", str(home), "--passphrase-file", str(passfile), "--no-discovery",
                              "--listen", "127.0.0.1", "--port", "0"], stdout=subprocess.DEVNULL, stderr=open(work / "agent.log", "w"),
                             env=env())
    try:
        deadline = time.monotonic() + 120
        while True:
            p = subprocess.run([BIN, "status", "--json", "--home", str(home)], capture_output=True, text=True, env=env())
            if p.returncode == 0:
                port = json.loads(p.stdout)["port"]
                break
            if time.monotonic() > deadline or agent.poll() is not None:
                sys.exit("bench-lists: the agent did not start")
            time.sleep(0.2)

        def all_photos(out: str) -> None:
            n = len(json.loads(out))
            assert n == visible, f"list --json gave {n} of {visible}"

        def all_rows(out: str) -> None:
            n = len(out.splitlines()) - 1
            assert n == visible, f"list gave {n} rows of {visible}"

        timed(f"list --json ({PHOTOS} photos)", home, ["list", "--json"], all_photos)
        timed(f"list ({PHOTOS} photos, table)", home, ["list"], all_rows)
        timed("list --limit 50", home, ["list", "--limit", "50"], lambda out: None)
        timed(f"list --hidden --json ({PHOTOS} photos)", home, ["list", "--hidden", "--json"],
              lambda out: None if len(json.loads(out)) == PHOTOS else sys.exit("list --hidden incomplete"))

        seed = os.urandom(32)
        for k in range(5):
            r = rogue.Rogue("bulk", seed=seed).connect(port)
            r.offer([rogue.fake_item(f"{k}-{i:05d}-IMG.jpg") for i in range(10_000)])
            while len(json.loads(cli(home, "inbox", "--json")[1])) < k + 1:
                time.sleep(0.2)
            r.close()

        def five_offers(out: str) -> None:
            offers = json.loads(out)
            assert len(offers) == 5 and sum(len(o["items"]) for o in offers) == 50_000, "inbox --json incomplete"

        def five_rows(out: str) -> None:
            assert out.count("(10000 items)") == 5, "inbox table incomplete"

        timed("inbox --json (5 offers x 10,000 items)", home, ["inbox", "--json"], five_offers)
        timed("inbox (5 offers x 10,000 items, table)", home, ["inbox"], five_rows)
    finally:
        agent.terminate()
        agent.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
