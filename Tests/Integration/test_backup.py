"""Encrypted vault backup with `locafoto backup`, restored on a fresh home with `locafoto restore`."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import lfharness as h
from lfharness import fixture

READER = Path(__file__).resolve().parents[2] / "scripts" / "interop" / "read_backup.py"

NAMES = ["sample.jpg", "sample.png", "sample.heic", "sample.webp"]


def test_backup_and_restore_on_a_new_home(make_node, workdir):
    a = make_node("a", name=h.unique("itbak"))
    for n in NAMES:
        a.run("import", str(fixture(n)))
    backup = workdir / "vault.locabak"
    s = a.run("backup", str(backup))
    assert s["photos"] == 4, s
    assert backup.stat().st_mode & 0o777 == 0o600
    # The independent reader (written from protocol/formats.md) reads it, names included: they
    # come from the sealed catalog records ("Sealed catalog"), opened under the master key.
    read = subprocess.run(
        [sys.executable, str(READER), str(backup), "--passphrase-file", str(a.passfile), "--json"],
        capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    listed = json.loads(read.stdout)["photos"]
    assert sorted(p["name"] for p in listed) == sorted(NAMES), listed
    for p in listed:
        data = fixture(p["name"]).read_bytes()
        assert p["contentHash"] == hashlib.blake2b(data, digest_size=32).hexdigest(), p
        assert p["sha256"] == hashlib.sha256(data).hexdigest(), p
    # A second backup to the same file is refused.
    again = a.run("backup", str(backup), check=False, json=False)
    assert again.returncode != 0 and "already exists" in again.output

    # A brand-new node restores it (no agent needed), then serves the same photos.
    b = make_node("b", name=h.unique("itres"), start=False, vault=False)
    bad = b.run("restore", str(backup), "--passphrase-file", str(workdir / "nopass"), check=False, json=False)
    assert bad.returncode != 0
    (workdir / "wrong").write_text("not the passphrase\n")
    wrong = b.run("restore", str(backup), "--passphrase-file", str(workdir / "wrong"), check=False, json=False)
    assert wrong.returncode != 0 and "wrong passphrase" in wrong.output
    r = b.run("restore", str(backup), "--passphrase-file", str(b.passfile))
    assert r["photos"] == 4, r
    b.start()
    photos = b.photos()
    assert sorted(p["name"] for p in photos) == sorted(NAMES)
    for p in photos:
        assert h.export_bytes(b, p["id"], workdir / "out" / p["id"][:8]) == fixture(p["name"]).read_bytes()

    # Restoring over an existing vault is refused.
    b.stop()
    over = b.run("restore", str(backup), "--passphrase-file", str(b.passfile), check=False, json=False)
    assert over.returncode != 0 and "already" in over.output


def test_backup_with_identity_keeps_the_fingerprint(make_node, workdir):
    a = make_node("a", name=h.unique("itbid"))
    a.run("import", str(fixture("sample.jpg")))
    fingerprint = a.fingerprint
    plain, with_id = workdir / "plain.locabak", workdir / "id.locabak"
    assert a.run("backup", str(plain)).get("identity") is None
    s = a.run("backup", "--with-identity", str(with_id))
    assert s["identity"] is True, s
    # The private key is not in the file in clear.
    seed = __import__("json").loads((a.home / "identity.json").read_text())["ed25519Seed"]
    assert seed.encode() not in with_id.read_bytes()
    a.stop()

    # Restored on a new home: the same fingerprint, the identity file 0600.
    b = make_node("b", name=h.unique("itbidr"), start=False, vault=False)
    r = b.run("restore", str(with_id), "--passphrase-file", str(b.passfile))
    assert r["fingerprint"] == fingerprint, r
    assert (b.home / "identity.json").stat().st_mode & 0o777 == 0o600
    b.start()
    assert b.fingerprint == fingerprint
    assert len(b.photos()) == 1

    # Without --with-identity a new home makes its own identity.
    c = make_node("c", name=h.unique("itbidc"), start=False, vault=False)
    c.run("restore", str(plain), "--passphrase-file", str(c.passfile))
    c.start()
    assert c.fingerprint != fingerprint

    # A home that already has another identity keeps it: refused, or --without-identity.
    b.stop()
    d = make_node("d", name=h.unique("itbidd"), start=True, vault=False)
    d.stop()
    own = (d.home / "identity.json").read_bytes()
    refused = d.run("restore", str(with_id), "--passphrase-file", str(d.passfile), check=False, json=False)
    assert refused.returncode != 0 and "another node identity" in refused.output, refused.output
    assert (d.home / "identity.json").read_bytes() == own
    d.run("restore", str(with_id), "--passphrase-file", str(d.passfile), "--without-identity")
    assert (d.home / "identity.json").read_bytes() == own
