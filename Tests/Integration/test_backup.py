"""Encrypted vault backup with `locafoto backup`, restored on a fresh home with `locafoto restore`."""
import lfharness as h
from lfharness import fixture

NAMES = ["sample.jpg", "sample.png", "sample.heic", "sample.webp"]


def test_backup_and_restore_on_a_new_home(make_node, workdir):
    a = make_node("a", name=h.unique("itbak"))
    for n in NAMES:
        a.run("import", str(fixture(n)))
    backup = workdir / "vault.locabak"
    s = a.run("backup", str(backup))
    assert s["photos"] == 4, s
    assert backup.stat().st_mode & 0o777 == 0o600
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
