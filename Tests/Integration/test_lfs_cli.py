"""Named keys and .lfs through the CLI and a real agent, against the seed's Python tool."""
import subprocess
import sys
from pathlib import Path

import lfharness as h
from lfharness import fixture

TOOL = Path(__file__).resolve().parents[2] / "scripts" / "interop" / "lfs_tool.py"


def lfs(*args: str) -> None:
    subprocess.run([sys.executable, str(TOOL), *args], check=True, capture_output=True)


def test_keys_and_lfs_both_ways(make_node, workdir):
    a = make_node("a", name=h.unique("itlfs"))
    created = a.run("key", "create", "family photos")
    assert len(created["fingerprint"]) == 16
    listed = a.run("key", "list")
    assert [k["name"] for k in listed] == ["family photos"] and "hex" not in listed[0]
    hexfile = workdir / "family.hex"
    a.run("key", "export", "family photos", "-o", str(hexfile), json=False)
    assert hexfile.stat().st_mode & 0o777 == 0o600
    assert len(hexfile.read_text().strip()) == 64

    # A file encrypted by the seed's Python example imports; the photo is byte-identical.
    lfs("encrypt", "--key-hex-file", str(hexfile), "--name", "family photos", str(fixture("sample.jpg")), str(workdir / "a.lfs"))
    r = a.run("import", str(workdir / "a.lfs"))
    photo = {"id": r["imported"][0]["photo"]}
    assert h.export_bytes(a, photo["id"], workdir / "plain") == fixture("sample.jpg").read_bytes()

    # Exported as .lfs, Python decrypts it to the same bytes.
    (workdir / "lfsout").mkdir()
    out = a.run("export", photo["id"][:8], str(workdir / "lfsout"), "--lfs", "family photos")
    lfs("decrypt", "--key-hex-file", str(hexfile), out["path"], str(workdir / "back.jpg"))
    assert (workdir / "back.jpg").read_bytes() == fixture("sample.jpg").read_bytes()

    # A file for a key the vault lacks: a clear error naming the key; fine after importing it.
    lfs("encrypt", "--key-hex-file", str(hexfile), "--name", "trip", str(fixture("sample.png")), str(workdir / "b.lfs"))
    miss = a.run("import", str(workdir / "b.lfs"), json=False, check=False)
    assert miss.returncode != 0 and "needs the key 'trip'" in miss.output, miss.output
    a.run("key", "import", "trip", str(hexfile))
    assert len(a.run("import", str(workdir / "b.lfs"))["imported"]) == 1
    assert any(p["format"] == "png" for p in a.photos())

    # The key cannot come from argv-like misuse: bad hex is refused without echoing it.
    bad = workdir / "bad.hex"
    bad.write_text("zz" * 32)
    refused = a.run("key", "import", "bad", str(bad), json=False, check=False)
    assert refused.returncode != 0 and "zz" not in refused.output

    # In use: deletion refused unless forced.
    inuse = a.run("key", "delete", "family photos", json=False, check=False)
    assert inuse.returncode != 0 and "--force" in inuse.output
    a.run("key", "delete", "family photos", "--force")
    assert [k["name"] for k in a.run("key", "list")] == ["trip"]


def test_lfs_over_the_network_waits_for_its_key(make_node, workdir):
    a = make_node("a", name=h.unique("itlfsa"))
    b = make_node("b", name=h.unique("itlfsb"))
    a.wait_sees(b)
    hexfile = workdir / "trip.hex"
    hexfile.write_text("8f" * 32 + "\n")
    hexfile.chmod(0o600)
    lfs("encrypt", "--key-hex-file", str(hexfile), "--name", "trip", str(fixture("sample.jpg")), str(workdir / "beach.lfs"))

    sender = a.popen("send", b.name, str(workdir / "beach.lfs"))
    offer = b.wait_offer()
    assert offer["items"][0]["kind"] == "lfs"
    b.run("accept", offer["id"][:8])
    code, out, err = h.finish(sender)
    assert code == 0, out + err
    assert "needs the key 'trip'" in out, out

    # B lacks the key: nothing imported yet, the inbox says what is missing.
    assert b.photos() == []
    waiting = b.inbox()
    assert waiting and waiting[0]["items"][0]["status"] == "needsKey", waiting
    assert "needs key 'trip'" in b.run("inbox", json=False).output

    # Importing the key imports the waiting file.
    b.run("key", "import", "trip", str(hexfile))
    photos = b.photos()
    assert len(photos) == 1 and photos[0]["sender"]["fingerprint"] == a.fingerprint, photos
    assert h.export_bytes(b, photos[0]["id"], workdir / "out") == fixture("sample.jpg").read_bytes()
    assert b.inbox() == []
    assert h.files_in(b.spool) == []
