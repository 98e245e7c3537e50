"""The vault as a photo library through the CLI: EXIF facts and thumbnails made after import,
location stripping on export, albums, tags, favourites, hidden photos, real deletion, private albums."""
from pathlib import Path

import lfharness as h

MEDIA = Path(__file__).resolve().parents[1] / "LocafotoMediaTests" / "Fixtures"


def indexed(node, pid):
    d = node.run("show", pid)
    return d if d["media"].get("width") else None


def test_photo_library(make_node, workdir):
    a = make_node("a", name=h.unique("itorg"))
    r = a.run("import", str(MEDIA / "photo.jpg"), str(MEDIA / "nogps.jpg"), str(MEDIA / "photo.png"), str(MEDIA / "photo.heic"))
    ids = {Path(o["path"]).name: o["photo"] for o in r["imported"]}
    assert len(ids) == 4, r

    # EXIF facts and a thumbnail arrive shortly after the import (background indexer).
    d = h.wait_for(lambda: indexed(a, ids["photo.jpg"]), what="the media indexer")
    assert d["media"]["hasLocation"] is True and d["media"]["cameraModel"], d
    assert d["photo"]["capturedAt"], d
    h.wait_for(lambda: indexed(a, ids["nogps.jpg"]), what="the media indexer")
    assert a.run("show", ids["nogps.jpg"])["media"]["hasLocation"] is False
    thumb = workdir / "t.jpg"
    h.wait_for(lambda: a.run("thumb", ids["photo.jpg"], str(thumb), check=False).returncode == 0, what="a thumbnail")
    data = thumb.read_bytes()
    assert data[:3] == b"\xff\xd8\xff" and len(data) < (MEDIA / "photo.jpg").stat().st_size * 4

    # Export without the location: the copy has no GPS (checked by importing it back).
    (workdir / "clean").mkdir()
    out = a.run("export", ids["photo.jpg"], str(workdir / "clean"), "--strip-location")
    clean = Path(out["path"])
    assert clean.read_bytes() != (MEDIA / "photo.jpg").read_bytes()
    back = a.run("import", str(clean))["imported"][0]["photo"]
    h.wait_for(lambda: indexed(a, back), what="the media indexer")
    assert a.run("show", back)["media"]["hasLocation"] is False

    # Albums, tags, favourites, hidden, sort and filters.
    a.run("album", "create", "Holidays")
    a.run("album", "add", "Holidays", ids["photo.jpg"], ids["photo.png"])
    a.run("album", "cover", "Holidays", ids["photo.png"])
    albums = a.run("album", "list")
    assert [(x["name"], x["photoCount"]) for x in albums] == [("Holidays", 2)], albums
    assert {p["id"] for p in a.run("list", "--album", "Holidays")} == {ids["photo.jpg"], ids["photo.png"]}
    a.run("album", "create", "Best")
    a.run("album", "copy", "Holidays", "Best", ids["photo.png"])
    a.run("album", "move", "Holidays", "Best", ids["photo.jpg"])
    assert {p["id"] for p in a.run("list", "--album", "Best")} == {ids["photo.jpg"], ids["photo.png"]}
    assert [p["id"] for p in a.run("list", "--album", "Holidays")] == [ids["photo.png"]]
    a.run("tag", "--add", "beach", "--album", "Best")
    assert {p["id"] for p in a.run("list", "--tag", "beach")} == {ids["photo.jpg"], ids["photo.png"]}
    a.run("favorite", ids["photo.heic"])
    assert [p["id"] for p in a.run("list", "--favorites")] == [ids["photo.heic"]]
    a.run("hide", ids["nogps.jpg"])
    assert ids["nogps.jpg"] not in {p["id"] for p in a.run("list")}
    assert ids["nogps.jpg"] in {p["id"] for p in a.run("list", "--hidden")}
    sizes = [p["originalBytes"] for p in a.run("list", "--sort", "size", "--ascending")]
    assert sizes == sorted(sizes)
    assert [p["name"] for p in a.run("list", "--search", "photo.p")] == ["photo.png"]
    a.run("album", "rename", "Best", "Favourites 2025")
    a.run("album", "delete", "Holidays")
    assert len(a.run("list", "--hidden")) == 5  # deleting an album keeps its photos

    # Delete is real: row and encrypted file gone.
    before = set(h.files_in(a.vault_photos))
    deleted = a.run("delete", "--yes", ids["photo.heic"])
    assert deleted["count"] == 1
    assert ids["photo.heic"] not in {p["id"] for p in a.run("list", "--hidden")}
    assert len(set(h.files_in(a.vault_photos))) == len(before) - 1
    refused = a.run("delete", ids["photo.png"], json=False, check=False)  # no terminal, no --yes
    assert refused.returncode != 0 and "--yes" in refused.output

    # A private album: invisible until unlocked with its own passphrase.
    (workdir / "albumpass").write_text("album secret 42\n")
    a.run("album", "create", "Private", "--private", "--passphrase-file", str(workdir / "albumpass"))
    a.run("album", "add", "Private", ids["nogps.jpg"])
    a.run("album", "lock", "Private")
    assert ids["nogps.jpg"] not in {p["id"] for p in a.run("list", "--hidden")}
    (workdir / "wrong").write_text("nope\n")
    bad = a.run("album", "unlock", "Private", "--passphrase-file", str(workdir / "wrong"), json=False, check=False)
    assert bad.returncode != 0
    a.run("album", "unlock", "Private", "--passphrase-file", str(workdir / "albumpass"))
    assert ids["nogps.jpg"] in {p["id"] for p in a.run("list", "--hidden")}


def test_send_compressed_without_location(make_node, workdir):
    a = make_node("a", name=h.unique("itcmpa"))
    b = make_node("b", name=h.unique("itcmpb"))
    a.wait_sees(b)
    sender = a.popen("send", b.name, str(MEDIA / "photo.jpg"), "--compress", "--quality", "70", "--strip-location")
    offer = b.wait_offer()
    assert offer["items"][0]["kind"] == "jpeg"
    b.run("accept", offer["id"][:8])
    code, out, err = h.finish(sender)
    assert code == 0, out + err
    assert "saved" in out, out
    pid = b.photos()[0]["id"]
    h.wait_for(lambda: indexed(b, pid), what="the media indexer")
    d = b.run("show", pid)
    assert d["media"]["hasLocation"] is False, d
    assert max(d["media"]["width"], d["media"]["height"]) <= 1500
    bad = a.run("send", b.name, str(MEDIA / "photo.jpg"), "--compress", "--quality", "95", json=False, check=False)
    assert bad.returncode != 0 and "60...90" in bad.output


def test_folder_import_duplicates_originals_and_classify_hook(make_node, workdir):
    import shutil
    src = workdir / "camera"
    (src / "2025" / "june").mkdir(parents=True)
    shutil.copy(MEDIA / "photo.jpg", src / "a.jpg")
    shutil.copy(MEDIA / "photo.png", src / "2025" / "b.png")
    shutil.copy(MEDIA / "photo.webp", src / "2025" / "june" / "c.webp")
    shutil.copy(MEDIA / "photo.jpg", src / "2025" / "june" / "same-as-a.jpg")  # duplicate content
    (src / "notes.txt").write_text("not a photo")
    (src / ".hidden.jpg").write_bytes((MEDIA / "small.jpg").read_bytes())

    # Classify hook: refuses PNGs, tags everything else.
    hook = workdir / "hook.sh"
    hook.write_text('#!/bin/sh\nhead -c 8 | od -An -tx1 | grep -q "89 50 4e 47" && { echo "no PNG please" >&2; exit 3; }\n'
                    'cat >/dev/null\necho "tag:camera-roll"\n')
    hook.chmod(0o755)
    a = make_node("a", name=h.unique("itfold"), start=False)
    a.start("--classify-hook", str(hook))

    r = a.run("import", str(src), "--remove-originals", check=False, json=True)
    # Files that are not photos were skipped: a failure, whose JSON error holds the import job.
    assert r.returncode != 0 and set(r.data) == {"error"}, r.output
    summary = r.data["error"]["import"]
    imported = {h_path.split("/")[-1] for h_path in (o["path"] for o in summary["imported"])}
    skipped = {o["path"].split("/")[-1]: o["reason"] for o in summary["skipped"]}
    # Files are taken in path order, so the first of the two identical files is kept.
    assert imported == {"same-as-a.jpg", "c.webp"}, summary
    assert "already in the vault" in skipped["a.jpg"]
    assert "no PNG please" in skipped["b.png"]
    assert "not a supported image" in skipped["notes.txt"]
    assert ".hidden.jpg" not in imported and ".hidden.jpg" not in skipped
    # Originals removed only for what was imported.
    assert not (src / "2025" / "june" / "same-as-a.jpg").exists() and not (src / "2025" / "june" / "c.webp").exists()
    assert (src / "2025" / "b.png").exists() and (src / "a.jpg").exists() and (src / "notes.txt").exists()
    assert all(p["tags"] == ["camera-roll"] for p in a.photos()), a.photos()
    # Skips other than duplicates make the command fail, with a summary.
    plain = a.run("import", str(src / "notes.txt"), json=False, check=False)
    assert plain.returncode != 0 and "0 imported, 1 skipped" in plain.output


def test_share_an_album_from_the_vault(make_node, workdir):
    a = make_node("a", name=h.unique("itsha"))
    b = make_node("b", name=h.unique("itshb"))
    r = a.run("import", str(MEDIA / "photo.jpg"), str(MEDIA / "photo.png"), str(MEDIA / "photo.webp"))
    ids = [o["photo"] for o in r["imported"]]
    a.run("album", "create", "Trip")
    a.run("album", "add", "Trip", ids[0], ids[2])
    a.wait_sees(b)
    sender = a.popen("send", b.name, "--album", "Trip")
    offer = b.wait_offer()
    assert sorted(i["name"] for i in offer["items"]) == ["photo.jpg", "photo.webp"], offer
    b.run("accept", offer["id"][:8])
    code, out, err = h.finish(sender)
    assert code == 0, out + err
    got = {p["name"]: p["id"] for p in b.photos()}
    for name in ("photo.jpg", "photo.webp"):
        assert h.export_bytes(b, got[name], workdir / name) == (MEDIA / name).read_bytes()
    nothing = a.run("send", b.name, "--tag", "no-such-tag", json=False, check=False)
    assert nothing.returncode != 0 and "no photo" in nothing.output
