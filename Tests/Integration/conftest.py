"""pytest wiring for the Locafoto end-to-end suite.

Run from the repository root, after `swift build` and `bash scripts/avahi-lo.sh start`:

    python3 -m pytest -q Tests/Integration

LOCAFOTO_BIN overrides the binary (default .build/debug/locafoto). LOCAFOTO_KEEP_TMP=1 keeps
the node directories under /tmp for inspection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfharness as h  # noqa: E402


_bin_copy: str | None = None


def pytest_sessionstart(session):
    """Runs a private copy of the binary, so that a `swift build` running meanwhile (which
    replaces .build/debug/locafoto) cannot pull it from under the suite."""
    global _bin_copy
    if not os.access(h.BIN, os.X_OK):
        pytest.exit(f"locafoto binary not found at {h.BIN}: run `swift build` (or set LOCAFOTO_BIN)", returncode=2)
    _bin_copy = tempfile.mkdtemp(prefix="lfbin", dir="/tmp")
    dest = os.path.join(_bin_copy, "locafoto")
    shutil.copy2(h.BIN, dest)
    h.BIN = dest


def pytest_sessionfinish(session, exitstatus):
    if _bin_copy:
        shutil.rmtree(_bin_copy, ignore_errors=True)


def pytest_report_header(config):
    return f"locafoto binary: {h.BIN}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for node in getattr(item, "_locafoto_nodes", []):
            rep.sections.append((f"agent log {node.key} ({node.name}, {node.fingerprint})", node.log_text()))


@pytest.fixture
def workdir():
    """A short private directory under /tmp (Unix socket paths must stay short)."""
    d = Path(tempfile.mkdtemp(prefix="lf", dir="/tmp"))
    yield d
    if not os.environ.get("LOCAFOTO_KEEP_TMP"):
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make_node(request, workdir):
    """make_node("b", name=None, start=True, locked=False) -> a Node with a vault and (unless
    start=False) a running agent. Every agent is stopped at teardown and must exit 0 within
    10 s of SIGTERM."""
    (workdir / "pass").write_text(h.PASSPHRASE + "\n")
    os.chmod(workdir / "pass", 0o600)
    nodes: list[h.Node] = []
    request.node._locafoto_nodes = nodes

    def make(key: str, name: str | None = None, start: bool = True, locked: bool = False, vault: bool = True) -> h.Node:
        node = h.Node(workdir, key, name or h.unique(f"it{key}"))
        nodes.append(node)
        if vault:
            node.init_vault()
        if start:
            node.start(locked=locked)
        return node

    yield make

    problems = []
    for node in nodes:
        if node.running:
            try:
                node.stop()
            except AssertionError as e:
                problems.append(str(e))
        else:
            node.kill()
    if problems:
        pytest.fail("unclean agent shutdown:\n" + "\n\n".join(problems), pytrace=False)


@pytest.fixture
def background():
    """Registers helper processes (e.g. avahi-publish) started by a test; each is ended by its
    own pid at teardown."""
    procs: list[subprocess.Popen] = []

    def start(args: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(p)
        return p

    yield start
    for p in procs:
        h.terminate(p, timeout=5)
