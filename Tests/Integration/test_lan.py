"""Several machines on one LAN: real agents in network namespaces (scripts/lan.sh), each host
with its own D-Bus + avahi-daemon, wired through one bridge (10.77.0.0/24 + IPv6 link-local).

    swift build && python3 -m pytest -q Tests/Integration/test_lan.py

Needs root, iproute2, util-linux, dbus, avahi-daemon and nftables (scripts/setup.sh). Does not
use or touch the root namespace's avahi-daemon (scripts/avahi-lo.sh). The LAN is brought up
once for the module (hosts a=10.77.0.1, b=.2, c=.3, m=.4) and always torn down by a finalizer;
a LAN left by a killed run is removed by `lan.sh gc` at the next start. LOCAFOTO_KEEP_TMP=1
keeps the node homes; LOCAFOTO_LAN_KEEP=1 leaves the LAN up at the end (then run
`LAN_NAME=<name> scripts/lan.sh down` yourself).

The tests run in file order and share the hosts; each one (re)starts the agents it needs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import lfharness as h
import lanharness as lh
from lfharness import fixture, finish, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")
HOSTS = ["a", "b", "c", "m"]
QUIET = 2.5  # seconds without an advertisement reaching A before "A does not see B" counts


class Net:
    def __init__(self, lan: lh.Lan, root: Path):
        self.lan = lan
        self.root = root
        self.nodes: dict[str, lh.LanNode] = {}
        self.node_list: list[lh.LanNode] = []  # the same nodes, as a live list for conftest's report hook
        self.root_before = ""

    def node(self, host: str, name: str | None = None) -> lh.LanNode:
        """The node of `host` (created with a vault on first use, not started)."""
        if host not in self.nodes:
            n = lh.LanNode(self.lan, host, self.root, name or h.unique(f"lan{host}"))
            n.init_vault()
            self.nodes[host] = n
            self.node_list.append(n)
        return self.nodes[host]

    def running(self, *hosts: str, extra: tuple[str, ...] = ()) -> list[lh.LanNode]:
        """Agents of `hosts`, started (or restarted) so that each runs with exactly `extra`."""
        out = []
        for host in hosts:
            n = self.node(host)
            if n.running and n.extra != extra:
                n.stop()
            if not n.running:
                n.start(*extra)
            out.append(n)
        return out

    def stop_all(self) -> list[str]:
        problems = []
        for n in self.nodes.values():
            if n.running:
                p = n.stop(strict=False)
                if p:
                    problems.append(f"{p}\n--- agent log ---\n{n.log_text()}")
            else:
                n.kill()
        return problems


@pytest.fixture(scope="module")
def net(request):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    for tool in ("ip", "nsenter", "unshare", "dbus-daemon", "avahi-daemon", "nft"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} not found: run scripts/setup.sh", pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="lan", dir="/tmp"))
    (root / "pass").write_text(h.PASSPHRASE + "\n")
    os.chmod(root / "pass", 0o600)
    lan = lh.Lan(f"lt{os.getpid()}", HOSTS)
    lan.gc()
    n = Net(lan, root)
    n.root_before = lh.root_namespace_snapshot()

    def teardown():
        problems = n.stop_all()
        if os.environ.get("LOCAFOTO_LAN_KEEP"):
            print(f"\nLAN kept up: LAN_NAME={lan.name} scripts/lan.sh down  (homes in {root})")
            return
        d = lan.down()
        left = lan.namespaces()
        if not os.environ.get("LOCAFOTO_KEEP_TMP"):
            shutil.rmtree(root, ignore_errors=True)
        if d.returncode != 0 or left:
            problems.append(f"lan.sh down failed (status {d.returncode}), namespaces left: {left}\n{d.stdout}{d.stderr}")
        if problems:
            pytest.fail("LAN teardown:\n" + "\n\n".join(problems), pytrace=False)

    request.addfinalizer(teardown)  # registered before `up`: a half-built LAN is removed too
    lan.up()
    yield n


@pytest.fixture(autouse=True)
def _agent_logs(request, net):
    """conftest.py attaches the agent logs of these nodes to a failing test's report."""
    request.node._locafoto_nodes = net.node_list


def send_and_accept(sender: lh.LanNode, receiver: lh.LanNode, target: str, photo: Path, workdir: Path) -> dict:
    """`send target photo` on the sender, accept on the receiver, check the bytes arrived."""
    before = {p["id"] for p in receiver.photos()}
    proc = sender.popen("send", target, str(photo), json=True)
    offer = receiver.wait_offer()
    assert offer["sender"]["fingerprint"] == sender.fingerprint, offer
    receiver.run("accept", offer["id"][:8])
    rc, out, err = finish(proc)
    assert rc == 0, f"send {target} failed:\n{out}\n{err}"
    t = json.loads(out)
    assert t["state"] == "done" and t["peerFingerprint"] == receiver.fingerprint, t
    new = [p for p in receiver.photos() if p["id"] not in before]
    assert len(new) == 1 and new[0]["name"] == photo.name, new
    assert new[0]["senderFingerprint"] == sender.fingerprint, new[0]
    data = h.export_bytes(receiver, new[0]["id"], workdir / f"out-{receiver.key}-{new[0]['id'][:8]}")
    assert data == photo.read_bytes(), f"{photo.name} exported on {receiver.key} differs from the original"
    return t


# --------------------------------------------------------------------------------- scenarios

def test_discovery_across_the_bridge(net):
    a, b, c = net.running("a", "b", "c")
    seen_b = a.wait_sees(b)
    seen_c = a.wait_sees(c)
    for seen, other in ((seen_b, b), (seen_c, c)):
        assert seen["name"] == other.name, seen
        assert f"{net.lan.addr(other.host)}:{lh.AGENT_PORT}" in seen["addresses"], seen
        assert all(x.startswith("10.77.0.") or x.startswith("[fe80:") for x in seen["addresses"]), seen
    assert f"10.77.0.2:{lh.AGENT_PORT}" in seen_b["addresses"] and f"10.77.0.3:{lh.AGENT_PORT}" in seen_c["addresses"]
    seen_a = b.wait_sees(a)
    assert seen_a["name"] == a.name and f"10.77.0.1:{lh.AGENT_PORT}" in seen_a["addresses"], seen_a
    assert a.peer(a.fingerprint) is None, "an agent lists itself"


def test_send_photo_across_the_bridge(net):
    a, c = net.running("a", "c")
    a.wait_sees(c)
    t = send_and_accept(a, c, c.fp_prefix, JPG, net.root)
    assert t["bytesSent"] == t["totalBytes"] == JPG.stat().st_size, t
    assert a.peer(c.fingerprint)["trust"] == "known"


def test_blocked_multicast_then_static_peer(net):
    a, b, c = net.running("a", "b", "c")
    a.wait_sees(b)
    # A's avahi-daemon would keep B's records cached: stop B first (its goodbye reaches A),
    # then cut mDNS between A and B (rules in both namespaces), then bring B back.
    b.stop()
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.key} to see {b.key} go offline")
    net.lan.block_mdns("a", "b")
    net.lan.block_mdns("b", "a")
    try:
        b.start()
        c.wait_sees(b)          # B advertises, and the LAN carries it (C hears it) ...
        time.sleep(QUIET)       # ... but nothing of it reaches A
        assert a.sees_online(b) is None, f"A sees B although mDNS between them is blocked: {a.peer(b.fingerprint)}\n{net.lan.status()}"
        assert net.lan.mdns_drops("a") > 0, f"no mDNS packet from B was dropped on A?\n{net.lan.status()}"

        # Sending to B's address works without mDNS (the agent probes it: handshake first).
        send_and_accept(a, b, b.endpoint(), JPG, net.root)

        # A static peer makes B reachable without mDNS (a fresh agent: nothing cached).
        a.stop()
        a.start("--peer", b.endpoint())
        seen = wait_for(lambda: a.sees_online(b), h.WAIT, f"{a.key} (--peer {b.endpoint()}) to list {b.key} online")
        assert seen["name"] == b.name and seen["fingerprint"] == b.fingerprint, seen
        assert b.endpoint() in seen["addresses"], seen
        send_and_accept(a, b, b.name, PNG, net.root)
        assert a.peer(b.fingerprint)["trust"] == "known"
    finally:
        net.lan.unblock_mdns("a")
        net.lan.unblock_mdns("b")


def test_impostor_with_a_known_name_is_refused(net):
    a, b = net.running("a", "b")  # A without --peer again: mDNS only
    a.wait_sees(b)
    send_and_accept(a, b, b.fp_prefix, JPG, net.root)   # one real exchange: A knows B's key
    assert a.peer(b.fingerprint)["trust"] == "known"

    b.stop()
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.key} to see {b.key} go offline")
    m = net.node("m", name=b.name)        # same display name, its own key
    m.start()
    assert m.fingerprint != b.fingerprint
    wait_for(lambda: a.sees_online(m), h.WAIT, f"{a.key} to see the impostor on host m (named {b.name})")

    rc, out, err = finish(a.popen("send", b.name, str(JPG)))
    assert rc != 0, f"send to an impostor named {b.name} succeeded:\n{out}\n{err}"
    assert "REFUSED" in out + err, f"no loud refusal:\n{out}\n{err}"
    assert m.inbox(all=True) == [], "the impostor received an offer"
    assert m.photos() == []
    m.stop()


def test_link_cut_mid_transfer_resumes(net):
    """C's link goes down in the middle of a photo (`ip link set eth0 down` in C's namespace):
    both sides notice (idle timeout), the transfer is interrupted, and when the link comes back
    A offers it again and C continues from what it holds: not asked twice, not restarted."""
    extra = ("--limit-rate", "1M", "--idle-timeout", "6")
    a, c = net.running("a", "c", extra=extra)
    a.wait_sees(c)
    photo = net.root / "big-cut.jpg"
    photo.write_bytes(JPG.read_bytes() + os.urandom(6 << 20))
    proc = a.popen("send", c.fp_prefix, str(photo), json=True)
    offer = c.wait_offer()
    c.run("accept", offer["id"][:8])

    def spooled():
        parts = [p for p in Path(c.spool).glob("*.part")]
        return bool(parts) and parts[0].stat().st_size > (1 << 20)
    wait_for(spooled, 60, "C to hold more than 1 MiB of the photo")
    net.lan.run_in("c", "ip", "link", "set", "eth0", "down")
    try:
        def state_on_a():
            ts = [t for t in a.run("transfers") if t.get("offer") == offer["id"]]
            return ts[0]["state"] if ts else None
        wait_for(lambda: state_on_a() == "interrupted", 60, "A to see the transfer interrupted")
        wait_for(lambda: [o for o in c.inbox(all=True) if o["id"] == offer["id"]][0]["state"] == "interrupted",
                 60, "C to see the transfer interrupted")
        assert c.photos() == [] or all(p["name"] != photo.name for p in c.photos()), "a partial photo was imported"
    finally:
        net.lan.run_in("c", "ip", "link", "set", "eth0", "up")
    rc, out, err = finish(proc, timeout=180)
    assert rc == 0, f"the interrupted send did not complete after the link came back:\n{out}\n{err}"
    t = json.loads(out)
    assert t["state"] == "done", t
    assert t["items"][0].get("resumedAt", 0) > (1 << 20), f"not resumed from C's offset: {t['items'][0]}"
    got = [p for p in c.photos() if p["name"] == photo.name]
    assert len(got) == 1, c.photos()
    assert h.export_bytes(c, got[0]["id"], net.root / "out-cut") == photo.read_bytes()
    assert [o["state"] for o in c.inbox(all=True) if o["id"] == offer["id"]] == ["completed"]
    assert h.files_in(c.spool) == []


def test_root_namespace_untouched(net):
    assert lh.root_namespace_snapshot() == net.root_before, "the root namespace's interfaces/addresses/routes changed"
