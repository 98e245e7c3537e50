"""Issue 11 §2: the classify hook on every local import path (files, `import -`, `.lfs`, `open`,
`capture`); bundles from the vault with their metadata, and older bundle shapes named; `status`
totals and `list --min-size / --with-location / --without-location`. Real agents, real CLI."""

import json
import subprocess
import sys
from pathlib import Path

import lfharness as h
from lfharness import fixture, finish

MEDIA = Path(__file__).resolve().parents[1] / "LocafotoMediaTests" / "Fixtures"
LFS_TOOL = Path(__file__).resolve().parents[2] / "scripts" / "interop" / "lfs_tool.py"

# Refuses PNGs (by their magic bytes, read from stdin like any hook), tags everything else.
HOOK = ('#!/bin/sh\nhead -c 8 | od -An -tx1 | grep -q "89 50 4e 47" && { cat >/dev/null; echo "no PNG please" >&2; exit 3; }\n'
        'cat >/dev/null\necho "tag:hooked"\n')


def hooked_node(make_node, workdir, key="a"):
    hook = workdir / "hook.sh"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    node = make_node(key, start=False)
    node.start("--classify-hook", str(hook))
    return node


def test_classify_hook_on_stdin_and_lfs_imports(make_node, workdir):
    a = hooked_node(make_node, workdir)
    # import - (the capture pipeline's path)
    vetoed = a.run("import", "-", "--name", "p.png", json=False, check=False, input=fixture("sample.png").read_bytes())
    assert vetoed.returncode == 65 and "refused by the classify hook: no PNG please" in vetoed.output, vetoed.output
    ok = a.run("import", "-", "--name", "j.jpg", input=fixture("sample.jpg").read_bytes())
    assert ok["tags"] == ["hooked"], ok

    # .lfs files (seed 001), made by the seed's Python tool
    a.run("key", "create", "fam")
    hexfile = workdir / "fam.hex"
    a.run("key", "export", "fam", "-o", str(hexfile), json=False)
    for src, out in ((fixture("sample.png"), "p.lfs"), (fixture("sample.webp"), "w.lfs")):
        subprocess.run([sys.executable, str(LFS_TOOL), "encrypt", "--key-hex-file", str(hexfile), "--name", "fam", str(src),
                        str(workdir / out)], check=True, capture_output=True)
    r = a.run("import", str(workdir / "p.lfs"), str(workdir / "w.lfs"), check=False, json=True)
    # The hook's veto is a refusal for the content (65); the JSON error holds the import job.
    assert r.returncode == 65 and r.data["error"]["code"] == "unsupported", r.output
    summary = r.data["error"]["import"]
    assert [Path(o["path"]).name for o in summary["imported"]] == ["w.lfs"], summary
    assert summary["imported"][0]["tags"] == ["hooked"], summary
    assert "no PNG please" in summary["skipped"][0]["reason"], summary
    names = sorted(p["name"] for p in a.photos())
    assert names == ["j.jpg", "w.webp"], names
    assert all(p["tags"] == ["hooked"] for p in a.photos()), a.photos()
    assert h.files_in(a.home / "vault" / "tmp") == []


def test_bundles_from_the_vault_carry_metadata_and_open_through_the_hook(make_node, workdir):
    a = make_node("a")
    b = hooked_node(make_node, workdir, "b")
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(fixture("sample.gif")))  # one handshake: a learns b's key
    b.run("reject", b.wait_offer()["id"][:8])
    assert finish(sender)[0] != 0

    ids = {Path(o["path"]).name: o["photo"] for o in a.run("import", str(MEDIA / "photo.jpg"), str(MEDIA / "plain.png"))["imported"]}
    out = workdir / "v.locaphoto"
    r = a.run("bundle", "--photo", ids["photo.jpg"][:8], "--to", b.fp_prefix, "-o", str(out))
    assert r["bytes"] == (MEDIA / "photo.jpg").stat().st_size, r
    meta = json.loads(out.read_text())["metadata"]
    # photo.jpg: taken 2024-05-01 10:00 UTC, 1200x800 stored with orientation 6, so 800x1200 shown.
    assert (meta["captureDate"], meta["width"], meta["height"], meta["format"]) == ("2024-05-01T10:00:00Z", 800, 1200, "JPEG"), meta
    from_file = workdir / "f.locaphoto"
    a.run("bundle", str(MEDIA / "nogps.jpg"), "--to", b.fp_prefix, "-o", str(from_file))
    meta = json.loads(from_file.read_text())["metadata"]
    assert (meta["captureDate"], meta["width"], meta["height"]) == ("2024-05-01T10:00:00Z", 640, 480), meta
    png = workdir / "p.locaphoto"
    a.run("bundle", "--photo", ids["plain.png"], "--to", b.fp_prefix, "-o", str(png))
    meta = json.loads(png.read_text())["metadata"]
    assert meta.get("captureDate") is None and (meta["width"], meta["height"]) == (640, 480), meta
    both = a.run("bundle", str(MEDIA / "nogps.jpg"), "--photo", ids["plain.png"], "--to", b.fp_prefix, "-o", str(workdir / "x"),
                 json=False, check=False)
    assert both.returncode == 64, both.output

    # b opens them: through its classify hook, which refuses the PNG.
    opened = b.run("open", str(out))
    assert opened["tags"] == ["hooked"], opened
    assert h.export_bytes(b, opened["id"], workdir / "exp") == (MEDIA / "photo.jpg").read_bytes()
    vetoed = b.run("open", str(png), json=False, check=False)
    assert vetoed.returncode == 65 and "no PNG please" in vetoed.output, vetoed.output
    assert [p["id"] for p in b.photos()] == [opened["id"]]


def test_older_bundle_shapes_are_named(make_node, workdir):
    a = make_node("a")
    seed000 = {"version": "1.0", "photo": {"id": "x", "encryptedData": "AAAA", "encryptedKey": "AAAA", "iv": "AAAA", "authTag": "AAAA"},
               "metadata": {"originalSize": 3, "captureDate": "2025-11-15T10:30:00Z", "width": 1, "height": 1, "format": "HEIC"},
               "signature": "abcd"}
    seed001 = {"id": "x", "encryptedData": "AAAA", "encryptedKey": "AAAA", "iv": "AAAA", "tag": "AAAA", "metadata": {}}
    future = dict(seed000, version="3.0")
    broken = {"version": "2.0", "photo": {}}
    for doc, expect in ((seed000, "version 1.0"), (seed001, "no version"), (future, "version 3.0"), (broken, "fields missing")):
        f = workdir / "old.locaphoto"
        f.write_text(json.dumps(doc))
        r = a.run("open", str(f), json=False, check=False)
        assert r.returncode in (64, 65) and expect in r.output and "invalid or truncated JSON" not in r.output, (doc, r.output)
        if expect != "fields missing":
            assert r.returncode == 65 and "reads version 2.0" in r.output, r.output


def test_status_totals_and_list_filters(make_node, workdir):
    a = make_node("a")
    st = a.run("status")
    assert (st["photoCount"], st["originalBytes"], st["encryptedBytes"]) == (0, 0, 0), st
    files = [MEDIA / "photo.jpg", MEDIA / "nogps.jpg", MEDIA / "plain.png"]
    r = a.run("import", *map(str, files))
    ids = {Path(o["path"]).name: o["photo"] for o in r["imported"]}
    st = a.run("status")
    assert st["photoCount"] == 3 and st["originalBytes"] == sum(f.stat().st_size for f in files), st
    assert st["encryptedBytes"] > st["originalBytes"], st
    a.run("hide", ids["plain.png"])  # hidden photos are still in the vault
    assert a.run("status")["photoCount"] == 3
    a.run("hide", "--off", ids["plain.png"])

    # Sizes: 28317, 14216 and 3738 bytes.
    def listed(*args):
        return sorted(p["name"] for p in a.run("list", *args))
    assert listed("--min-size", "14216") == ["nogps.jpg", "photo.jpg"]
    assert listed("--min-size", "20K") == ["photo.jpg"]
    assert listed("--min-size", "1M") == []
    bad = a.run("list", "--min-size", "lots", json=False, check=False)
    assert bad.returncode == 64 and "--min-size" in bad.output, bad.output

    # Location comes from the indexer: wait for it (the photo.indexed events) before asking.
    h.wait_for(lambda: all(a.run("show", i)["media"].get("width") for i in ids.values()), h.WAIT, "the media indexer")
    assert listed("--with-location") == ["photo.jpg"]
    assert listed("--without-location") == ["nogps.jpg", "plain.png"]
    assert listed("--without-location", "--min-size", "10K") == ["nogps.jpg"]
    both = a.run("list", "--with-location", "--without-location", json=False, check=False)
    assert both.returncode == 64, both.output
    status, _, body = h.http_unix(a.socket, "GET", "/v1/photos?hasLocation=maybe")
    assert status == 400 and b"hasLocation" in body, body
    # A name outside a closed set is refused with the names there are.
    status, _, body = h.http_unix(a.socket, "GET", "/v1/photos?sort=biggest")
    assert status == 400 and b"invalidRequest" in body and b"capturedAt, importedAt, originalBytes or name" in body, body

    a.run("lock")
    st = a.run("status")
    assert "photoCount" not in st and "originalBytes" not in st, st
