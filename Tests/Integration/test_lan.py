"""Several machines on one LAN: real agents in network namespaces (scripts/lan.sh), each host
with its own D-Bus + avahi-daemon, wired through one bridge (10.77.0.0/24 + IPv6 link-local).

    swift build && python3 -m pytest -q Tests/Integration/test_lan.py

Needs root, iproute2, util-linux, dbus, avahi-daemon and nftables (scripts/setup.sh). Does not
use or touch the root namespace's avahi-daemon (scripts/avahi-lo.sh). The LAN is brought up
once for the module (hosts a=10.77.0.1, b=.2, c=.3, m=.4: the impostor, later a relay) and
always torn down by a finalizer; a LAN left by a killed run is removed by `lan.sh gc` at the
next start. LOCAFOTO_KEEP_TMP=1 keeps the node homes; LOCAFOTO_LAN_KEEP=1 leaves the LAN up at
the end (then run `LAN_NAME=<name> scripts/lan.sh down` yourself).

The tests run in file order and share the hosts; each one (re)starts the agents it needs.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
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

    def relay(self, host: str) -> lh.RelayLanNode:
        """The relay of `host` (its own home `<host>relay`, no vault; created on first use, not started)."""
        key = f"{host}relay"
        if key not in self.nodes:
            n = lh.RelayLanNode(self.lan, host, self.root, h.unique(f"relay{host}"), key=key)
            self.nodes[key] = n
            self.node_list.append(n)
        return self.nodes[key]

    def running_relay(self, host: str, extra: tuple[str, ...]) -> lh.RelayLanNode:
        """The relay of `host`, running with exactly `extra`; the host's agent (if one runs
        there, e.g. the impostor on m) is stopped first: both would want port 47820."""
        agent = self.nodes.get(host)
        if agent is not None and agent.running:
            agent.stop()
        r = self.relay(host)
        if r.running and r.extra != extra:
            r.stop()
        if not r.running:
            r.start(*extra)
        return r

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
    """`send target photo` on the sender, accept on the receiver, check the bytes arrived. The
    photo is made distinct first (bytes after its end): nodes live across these scenarios, and
    a vault does not store again a photo it holds."""
    distinct = workdir / f"{secrets.token_hex(4)}" / photo.name
    distinct.parent.mkdir()
    distinct.write_bytes(photo.read_bytes() + secrets.token_bytes(16))
    photo = distinct
    before = {p["id"] for p in receiver.photos()}
    proc = sender.popen("send", target, str(photo), json=True)
    offer = receiver.wait_offer()
    assert offer["sender"]["fingerprint"] == sender.fingerprint, offer
    receiver.run("accept", offer["id"][:8])
    rc, out, err = finish(proc)
    assert rc == 0, f"send {target} failed:\n{out}\n{err}"
    t = json.loads(out)
    assert t["state"] == "done" and t["peer"]["fingerprint"] == receiver.fingerprint, t
    new = [p for p in receiver.photos() if p["id"] not in before]
    assert len(new) == 1 and new[0]["name"] == photo.name, new
    assert new[0]["sender"]["fingerprint"] == sender.fingerprint, new[0]
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
    assert t["sentBytes"] == t["totalBytes"] == JPG.stat().st_size + 16, t  # the photo made distinct: 16 bytes more
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

        # Sending to B's address works without mDNS: the handshake of the one session, which
        # carries the offer, says who answers there; A then lists B online at that address.
        send_and_accept(a, b, b.endpoint(), JPG, net.root)
        seen = a.sees_online(b)
        assert seen and b.endpoint() in seen["addresses"], f"after a send to {b.endpoint()}, A does not list B there: {seen}"

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
    c.run("accept", offer["id"][:8], "--no-wait")  # the link is cut while it arrives

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
    assert t["items"][0].get("resumedBytes", 0) > (1 << 20), f"not resumed from C's offset: {t['items'][0]}"
    got = [p for p in c.photos() if p["name"] == photo.name]
    assert len(got) == 1, c.photos()
    assert h.export_bytes(c, got[0]["id"], net.root / "out-cut") == photo.read_bytes()
    assert c.ended_offer(offer["id"])["state"] == "completed"
    assert h.files_in(c.spool) == []


# ------------------------------------------------------------------------------------ relay

RELAY_HOST = "m"
COLLECT_EVERY = "2"   # seconds between a node's visits to its relays (agent --collect-interval)
RELAY_WAIT = 90.0     # hang guard for anything that waits on collection rounds and receipts


def relay_endpoint(net) -> str:
    return f"{net.lan.addr(RELAY_HOST)}:{lh.AGENT_PORT}"


def relay_client(net) -> tuple[str, ...]:
    """Agent options of a node that uses R: collect from it (and poll receipts) every 2 s."""
    return ("--relay", relay_endpoint(net), "--collect-interval", COLLECT_EVERY)


def relay_setup(net) -> tuple[lh.LanNode, lh.LanNode, lh.RelayLanNode]:
    """A (host a) and the relay R (host m, which only A may deposit at) run; A collects from R
    every 2 s (offers, and the receipts of its deposits). C (host c) is known to A (seen over
    mDNS, and a handshake by `pair`, so A has its keys) and is offline. C is not trusted: A's
    agent deposits nothing on its own, only `send --via` does."""
    a, = net.running("a", extra=relay_client(net))
    r = net.running_relay(RELAY_HOST, extra=("--allow", a.fingerprint))
    assert r.endpoint() == relay_endpoint(net)
    c, = net.running("c")
    a.wait_sees(c)
    assert a.run("pair", c.fp_prefix)["fingerprint"] == c.fingerprint   # a handshake: A has C's keys
    c.stop()
    wait_for(lambda: a.sees_online(c) is None, h.WAIT, f"{a.key} to see {c.key} go offline")
    assert a.peer(c.fingerprint)["trust"] == "known", a.peer(c.fingerprint)
    return a, c, r


def unique_photo(net, name: str) -> Path:
    """A JPEG no vault holds yet (the sample with random bytes after its end)."""
    path = net.root / name
    path.write_bytes(JPG.read_bytes() + os.urandom(64 << 10))
    return path


def deposit(a: lh.LanNode, c: lh.LanNode, r: lh.RelayLanNode, photos: list[Path]) -> dict:
    """`send C PHOTOS --via R` on A: returns once R holds them (exit 0, state held)."""
    p = a.run("send", c.fp_prefix, *map(str, photos), "--via", r.endpoint(), check=False, timeout=120)
    assert p.returncode == 0, f"send --via the relay failed (exit status {p.returncode}):\n{p.output}"
    t = p.data
    assert isinstance(t, dict) and t.get("state") == "held", f"send --via: the photos are not held by the relay:\n{p.output}"
    assert t["peer"]["fingerprint"] == c.fingerprint, t
    assert len(t["items"]) == len(photos), t
    return t


def transfer_on(a: lh.LanNode, sent: dict) -> dict | None:
    """The sender's `transfers` entry of a transfer (by its id)."""
    ts = [t for t in a.run("transfers") if t["id"] == sent["id"]]
    return ts[0] if ts else None


def wait_receipt(a: lh.LanNode, sent: dict) -> dict:
    """A's transfer once R's receipt for it came back (no longer `held`)."""
    return wait_for(lambda: (lambda t: t if t and t["state"] != "held" else None)(transfer_on(a, sent)),
                    RELAY_WAIT, f"{a.key} to collect R's receipt for transfer {sent['id'][:8]}")


def collect_and_accept(c: lh.LanNode, a: lh.LanNode, r: lh.RelayLanNode, photos: list[Path], workdir: Path) -> None:
    """C (already running with --relay R) finds A's deposit in its inbox: from A, via R, each
    photo with its preview (which R held sealed to C: not in clear anywhere in R's home). Accept
    it; every photo is imported as A's, byte for byte."""
    before = {p["id"] for p in c.photos()}
    offer = c.wait_offer(timeout=RELAY_WAIT)
    assert offer.get("previewCount") == len(photos), f"the previews did not come through the relay: {offer}"
    status, headers, jpeg = h.http_unix(c.socket, "GET", f"/v1/inbox/{offer['id'][:8]}/items/0/preview")
    assert status == 200 and headers["content-type"] == "image/jpeg" and jpeg[:2] == b"\xff\xd8", (status, jpeg[:100])
    relay_files = b"".join(p.read_bytes() for p in sorted(Path(r.home).rglob("*")) if p.is_file() and not p.is_socket())
    assert jpeg[100:164] not in relay_files, "the relay holds a preview in clear"
    assert offer["sender"]["fingerprint"] == a.fingerprint and offer["sender"]["name"] == a.name, \
        f"a relayed offer must name the original sender ({a.name}, {a.fingerprint}): {offer}"
    via = offer.get("via") or {}
    assert via.get("fingerprint") == r.fingerprint and via.get("name") == r.name, \
        f"a relayed offer must name the relay ({r.name}, {r.fingerprint}) in `via`: {offer}"
    c.run("accept", offer["id"][:8])

    def arrived():
        new = [p for p in c.photos() if p["id"] not in before]
        return new if len(new) >= len(photos) else None
    new = wait_for(arrived, RELAY_WAIT, f"{len(photos)} relayed photo(s) to be imported on {c.key}")
    assert sorted(p["name"] for p in new) == sorted(x.name for x in photos), new
    for got in new:
        assert got["sender"]["fingerprint"] == a.fingerprint, f"imported as another sender's photo: {got}"
        original = next(x for x in photos if x.name == got["name"])
        data = h.export_bytes(c, got["id"], workdir / f"out-relay-{got['id'][:8]}")
        assert data == original.read_bytes(), f"{original.name} exported on {c.key} differs from the original"


def test_send_to_offline_peer_via_relay(net):
    """A sends to C while C is offline: the relay R on host m holds the photos (sealed to C),
    C collects them when it comes up, and A learns from R's receipt that C imported them."""
    a, c, r = relay_setup(net)
    ad = r.wait_advertised("a")
    assert ad["txt"].get("role") == "relay" and ad["txt"].get("name") == r.name, f"relay advertisement: {ad}"
    assert ad["port"] == lh.AGENT_PORT, ad
    before = r.status()
    assert before["admission"] == "allow-list" and before["allowed"] == 1, before
    assert r.queue_for(c.fingerprint) is None, before

    photo = unique_photo(net, "via-relay.jpg")
    sent = deposit(a, c, r, [photo])
    q = r.queue_for(c.fingerprint)
    assert q is not None and q["offers"] == 1 and q["items"] == 1, f"relay queue for {c.key}: {r.status()}"
    assert q["bytes"] >= photo.stat().st_size, q
    assert [x["recipient"]["fingerprint"] for x in r.status()["queues"]] == [c.fingerprint], r.status()
    held = transfer_on(a, sent)
    assert held is not None and held["state"] == "held", f"A's transfer while C is away: {held}"

    c, = net.running("c", extra=relay_client(net))     # C comes up and collects from R
    collect_and_accept(c, a, r, [photo], net.root)

    done = wait_receipt(a, sent)
    assert done["state"] == "done", f"A's transfer after C imported the photo: {done}"

    def delivered():
        s = r.status()
        return s if s["deliveries"] == before["deliveries"] + 1 and s["queues"] == [] else None
    after = wait_for(delivered, RELAY_WAIT, "the relay to count the delivery and empty its queue")
    assert after["totals"]["offers"] == after["totals"]["items"] == 0, after
    assert after["rejected"] == before["rejected"] and after["expired"] == before["expired"], after


def test_relay_restart_loses_nothing(net):
    """What a relay holds survives its restart (SIGTERM, then the same home): C collects both
    photos afterwards."""
    a, c, r = relay_setup(net)
    photos = [unique_photo(net, "restart-1.jpg"), unique_photo(net, "restart-2.jpg")]
    sent = deposit(a, c, r, photos)
    held = r.queue_for(c.fingerprint)
    assert held is not None and held["offers"] == 1 and held["items"] == 2, f"relay queue for {c.key}: {r.status()}"
    before = r.status()

    fingerprint = r.fingerprint
    r.stop()                      # SIGTERM; must exit 0 within 10 s
    r.start(*r.extra)
    assert r.fingerprint == fingerprint, "the relay's identity changed across its restart"
    after = r.status()
    assert r.queue_for(c.fingerprint) == held, f"the queue changed across the restart: {held} -> {after}"
    assert after["totals"] == before["totals"], (before, after)
    assert after["lost"] == before["lost"] and after["damaged"] == [], after

    c, = net.running("c", extra=relay_client(net))     # C comes up and collects from R
    collect_and_accept(c, a, r, photos, net.root)
    done = wait_receipt(a, sent)
    assert done["state"] == "done", done
    wait_for(lambda: r.queue_for(c.fingerprint) is None, RELAY_WAIT, "the relay to drop the delivered deposit")


def test_localsend_device_sees_the_node_over_multicast_and_sends_to_it(net):
    """LocalSend (issue 27) across the bridge: localsendd 0.1.1 on host b learns the node on host
    a from LocalSend's multicast group alone (a's announcement, or a's answer to localsendd's),
    pins the certificate fingerprint it learnt there, and sends a photo to it by name."""
    from localsendd.client import Client

    (a,) = net.running("a")
    on = a.run("localsend", "on")
    assert on["port"] == 53317, on
    root = net.root / "lsd-b"
    root.mkdir(exist_ok=True)
    sock = root / "lsd.sock"
    env = {k: v for k, v in h.clean_env().items() if not k.startswith(("XDG_", "LOCALSEND"))}
    env.update(XDG_STATE_HOME=str(root / "state"), XDG_CONFIG_HOME=str(root / "config"))
    log = open(root / "localsendd.log", "ab")
    d = subprocess.Popen(net.lan.exec_prefix("b") + [
        shutil.which("localsendd") or "localsendd", "--port", "53317", "--socket", str(sock), "--alias", "lan-phone",
        "--encryption", "--log-level", "info", "--download-dir", str(root / "downloads")],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        h.localsendd_state(sock, d, root / "localsendd.log")
        with Client(str(sock), timeout=60) as c:
            seen = wait_for(lambda: next((x for x in c.call("list_devices")["devices"] if x["alias"] == a.name), None),
                            what=f"localsendd on b to see {a.name} on LocalSend's multicast group")
            assert seen["fingerprint"] == on["fingerprint"] and seen["ip"] == net.lan.addr("a"), seen
            # And the node heard localsendd there (its announcements), as it describes itself.
            near = wait_for(lambda: next((n for n in a.run("localsend")["nearby"] if n["alias"] == "lan-phone"), None),
                            what="a to hear localsendd on LocalSend's multicast group")
            assert near["address"] == net.lan.addr("b") and near["port"] == 53317, near
            assert near["fingerprint"] == c.state()["self"]["fingerprint"], near
            started = time.time()
            c.call("send", to=a.name, files=[str(JPG)], pin="")
            offer = a.wait_offer(previews=False)
            assert offer["sender"]["name"] == "lan-phone"
            a.run("accept", "--no-wait", offer["id"][:8])
            result = next(f["data"]["result"] for f in c.events() if f.get("type") == "state"
                          and ((f.get("data") or {}).get("result") or {}).get("at", 0) >= started)
            assert result["kind"] == "sent", result
            assert [p["name"] for p in a.photos()] == [JPG.name]
            # And back: the node sends to the device by the name it heard, pinned to the
            # fingerprint heard with it; localsendd's user accepts.
            p = a.popen("send", "lan-phone", str(JPG), json=True)
            sid = wait_for(lambda: (c.state().get("incoming") or {}).get("sessionId"), what="localsendd's prompt")
            c.call("confirm_receive", sessionId=sid, confirmed=True)
            status, out, err = h.finish(p)
        assert status == 0, (out, err)
        sent = json.loads(out)
        assert sent["peer"] == {"name": "lan-phone", "fingerprint": "localsend:" + near["fingerprint"]}, sent
        assert (root / "downloads" / JPG.name).read_bytes() == JPG.read_bytes()
    finally:
        h.terminate(d, timeout=10)
        log.close()
        a.run("localsend", "off")


def test_root_namespace_untouched(net):
    assert lh.root_namespace_snapshot() == net.root_before, "the root namespace's interfaces/addresses/routes changed"


def _probe(net, host: str, *args: str) -> subprocess.Popen:
    """multicast_probe.py in `host`, started; its first line ("ready") read, so it has joined."""
    p = subprocess.Popen(net.lan.exec_prefix(host) + ["python3", str(h.REPO / "Tests" / "Integration" / "multicast_probe.py"),
                                                      *args], stdout=subprocess.PIPE, text=True, env=h.clean_env())
    assert p.stdout.readline().strip() == "ready"
    return p


def _heard(p: subprocess.Popen) -> dict:
    out, _ = p.communicate(timeout=90)
    assert p.returncode == 0, "no datagram came within the probe's 60 s"
    return json.loads(out)


def _eth0_datagrams(net, host: str) -> int:
    """LocalSend datagrams `host` sent out of its LAN interface, counted by nftables."""
    out = net.lan.run_in(host, "nft", "-j", "list", "table", "inet", "lsguard").stdout
    rules = [i["rule"] for i in json.loads(out)["nftables"] if "rule" in i]
    return sum(e["counter"]["packets"] for r in rules for e in r["expr"] if "counter" in e)


def test_localsend_presence_follows_listen(net):
    """Issue 42: LocalSend's multicast speaks only where `--listen` says. On 127.0.0.1 the node
    announces on lo (where a listener of its own host hears it) and nothing leaves its LAN
    interface, nor does it answer what it hears there; on its LAN address it announces there, on
    224.0.0.167 and on IPv6's ff12::fd3a:e420."""
    a = net.node("a")
    lan = net.lan
    lan.run_in("a", "ip", "link", "set", "lo", "multicast", "on")
    lan.run_in("a", "nft", "add table inet lsguard; add chain inet lsguard out { type filter hook output priority 0; }; "
                       "add rule inet lsguard out oifname \"eth0\" udp dport 53317 counter")
    try:
        on_lo = _probe(net, "a", "listen", "4", "127.0.0.1")
        a.restart("--listen", "127.0.0.1")
        on = a.run("localsend", "on")
        heard = _heard(on_lo)
        assert heard["device"]["fingerprint"] == on["fingerprint"] and heard["device"]["announce"] is True, heard
        # Announced only once its HTTPS port accepts: the apps' /register right after it works.
        body = json.dumps({"alias": "quick", "version": "2.1", "fingerprint": "D" * 64, "port": 53317,
                           "protocol": "https"})
        r = lan.run_in("a", "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data", body,
                       "https://127.0.0.1:53317/api/localsend/v2/register")
        assert r.stdout == "200", r
        assert _eth0_datagrams(net, "a") == 0
        # b announces on the LAN; then a device on a's own lo does. a hears the second only.
        lan.run_in("b", "python3", str(h.REPO / "Tests" / "Integration" / "multicast_probe.py"), "send", "4",
                   lan.addr("b"), json.dumps({"alias": "lan-b", "version": "2.1", "fingerprint": "B" * 64,
                                              "port": 53317, "protocol": "https", "announce": True}))
        lan.run_in("a", "python3", str(h.REPO / "Tests" / "Integration" / "multicast_probe.py"), "send", "4",
                   "127.0.0.1", json.dumps({"alias": "lo-phone", "version": "2.1", "fingerprint": "C" * 64,
                                            "port": 53317, "protocol": "https", "announce": True}))
        nearby = wait_for(lambda: (lambda n: n if "lo-phone" in n else None)(
            [d["alias"] for d in a.run("localsend")["nearby"]]), what="a to hear the device on its lo")
        assert sorted(nearby) == ["lo-phone", "quick"], nearby  # "quick" registered; b's never arrived
        assert _eth0_datagrams(net, "a") == 0
        a.run("localsend", "off")
        # On its LAN address: both groups on eth0, where b hears them.
        v4 = _probe(net, "b", "listen", "4", lan.addr("b"))
        v6 = _probe(net, "b", "listen", "6", "eth0")
        a.restart("--listen", lan.addr("a"))
        on = a.run("localsend", "on")
        got4, got6 = _heard(v4), _heard(v6)
        assert got4["device"]["fingerprint"] == on["fingerprint"] and got4["from"] == lan.addr("a"), got4
        assert got6["device"]["fingerprint"] == on["fingerprint"] and got6["from"].startswith("fe80:"), got6
        a.run("localsend", "off")
    finally:
        lan.run_in("a", "nft", "delete table inet lsguard", check=False)
        lan.run_in("a", "ip", "link", "set", "lo", "multicast", "off", check=False)
        a.restart()
