"""Filters, compression in the vault and viewing without a plaintext file, through the CLI and a
real agent (issue 11 §2). Pixels are read back with the `vips` command (libvips itself), so the
checks are on real libvips output, independent of the agent's code."""
from __future__ import annotations

import os
import stat
import subprocess
from datetime import datetime
from pathlib import Path

import lfharness as h

MEDIA = Path(__file__).resolve().parents[1] / "LocafotoMediaTests" / "Fixtures"


def raw(node: h.Node, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """The CLI with binary standard output (no --json)."""
    return subprocess.run(node.cmd(*args, json=False), input=input, capture_output=True, env=h.clean_env(), timeout=120)


def vips_value(workdir: Path, op: str, jpeg: bytes, a: int, b: int) -> float:
    """`op` (min or max) of band a minus band b over every pixel, computed by the vips command."""
    src = workdir / "probe.jpg"
    src.write_bytes(jpeg)
    for band, name in ((a, "a.v"), (b, "b.v")):
        subprocess.run(["vips", "extract_band", str(src), str(workdir / name), str(band)], check=True)
    subprocess.run(["vips", "subtract", str(workdir / "a.v"), str(workdir / "b.v"), str(workdir / "d.v")], check=True)
    out = subprocess.run(["vips", op, str(workdir / "d.v")], check=True, capture_output=True, text=True).stdout
    return float(out.strip())


def indexed(node: h.Node, pid: str):
    d = node.run("show", pid)
    return d if d["media"].get("width") else None


def test_filter_adds_a_linked_copy_and_previews(make_node, workdir):
    a = make_node("a", name=h.unique("itfil"))
    r = a.run("import", str(MEDIA / "photo.jpg"), str(MEDIA / "photo.png"))
    ids = {Path(o["path"]).name: o["photo"] for o in r["imported"]}
    jpg = ids["photo.jpg"]
    h.wait_for(lambda: indexed(a, jpg), what="the media indexer")
    a.run("album", "create", "Trip")
    a.run("album", "add", "Trip", jpg)
    a.run("tag", "--add", "beach", jpg)

    made = a.run("filter", jpg, "--monochrome")
    assert len(made) == 1 and made[0]["original"] == jpg and made[0]["photo"], made
    copy = made[0]["photo"]
    d = a.run("show", copy)
    assert d["photo"]["derivedFrom"] == jpg and d["albums"] == ["Trip"] and d["photo"]["tags"] == ["beach"], d
    assert d["photo"]["format"] == "jpeg" and d["photo"]["name"] == "photo-monochrome.jpg", d
    original = a.run("show", jpg)
    assert d["photo"]["capturedAt"] == original["photo"]["capturedAt"], (d, original)
    assert "derivedFrom" not in original["photo"]

    # The original is unchanged (byte for byte, through standard output: no file written).
    out = raw(a, "export", jpg, "-")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (MEDIA / "photo.jpg").read_bytes()
    # The copy is grey in every pixel (R = G = B), and differs from the original.
    mono = raw(a, "export", copy, "-")
    assert mono.returncode == 0 and mono.stdout[:3] == b"\xff\xd8\xff", mono.stderr
    assert mono.stdout != out.stdout
    for x, y in ((0, 1), (1, 2)):
        assert vips_value(workdir, "max", mono.stdout, x, y) == 0 and vips_value(workdir, "min", mono.stdout, x, y) == 0
    # The check can fail: the original's channels differ.
    assert vips_value(workdir, "max", out.stdout, 0, 2) > 10

    # A preview of sepia to standard output changes nothing in the vault: R ≥ G ≥ B (up to what
    # JPEG's halved chroma resolution blurs at sharp edges of this real photo), on average clearly.
    count = len(a.run("list"))
    sepia = raw(a, "filter", jpg, "--sepia", "--preview", "-o", "-")
    assert sepia.returncode == 0, sepia.stderr
    for x, y in ((0, 1), (1, 2)):
        assert vips_value(workdir, "min", sepia.stdout, x, y) >= -16 and vips_value(workdir, "avg", sepia.stdout, x, y) > 8
    assert vips_value(workdir, "max", sepia.stdout, 0, 2) > 10  # warm, not grey
    preview = workdir / "p.jpg"
    a.run("filter", jpg, "--filter", "vintage", "--preview", "-o", str(preview), json=False)
    assert preview.read_bytes()[:3] == b"\xff\xd8\xff" and stat.S_IMODE(preview.stat().st_mode) == 0o600
    assert len(a.run("list")) == count

    # An unknown filter: a clear error that lists the names, nothing added.
    bad = a.run("filter", jpg, "--filter", "polaroid", check=False, json=False)
    assert bad.returncode == 64, bad.output
    assert "unknown filter 'polaroid'" in bad.output and "monochrome" in bad.output and "sepia" in bad.output, bad.output
    assert len(a.run("list")) == count
    names = [f["name"] for f in a.run("filter", "--list")]
    assert {"monochrome", "sepia", "vintage", "chrome"} <= set(names), names


def test_import_export_and_thumb_with_filters_and_stdout(make_node, workdir):
    a = make_node("a", name=h.unique("itfie"))
    r = a.run("import", "--filter", "noir", str(MEDIA / "photo.jpg"))
    noir = r["imported"][0]["photo"]
    rec = a.run("show", noir)["photo"]
    assert rec["name"] == "photo-noir.jpg" and rec["format"] == "jpeg", rec
    streamed = subprocess.run(a.cmd("import", "-", "--name", "cam.png", "--filter", "sepia"), input=(MEDIA / "photo.png").read_bytes(),
                              capture_output=True, env=h.clean_env(), timeout=60)
    assert streamed.returncode == 0, streamed.stderr
    import json
    s = json.loads(streamed.stdout)
    assert s["name"] == "cam-sepia.jpg" and s["format"] == "jpeg", s

    plain = a.run("import", str(MEDIA / "photo.jpg"))["imported"][0]["photo"]
    d = h.wait_for(lambda: indexed(a, plain), what="the media indexer")
    taken = datetime.fromisoformat(d["photo"]["capturedAt"].replace("Z", "+00:00")).timestamp()

    # export creates its folder (0700, parents too) and gives the file the capture time.
    target = workdir / "new" / "deeper"
    out = a.run("export", plain, str(target))
    assert stat.S_IMODE(target.stat().st_mode) == 0o700 and stat.S_IMODE((workdir / "new").stat().st_mode) == 0o700
    assert abs(Path(out["path"]).stat().st_mtime - taken) < 1, (Path(out["path"]).stat().st_mtime, taken)
    assert Path(out["path"]).read_bytes() == (MEDIA / "photo.jpg").read_bytes()
    faded = a.run("export", "--filter", "fade", plain, str(target))
    assert Path(faded["path"]).name == "photo-fade.jpg" and Path(faded["path"]).read_bytes() != (MEDIA / "photo.jpg").read_bytes()
    assert abs(Path(faded["path"]).stat().st_mtime - taken) < 1

    # To standard output: the photo, a filtered copy, the thumbnail; no file appears anywhere.
    before = set(os.listdir(a.home)) if a.home.exists() else set()
    assert raw(a, "export", plain, "-").stdout == (MEDIA / "photo.jpg").read_bytes()
    chrome = raw(a, "export", "--filter", "chrome", plain, "-")
    assert chrome.returncode == 0 and chrome.stdout[:3] == b"\xff\xd8\xff" and chrome.stdout != (MEDIA / "photo.jpg").read_bytes()
    thumb = h.wait_for(lambda: (lambda p: p.stdout if p.returncode == 0 else None)(raw(a, "thumb", plain, "-")), what="the thumbnail")
    assert thumb[:3] == b"\xff\xd8\xff" and len(thumb) < (MEDIA / "photo.jpg").stat().st_size
    after = set(os.listdir(a.home))
    assert after == before, after ^ before


def test_compress_into_an_album_and_in_place(make_node, workdir):
    a = make_node("a", name=h.unique("itcmp"))
    ids = [o["photo"] for o in a.run("import", str(MEDIA / "photo.jpg"), str(MEDIA / "photo.webp"))["imported"]]
    for pid in ids:
        h.wait_for(lambda: indexed(a, pid), what="the media indexer")
    a.run("album", "create", "Trip")
    a.run("album", "add", "Trip", *ids)
    count = len(a.run("list"))

    # A dry run changes nothing and puts the largest estimated gain first.
    dry = a.run("compress", "--album", "Trip", "--max-side", "300", "--dry-run")
    assert dry["dryRun"] and len(dry["photos"]) == 2, dry
    gains = [p.get("savedBytes", -1) for p in dry["photos"]]
    assert gains == sorted(gains, reverse=True), dry
    assert len(a.run("list")) == count

    # Into "Compressed – Trip": smaller copies, linked, metadata and dates kept; GPS on request.
    r = a.run("compress", "--album", "Trip", "--max-side", "300", "--quality", "60")
    assert r["album"] == "Compressed – Trip" and not r["replaced"], r
    done = [p for p in r["photos"] if "skipped" not in p]
    assert done and r["savedBytes"] > 0 and 0 < r["ratio"] < 1, r
    for p in done:
        assert p["afterBytes"] < p["beforeBytes"] and p["savedBytes"] == p["beforeBytes"] - p["afterBytes"], p
        copy = h.wait_for(lambda: indexed(a, p["photo"]), what="the indexer on the copy")
        orig = a.run("show", p["original"])
        assert copy["photo"]["derivedFrom"] == p["original"] and copy["albums"] == ["Compressed – Trip"], copy
        assert max(copy["media"]["width"], copy["media"]["height"]) == 300, copy
        assert copy["photo"]["capturedAt"] == orig["photo"]["capturedAt"]
        assert copy["media"]["hasLocation"] == orig["media"]["hasLocation"]
    gps = ids[0]
    assert a.run("show", gps)["media"]["hasLocation"] is True
    stripped = a.run("compress", gps, "--max-side", "200", "--strip-location", "--into", "NoGPS")
    c = h.wait_for(lambda: indexed(a, stripped["photos"][0]["photo"]), what="the indexer")
    assert c["media"]["hasLocation"] is False and c["albums"] == ["NoGPS"], c

    # Replacing needs a confirmation: refused without --yes off a terminal, nothing changed.
    refused = a.run("compress", gps, "--replace", check=False, json=False)
    assert refused.returncode == 64 and "--yes" in refused.output, refused.output
    a.run("show", gps)
    rep = a.run("compress", gps, "--replace", "--yes", "--max-side", "400")
    new = rep["photos"][0]["photo"]
    assert rep["replaced"] and new, rep
    assert a.run("show", gps, check=False, json=False).returncode == 66
    d = h.wait_for(lambda: indexed(a, new), what="the indexer")
    assert "Trip" in d["albums"] and max(d["media"]["width"], d["media"]["height"]) == 400, d

    # HEIC output: Debian 12's libvips encodes it (libheif with x265, set up by setup.sh).
    heifsave = "heifsave" in subprocess.run(["vips", "-l"], capture_output=True, text=True).stdout
    assert heifsave, "this libvips has no HEIF encoder: scripts/setup.sh installs libvips-dev, which brings libheif1 with x265"
    # A large, busy JPEG (noise, quality 95), so its compressed form is surely smaller.
    subprocess.run(["vips", "gaussnoise", str(workdir / "n.v"), "1200", "900"], check=True)
    subprocess.run(["vips", "copy", str(workdir / "n.v"), str(workdir / "noise.jpg[Q=95]")], check=True)
    big = a.run("import", str(workdir / "noise.jpg"))["imported"][0]["photo"]
    hc = a.run("compress", big, "--output-format", "heic", "--max-side", "300", "--into", "HEIC")
    assert hc["format"] == "heic" and "photo" in hc["photos"][0], hc
    assert a.run("show", hc["photos"][0]["photo"])["photo"]["format"] in ("heic", "heif"), hc


def test_export_to_stdout_streams_and_refuses_a_damaged_photo(make_node, workdir):
    a = make_node("a", name=h.unique("itstr"))
    # 40 MiB behind a JPEG signature (the vault sniffs, it does not decode): 40 chunks of 1 MiB.
    big = workdir / "big.jpg"
    big.write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(40 << 20))
    pid = a.run("import", str(big))["imported"][0]["photo"]
    out = raw(a, "export", pid, "-")
    assert out.returncode == 0, out.stderr
    assert out.stdout == big.read_bytes()
    # A damaged photo is an error before any byte is written (the whole file verifies first).
    victim = next(p for p in a.vault_photos.rglob(f"{pid}.loca"))
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 1
    victim.write_bytes(bytes(data))
    bad = raw(a, "export", pid, "-")
    assert bad.returncode != 0 and bad.stdout == b"", (bad.returncode, len(bad.stdout))
    assert b"damaged" in bad.stderr or b"corrupt" in bad.stderr or b"tag" in bad.stderr, bad.stderr
