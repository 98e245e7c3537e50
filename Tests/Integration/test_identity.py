"""The node identity protected by the vault passphrase (`locafoto identity protect`): the
private key is not on disk in clear, the agent needs the passphrase to start (no --locked, no
unattended start without a passphrase file), the fingerprint and the peers' trust survive, and
a relay refuses such an identity. Passphrases travel in files, never in argv."""
import json

import lfharness as h
from lfharness import finish, fixture, wait_for

JPG = fixture("sample.jpg")


def test_protected_identity_restart_and_receive(make_node, workdir):
    a = make_node("a", name=h.unique("itida"))
    b = make_node("b", name=h.unique("itidb"))
    # b gets a passphrase file of its own: `vault passwd` changes it below.
    b.passfile = workdir / "b-pass"
    b.passfile.write_text(h.PASSPHRASE + "\n")
    b.passfile.chmod(0o600)
    fingerprint = b.fingerprint
    a.wait_sees(b)
    b.wait_sees(a)
    b.run("trust", a.fp_prefix)  # so that a's photo below goes in without asking
    identity = b.home / "identity.json"
    seed = json.loads(identity.read_text())["ed25519Seed"]
    assert b.run("status")["identity"] == "clear"

    # Not while the agent runs (it holds the home; it reads identity.json only at start).
    busy = b.run("identity", "protect", "--passphrase-file", str(b.passfile), check=False, json=False)
    assert busy.returncode != 0 and "already running" in busy.output, busy.output
    b.stop()
    wrong = workdir / "wrong"
    wrong.write_text("not the passphrase\n")
    wrong.chmod(0o600)
    refused = b.run("identity", "protect", "--passphrase-file", str(wrong), check=False, json=False)
    assert refused.returncode == 77 and "wrong passphrase" in refused.output, refused.output
    assert json.loads(identity.read_text())["version"] == 1

    out = b.run("identity", "protect", "--passphrase-file", str(b.passfile))
    assert out == {"fingerprint": fingerprint, "protection": "vault", "changed": True}, out
    raw = identity.read_bytes()
    assert seed.encode() not in raw and b"ed25519Seed" not in raw, raw
    stored = json.loads(raw)
    assert stored["version"] == 2 and stored["protection"] == "vault", stored
    assert identity.stat().st_mode & 0o777 == 0o600
    # The fingerprint from the clear public key, with no agent and no passphrase.
    assert b.run("identity") == {"fingerprint": fingerprint, "protection": "vault", "changed": False}

    # No start without the passphrase: --locked, or no file and no terminal (stdin is a pipe).
    base = ("agent", "--name", b.name, "--listen", "127.0.0.1", "--port", "0", "--no-discovery", "--no-web")
    locked = b.run(*base, "--locked", check=False, json=False, input="")
    assert locked.returncode != 0 and "cannot start --locked" in locked.output, locked.output
    unattended = b.run(*base, check=False, json=False, input="")
    assert unattended.returncode != 0 and "--passphrase-file" in unattended.output, unattended.output

    # With it: the same fingerprint, the vault unlocked, and a reaches it as the same peer
    # (the handshake proves the key behind the fingerprint a sends to).
    b.start()
    assert b.fingerprint == fingerprint
    status = b.run("status")
    assert status["vault"] == "unlocked" and status["identity"] == "vault", status
    assert "protected by the vault passphrase" in b.run("status", json=False, check=False).output
    # a knew b at its old port: wait until mDNS gives the new one.
    wait_for(lambda: (lambda p: p and p["online"] and any(x.endswith(f":{b.port}") for x in p["addresses"]))(a.peer(b.fingerprint)),
             h.WAIT, "a to see b at its new port")
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG), json=True))
    assert rc == 0 and json.loads(out)["state"] == "done", (out, err)
    photos = b.photos()
    assert len(photos) == 1 and photos[0]["sender"]["fingerprint"] == a.fingerprint, photos
    assert h.export_bytes(b, photos[0]["id"], workdir / "out") == JPG.read_bytes()

    # vault passwd keeps the master key, so the identity opens with the new passphrase.
    new = workdir / "b-new"
    new.write_text("an entirely new vault passphrase\n")
    new.chmod(0o600)
    b.run("vault", "passwd", "--passphrase-file", str(b.passfile), "--new-passphrase-file", str(new))
    b.stop()
    b.passfile = new
    b.start(wait_discovery=False)
    assert b.fingerprint == fingerprint
    b.stop()

    # A relay runs unattended and has no vault: it refuses a protected identity.
    relay = b.run("relay", "run", "--open", "--no-discovery", "--port", "0", check=False, json=False, input="")
    assert relay.returncode != 0 and "relay has no vault" in relay.output, relay.output

    # Back to clear: the same key (the old seed is back), an unattended start works again.
    out = b.run("identity", "unprotect", "--passphrase-file", str(new))
    assert out == {"fingerprint": fingerprint, "protection": "clear", "changed": True}, out
    assert json.loads(identity.read_text())["ed25519Seed"] == seed
    b.start(locked=True, wait_discovery=False)
    assert b.fingerprint == fingerprint


def test_backup_with_a_protected_identity_restores_it_protected(make_node, workdir):
    a = make_node("a", name=h.unique("itidk"), start=False)
    a.run("identity", "protect", "--passphrase-file", str(a.passfile))  # no identity yet: made protected
    assert b"ed25519Seed" not in (a.home / "identity.json").read_bytes()
    a.start(wait_discovery=False)
    fingerprint = a.fingerprint
    backup = workdir / "id.locabak"
    assert a.run("backup", "--with-identity", str(backup))["identity"] is True
    a.stop()

    b = make_node("b", name=h.unique("itidr"), start=False, vault=False)
    r = b.run("restore", str(backup), "--passphrase-file", str(b.passfile))
    assert r["fingerprint"] == fingerprint, r
    assert (b.home / "identity.json").read_bytes() == (a.home / "identity.json").read_bytes()
    assert b.run("identity")["protection"] == "vault"
    b.start(wait_discovery=False)
    assert b.fingerprint == fingerprint
