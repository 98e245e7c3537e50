"""Change of passphrase through the running agent: `locafoto vault passwd` and
`locafoto album passwd NAME`. The passphrases travel in files, never in argv."""
import lfharness as h
from lfharness import fixture

NEW = "an entirely new vault passphrase"


def test_vault_passwd_rewraps_the_master_key(make_node, workdir):
    a = make_node("a", name=h.unique("itpw"))
    a.run("import", str(fixture("sample.jpg")))
    photos = a.photos()
    assert len(photos) == 1, photos
    pid = photos[0]["id"]
    new = workdir / "new-pass"
    new.write_text(NEW + "\n")
    new.chmod(0o600)
    wrong = workdir / "wrong-pass"
    wrong.write_text("not the passphrase\n")
    wrong.chmod(0o600)

    # A wrong current passphrase changes nothing and says so (exit 77, refused).
    r = a.run("vault", "passwd", "--passphrase-file", str(wrong), "--new-passphrase-file", str(new), check=False, json=False)
    assert r.returncode == 77 and "wrong passphrase" in r.output, r.output
    ok = a.run("vault", "passwd", "--passphrase-file", str(a.passfile), "--new-passphrase-file", str(new))
    assert ok["vault"] == "unlocked", ok

    # The old passphrase no longer unlocks; the new one does, and the photo reads back.
    a.run("lock")
    old = a.run("unlock", "--passphrase-file", str(a.passfile), check=False, json=False)
    assert old.returncode == 77, old.output
    a.run("unlock", "--passphrase-file", str(new))
    assert h.export_bytes(a, pid, workdir / "out") == fixture("sample.jpg").read_bytes()

    # After a restart too (the change is in the catalog, not in the agent's memory).
    a.stop()
    started = a.start("--locked")
    assert started.run("status")["vault"] == "locked"
    a.run("unlock", "--passphrase-file", str(new))


def test_album_passwd(make_node, workdir):
    a = make_node("a", name=h.unique("itapw"))
    old = workdir / "album-old"
    old.write_text("2468\n")
    old.chmod(0o600)
    new = workdir / "album-new"
    new.write_text("1357 9\n")
    new.chmod(0o600)
    a.run("album", "create", "Diary", "--private", "--passphrase-file", str(old))
    a.run("album", "lock", "Diary")
    r = a.run("album", "passwd", "Diary", "--passphrase-file", str(new), "--new-passphrase-file", str(old), check=False, json=False)
    assert r.returncode == 77 and "wrong passphrase" in r.output, r.output
    info = a.run("album", "passwd", "Diary", "--passphrase-file", str(old), "--new-passphrase-file", str(new))
    assert info["name"] == "Diary" and info["locked"] is True, info
    again = a.run("album", "unlock", "Diary", "--passphrase-file", str(old), check=False, json=False)
    assert again.returncode == 77, again.output
    unlocked = a.run("album", "unlock", "Diary", "--passphrase-file", str(new))
    assert unlocked["locked"] is False, unlocked
