"""Key pinning: an advertisement is only a claim until the handshake proves the key."""

import lfharness as h
from lfharness import fixture, finish, wait_for

JPG = fixture("sample.jpg")


def test_impostor_is_refused(make_node, background):
    a = make_node("a")
    b = make_node("b")
    m = make_node("m")
    a.wait_sees(b)

    # One real exchange so that A knows B's key.
    sender = a.popen("send", b.fp_prefix, str(JPG))
    b.run("accept", b.wait_offer()["id"][:8])
    assert finish(sender)[0] == 0
    assert a.peer(b.fingerprint)["trust"] == "known"

    b.stop()
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.name} to see {b.name} go offline")
    assert a.peer(b.fingerprint)["online"] is False  # still known, offline

    # 1. A fake record claiming B's fingerprint and name, pointing at M's port.
    fake = background(["avahi-publish", "-s", f"{b.name}-x", "_locafoto._tcp", str(m.port),
                       "v=1", f"fp={b.fingerprint}", f"name={b.name}"])
    seen = wait_for(lambda: (lambda p: p if p and p["online"] and f"127.0.0.1:{m.port}" in p["addresses"] else None)(a.peer(b.fingerprint)),
                    h.WAIT, f"{a.name} to see the fake advertisement of {b.name} at M's port {m.port}")
    assert seen["name"] == b.name

    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)))
    assert rc != 0, f"send to an impostor succeeded:\n{out}\n{err}"
    assert "REFUSED" in out + err, f"no loud refusal:\n{out}\n{err}"
    assert m.fingerprint in out + err and b.fingerprint in out + err, f"message lacks the fingerprints:\n{out}\n{err}"
    assert m.inbox(all=True) == [], "the impostor received an offer"
    assert m.photos() == []
    assert "REFUSED" in a.log_text()

    fake.terminate()
    fake.wait(timeout=5)
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.name} to drop the fake advertisement")

    # 2. Another agent advertises B's NAME with its own (real) key while B is offline.
    m2 = make_node("m2", name=b.name)
    wait_for(lambda: a.sees_online(m2), h.WAIT, f"{a.name} to see the second agent named {b.name}")
    warned = a.peer(m2.fingerprint)
    assert warned["name"] == b.name
    assert "another key" in (warned.get("warning") or ""), f"peers does not warn about the reused name: {warned}"

    rc, out, err = finish(a.popen("send", b.name, str(JPG)))
    assert rc != 0, f"send by name to an agent with another key succeeded:\n{out}\n{err}"
    assert "REFUSED" in out + err and "another key" in out + err, f"unclear refusal:\n{out}\n{err}"
    assert b.fingerprint in out + err and m2.fingerprint in out + err, f"{out}\n{err}"
    assert m2.inbox(all=True) == []

    # Sending to M2's own fingerprint is deliberate and allowed to reach its inbox.
    sender = a.popen("send", m2.fp_prefix, str(JPG))
    offer = m2.wait_offer()
    assert offer["sender"]["fingerprint"] == a.fingerprint
    m2.run("reject", offer["id"][:8])
    assert finish(sender)[0] != 0

    # After `forget`, the name is free again: sending by name reaches M2.
    forgotten = a.run("forget", b.fingerprint)
    assert forgotten["fingerprint"] == b.fingerprint
    assert a.peer(b.fingerprint) is None
    sender = a.popen("send", b.name, str(JPG))
    offer = m2.wait_offer()
    m2.run("reject", offer["id"][:8])
    assert finish(sender)[0] != 0
