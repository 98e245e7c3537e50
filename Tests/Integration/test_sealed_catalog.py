"""Issue 11 §1, as an attacker holding the disk meets it: after real imports, tags, an album, a
filter, a received photo and a lock, no file in the node's home shows what describes a photo —
its name, camera, capture date, tags, album name, sender's name, content hash — whether the
agent still runs (the vault locked) or has stopped. Every file is read as bytes, SQLite's WAL
included; nothing is decrypted.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import lfharness as h
from lfharness import fixture

MEDIA = Path(__file__).resolve().parents[1] / "LocafotoMediaTests" / "Fixtures"


def leaks(home: Path, needles: dict[str, bytes]) -> list[str]:
    found = []
    for f in sorted(home.rglob("*")):
        if not f.is_file() or f.suffix == ".sock":
            continue
        data = f.read_bytes()
        found += [f"{what} in {f.relative_to(home)}" for what, needle in needles.items() if needle in data]
    return found


def test_the_home_shows_nothing_that_describes_a_photo_without_the_passphrase(make_node, workdir):
    sender_name = h.unique("Kilimanjaro-Sender")
    a = make_node("a", name=sender_name)
    b = make_node("b", name=h.unique("itscb"))
    a.wait_sees(b)

    # A photo with EXIF (camera "Locafoto TestCam 1", taken 2024-05-01 10:00:00).
    local = workdir / "Zanzibar-Honeymoon-4411.jpg"
    shutil.copy(MEDIA / "photo.jpg", local)
    pid = b.run("import", str(local))["imported"][0]["photo"]
    h.wait_for(lambda: (lambda d: d if d["media"].get("cameraModel") else None)(b.run("show", pid)), what="the media indexer")
    b.run("album", "create", "Secret-Safari-Album")
    b.run("album", "add", "Secret-Safari-Album", pid)
    b.run("tag", "--add", "flamingotagunique", pid)
    b.run("filter", pid, "--sepia")

    # A photo received from a peer: the inbox keeps its name only until it is imported.
    received = workdir / "Serengeti-Sunrise-9182.png"
    shutil.copy(fixture("sample.png"), received)
    sender = a.popen("send", b.fp_prefix, str(received))
    b.run("accept", b.wait_offer()["id"][:8])
    rc, out, err = h.finish(sender)
    assert rc == 0, f"{out}\n{err}"
    names = sorted(p["name"] for p in b.photos())
    assert names == ["Serengeti-Sunrise-9182.png", "Zanzibar-Honeymoon-4411-sepia.jpg", "Zanzibar-Honeymoon-4411.jpg"], names
    shown = b.run("show", pid)
    assert shown["photo"]["capturedAt"].startswith("2024-05-01"), shown

    needles = {
        "photo name": b"Zanzibar-Honeymoon",
        "received photo name": b"Serengeti-Sunrise",
        "camera model": b"TestCam 1",
        "capture date": b"2024-05-01 10:00",
        "tag": b"flamingotagunique",
        "album name": b"Secret-Safari-Album",
        "content hash": hashlib.blake2b((MEDIA / "photo.jpg").read_bytes(), digest_size=32).digest(),
        "content hash (hex)": hashlib.blake2b((MEDIA / "photo.jpg").read_bytes(), digest_size=32).hexdigest().encode(),
        "received content hash (hex)": hashlib.blake2b(fixture("sample.png").read_bytes(), digest_size=32).hexdigest().encode(),
    }
    b.run("lock")
    assert b.run("status")["vault"] == "locked"
    found = leaks(b.home, needles)
    assert not found, f"readable while the agent runs with the vault locked: {found}"
    b.stop()
    found = leaks(b.home, needles)
    assert not found, f"readable after the agent stopped: {found}"

    # The sender's name is the peer's own (the peers list needs it), but it is not tied to a
    # photo in the catalog: what b knows of its photos' senders is sealed.
    catalog = (b.home / "vault" / "catalog.sqlite").read_bytes()
    assert sender_name.encode() not in catalog
