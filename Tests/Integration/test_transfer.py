"""Sending photos between two live agents: offer, inbox, accept/reject, trust, policy,
locked vault, restart."""

import json
import re
import time

import lfharness as h
from lfharness import fixture, finish, wait_for

JPG, PNG, HEIC = fixture("sample.jpg"), fixture("sample.png"), fixture("sample.heic")


def pair(make_node):
    a = make_node("a")
    b = make_node("b")
    a.wait_sees(b)
    return a, b


def assert_nothing_stored(b):
    assert b.photos() == [], "photos were stored"
    assert h.files_in(b.spool) == [], f"leftover spool files: {h.files_in(b.spool)}"
    assert h.files_in(b.vault_photos) == [], f"files in the vault's photo dir: {h.files_in(b.vault_photos)}"
    assert h.files_in(b.home / "vault" / "tmp") == [], f"files in the vault's tmp dir: {h.files_in(b.home / 'vault' / 'tmp')}"


def test_send_accept_three_photos(make_node, workdir):
    a, b = pair(make_node)
    originals = {p.name: p.read_bytes() for p in (JPG, PNG, HEIC)}
    sender = a.popen("send", b.fp_prefix, str(JPG), str(PNG), str(HEIC), json=True)

    offer = b.wait_offer()
    assert offer["state"] == "pending"
    assert offer["connected"] is True
    assert offer["sender"]["name"] == a.name
    assert offer["sender"]["fingerprint"] == a.fingerprint
    assert offer["sender"]["trusted"] is False
    items = [(i["name"], i["kind"], i["bytes"]) for i in offer["items"]]
    assert items == [("sample.jpg", "jpeg", len(originals["sample.jpg"])),
                     ("sample.png", "png", len(originals["sample.png"])),
                     ("sample.heic", "heic", len(originals["sample.heic"]))], offer["items"]
    assert offer["totalBytes"] == sum(len(v) for v in originals.values())
    assert b.run("status")["pendingOffers"] == 1

    # The sender is still waiting for the decision.
    assert sender.poll() is None, finish(sender)
    r = b.run("accept", offer["id"][:8])
    assert r["state"] == "accepted" and r["offer"] == offer["id"]

    rc, out, err = finish(sender)
    assert rc == 0, f"send failed:\n{out}\n{err}"
    t = json.loads(out)
    assert t["state"] == "done", t
    assert t["id"] == offer["id"], "send and the receiver's inbox show one id for the offer"
    assert t["peer"]["fingerprint"] == b.fingerprint
    assert [i["status"] for i in t["items"]] == ["imported"] * 3, t

    photos = b.photos()
    assert sorted(p["name"] for p in photos) == sorted(originals), photos
    for p in photos:
        assert p["sender"] == {"name": a.name, "fingerprint": a.fingerprint}, p
        assert p["originalBytes"] == len(originals[p["name"]])
        data = h.export_bytes(b, p["id"], workdir / "out" / p["id"][:8])
        assert data == originals[p["name"]], f"exported {p['name']} differs from the original"

    assert b.inbox() == [], "the accepted offer still shows as pending"
    done = b.ended_inbox()
    assert len(done) == 1 and done[0]["state"] == "completed", done
    assert h.files_in(b.spool) == [], f"leftover spool files: {h.files_in(b.spool)}"
    # Both sides now know each other from the handshake.
    assert a.peer(b.fingerprint)["trust"] == "known"
    assert b.peer(a.fingerprint)["trust"] == "known"


def test_send_large_photo_streams_intact(make_node, workdir):
    """A photo of many wire chunks (and not a multiple of the chunk size) arrives intact."""
    a, b = pair(make_node)
    big = workdir / "big.jpg"
    body = JPG.read_bytes()
    big.write_bytes(body + bytes(range(256)) * (12 * 4096) + b"tail")  # ~12 MiB, JPEG by its first bytes
    sender = a.popen("send", b.fp_prefix, str(big), json=True)
    b.run("accept", b.wait_offer()["id"][:8])
    rc, out, err = finish(sender, timeout=120)
    assert rc == 0, f"send failed:\n{out}\n{err}"
    t = json.loads(out)
    assert t["sentBytes"] == t["totalBytes"] == big.stat().st_size, t
    photos = b.photos()
    assert len(photos) == 1 and photos[0]["originalBytes"] == big.stat().st_size, photos
    assert h.export_bytes(b, photos[0]["id"], workdir / "out") == big.read_bytes(), "large photo differs after transfer"
    assert h.files_in(b.spool) == []


def test_send_reject(make_node):
    a, b = pair(make_node)
    sender = a.popen("send", b.name, str(JPG), str(PNG))
    offer = b.wait_offer()
    r = b.run("reject", offer["id"][:6])
    assert r["state"] == "rejected"

    rc, out, err = finish(sender)
    assert rc != 0, f"send succeeded although the offer was rejected:\n{out}\n{err}"
    assert "declined" in (out + err), f"no clear message:\n{out}\n{err}"
    assert b.name in (out + err)
    assert_nothing_stored(b)
    assert b.inbox() == []
    assert [o["state"] for o in b.inbox(all=True)] == ["rejected"]
    # Deciding again is refused clearly.
    again = b.run("accept", offer["id"][:8], check=False)
    assert again.returncode != 0 and "already rejected" in again.output, again.output


def test_trusted_peer_is_accepted_without_asking(make_node):
    a, b = pair(make_node)
    # B has never met A: `trust` meets it first (a handshake pinned to the fingerprint A
    # advertises, so B learns the key that fingerprint names), then trusts it.
    assert b.peer(a.fingerprint)["trust"] == "new"
    t = b.run("trust", a.fp_prefix)
    assert t["fingerprint"] == a.fingerprint and t["trust"] == "trusted", t

    sender = a.popen("send", b.fp_prefix, str(JPG))
    rc, out, err = finish(sender, timeout=30)  # nobody calls accept
    assert rc == 0, f"send to a peer that trusts us failed:\n{out}\n{err}"
    photos = b.photos()
    assert [p["name"] for p in photos] == ["sample.jpg"]
    assert photos[0]["sender"]["fingerprint"] == a.fingerprint
    offers = b.ended_inbox()
    accepted = [o for o in offers if o["state"] == "completed"]
    assert len(accepted) == 1 and accepted[0]["sender"]["trusted"] is True, offers

    # Untrust: offers wait in the inbox again.
    b.run("untrust", a.fp_prefix)
    sender = a.popen("send", b.fp_prefix, str(HEIC))
    offer = b.wait_offer()
    assert offer["sender"]["trusted"] is False
    b.run("reject", offer["id"][:8])
    assert finish(sender)[0] != 0
    assert len(b.photos()) == 1


def test_policy_off_and_trusted_only(make_node):
    a, b = pair(make_node)
    assert b.run("policy") == {"policy": "everyone"}
    assert b.run("policy", "off") == {"policy": "off"}
    assert b.run("status")["policy"] == "off"

    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)))
    assert rc != 0, f"send to a node with policy off succeeded:\n{out}\n{err}"
    assert re.search(r"declin|refus", out + err, re.I) and "not receiving" in (out + err), f"unclear message:\n{out}\n{err}"

    assert b.run("policy", "trusted") == {"policy": "trusted"}
    assert b.peer(a.fingerprint)["trust"] != "trusted"
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)))
    assert rc != 0, f"send from an untrusted peer to a trusted-only node succeeded:\n{out}\n{err}"
    assert re.search(r"declin|refus", out + err, re.I) and "trusted" in (out + err), f"unclear message:\n{out}\n{err}"

    bad = b.run("policy", "sometimes", check=False)
    assert bad.returncode != 0 and "everyone" in bad.output, bad.output

    assert b.inbox(all=True) == [], "a refused offer was stored in the inbox"
    assert_nothing_stored(b)

    # Trusted-only still lets a trusted peer in.
    b.run("trust", a.fp_prefix)
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)), timeout=30)
    assert rc == 0, f"trusted peer refused under policy trusted:\n{out}\n{err}"
    assert [p["name"] for p in b.photos()] == ["sample.jpg"]


def test_locked_vault_queues_until_unlock(make_node, workdir):
    a = make_node("a")
    b = make_node("b", locked=True)
    assert b.run("status")["vault"] == "locked"
    a.wait_sees(b)

    sender = a.popen("send", b.fp_prefix, str(HEIC))
    offer = b.wait_offer()
    b.run("accept", offer["id"][:8])
    rc, out, err = finish(sender)
    assert rc == 0, f"send to a locked vault failed:\n{out}\n{err}"
    assert "unlock" in out + err, f"send does not say the photo waits for unlock:\n{out}\n{err}"
    assert "queued" in out, out

    listed = b.run("list", check=False)
    assert listed.returncode != 0 or listed.data == [], f"list shows photos of a locked vault:\n{listed.output}"
    if listed.returncode != 0:
        assert "locked" in listed.output, listed.output
    assert h.files_in(b.vault_photos) == [], "the locked vault already holds photo files"

    r = b.run("unlock", "--passphrase-file", str(b.passfile))
    assert r["importedQueued"] == 1, r
    assert b.run("status")["vault"] == "unlocked"
    photos = b.photos()
    assert [p["name"] for p in photos] == ["sample.heic"]
    assert photos[0]["sender"]["fingerprint"] == a.fingerprint
    assert h.export_bytes(b, photos[0]["id"], workdir / "out") == HEIC.read_bytes()
    assert h.files_in(b.spool) == [], f"queued item left in the spool after import: {h.files_in(b.spool)}"


def test_wrong_passphrase_unlock(make_node, workdir):
    b = make_node("b", locked=True)
    wrong = workdir / "wrong"
    wrong.write_text("not the passphrase\n")
    r = b.run("unlock", "--passphrase-file", str(wrong), check=False)
    assert r.returncode != 0 and "passphrase" in r.output.lower(), r.output
    assert b.run("status")["vault"] == "locked"
    b.run("unlock", "--passphrase-file", str(b.passfile))
    assert b.run("status")["vault"] == "unlocked"
    b.run("lock")
    assert b.run("status")["vault"] == "locked"


def test_pending_offer_survives_restart(make_node, workdir):
    a, b = pair(make_node)
    sender = a.popen("send", b.fp_prefix, str(JPG), str(PNG))
    offer = b.wait_offer()

    # Must be clean even with a session waiting for a decision. If the agent hangs it is
    # killed, the rest is still checked (a crash must not lose the inbox either), and the
    # hang is reported at the end.
    shutdown_problem = b.stop(strict=False)

    # The sender's transfer is interrupted, not failed: it waits to offer the same offer again.
    def interrupted():
        ts = [t for t in a.run("transfers") if t.get("offer") == offer["id"]]
        return ts[0] if ts and ts[0]["state"] == "interrupted" else None
    t = wait_for(interrupted, h.WAIT, "the sender's transfer to be interrupted")
    assert sender.poll() is None, "`send` gave up although the transfer will resume"

    # While B is down, a new send to it fails plainly.
    wait_for(lambda: a.sees_online(b) is None, h.WAIT, f"{a.name} to see {b.name} offline")
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)))
    assert rc != 0 and "not online" in out + err, f"{out}\n{err}"

    b.start()
    offers = b.inbox()
    assert [o["id"] for o in offers] == [offer["id"]], offers
    assert offers[0]["state"] == "pending"
    assert [i["name"] for i in offers[0]["items"]] == ["sample.jpg", "sample.png"]
    # A offers it again once it sees B: the same inbox entry, now connected.
    wait_for(lambda: b.inbox()[0]["connected"], h.WAIT + 10, "the sender to offer again")
    assert len(b.inbox(all=True)) == 1
    b.run("accept", offer["id"][:8])
    rc, out, err = finish(sender)
    assert rc == 0, f"{out}\n{err}"
    h.assert_holds_exactly(b, [JPG, PNG], workdir)
    assert [x for x in a.run("transfers") if x["id"] == t["id"]][0]["state"] == "done"
    assert shutdown_problem is None, f"{shutdown_problem} while an offer was pending (see the agent log below)"


def test_bad_input(make_node):
    a = make_node("a")
    b = make_node("b")
    c1 = make_node("c1", name=h.unique("itdup"))
    c2 = make_node("c2", name=c1.name)
    a.wait_sees(b)

    # Not an image: refused before anything is offered.
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(fixture("not-an-image.txt"))))
    assert rc != 0
    assert "not a supported image" in out + err and "JPEG" in out + err, f"unclear message:\n{out}\n{err}"
    # One bad file spoils the whole send, before the peer sees anything.
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG), str(fixture("not-an-image.txt"))))
    assert rc != 0 and "not a supported image" in out + err, f"{out}\n{err}"
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(h.REPO / "no-such-photo.jpg")))
    assert rc != 0 and "no-such-photo.jpg" in out + err, f"{out}\n{err}"
    assert b.inbox(all=True) == []

    # Unknown peer.
    nobody = h.unique("nobody")
    rc, out, err = finish(a.popen("send", nobody, str(JPG)))
    assert rc != 0
    assert f"no peer named '{nobody}'" in out + err, f"unclear message:\n{out}\n{err}"
    rc, out, err = finish(a.popen("send", nobody, str(JPG), json=True))
    error = json.loads(out)["error"]
    t = error["transfer"]
    assert rc == 66 and error["code"] == "notFound" and t["state"] == "failed" and not t.get("offer"), error

    # Two agents with one display name: the error names both fingerprints.
    a.wait_sees(c1)
    a.wait_sees(c2)
    rc, out, err = finish(a.popen("send", c1.name, str(JPG)))
    assert rc != 0, f"send to an ambiguous name succeeded:\n{out}\n{err}"
    assert c1.fingerprint in out + err and c2.fingerprint in out + err, f"candidates not listed:\n{out}\n{err}"
    assert "several peers" in out + err
    for n in (b, c1, c2):
        assert n.inbox(all=True) == [], f"{n.key} received an offer"


def test_two_offers_at_once(make_node, workdir):
    a, b = pair(make_node)
    s1 = a.popen("send", b.fp_prefix, str(JPG))
    s2 = a.popen("send", b.fp_prefix, str(PNG), str(HEIC))
    offers = wait_for(lambda: (lambda o: o if len(o) == 2 else None)(b.inbox()), h.WAIT, "two offers in B's inbox")
    by_count = {len(o["items"]): o for o in offers}
    assert set(by_count) == {1, 2}, offers
    b.run("reject", by_count[1]["id"][:8])
    b.run("accept", by_count[2]["id"][:8])
    rc1, out1, err1 = finish(s1)
    rc2, out2, err2 = finish(s2)
    assert rc1 != 0 and "declined" in out1 + err1, f"{out1}\n{err1}"
    assert rc2 == 0, f"{out2}\n{err2}"
    h.assert_holds_exactly(b, [HEIC, PNG], workdir)


def test_sender_gone_before_decision(make_node, workdir):
    a, b = pair(make_node)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    a.stop()  # the sending agent goes away while its offer waits; its TCP connection closes
    rc, out, err = finish(sender)
    assert rc != 0 and (out + err).strip(), f"send did not fail clearly when its agent stopped: {rc}\n{out}\n{err}"

    # Accepting now is recorded, and says plainly that nothing arrives until the sender returns.
    wait_for(lambda: not b.inbox()[0]["connected"], h.WAIT, "the receiver to see the sender gone")
    r = b.run("accept", offer["id"][:8])
    assert r["state"] == "interrupted" and "not connected now" in r["message"], r
    assert b.photos() == []
    assert h.files_in(b.spool) == []

    # The sender's agent comes back, reads its unfinished transfer back and offers it again:
    # accepted without a second prompt.
    a.start()
    wait_for(lambda: len(b.photos()) == 1, h.WAIT + 15, "the photo to arrive after the sender returned")
    p = b.photos()[0]
    assert h.export_bytes(b, p["id"], workdir / "out") == JPG.read_bytes()
    assert [o["state"] for o in b.ended_inbox()] == ["completed"]
    assert h.files_in(b.spool) == []


def test_offer_expires(make_node):
    a = make_node("a")
    b = make_node("b", start=False)
    b.start("--offer-expiry", "10")
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    assert offer["expiresAt"] > offer["receivedAt"]
    rc, out, err = finish(sender, timeout=60)  # the receiver's session wakes when the offer is due
    assert rc != 0 and "expired" in out + err, f"{rc}\n{out}\n{err}"
    assert b.inbox() == []
    assert [o["state"] for o in b.inbox(all=True)] == ["expired"]
    r = b.run("accept", offer["id"][:8], check=False)
    assert r.returncode != 0 and "expired" in r.output, r.output
    assert b.photos() == []


def test_restart_after_crash(make_node, workdir):
    a, b = pair(make_node)
    sender = a.popen("send", b.fp_prefix, str(PNG))
    b.run("accept", b.wait_offer()["id"][:8])
    assert finish(sender)[0] == 0
    sender = a.popen("send", b.fp_prefix, str(JPG))
    pending = b.wait_offer()

    b.kill()  # SIGKILL: no cleanup at all; the socket file stays behind
    assert b.socket.exists()
    # The sender's transfer waits to resume; its CLI keeps waiting until interrupted by the user.
    wait_for(lambda: any(t["state"] == "interrupted" for t in a.run("transfers")), h.WAIT, "the transfer to be interrupted")
    sender.terminate()
    finish(sender)
    b.start()  # a stale socket must not block the new agent
    photos = b.photos()
    assert [p["name"] for p in photos] == ["sample.png"]
    assert h.export_bytes(b, photos[0]["id"], workdir / "out") == PNG.read_bytes()
    assert [o["id"] for o in b.inbox()] == [pending["id"]]
    assert b.peer(a.fingerprint)["trust"] == "known"
    assert b.run("id")["fingerprint"] == b.fingerprint
