#!/usr/bin/env python3
"""make-camera-roll.py - a phone's camera roll made from real photographs, for the benchmarks.

    python3 scripts/make-camera-roll.py OUT_DIR [--count 40] [--seed 24] [--heic-thumbnails N]
                                        [--jpeg-quality 90] [--heic-quality 75] [--grain 2.0]

Sources: the twelve nature photographs that Debian's mate-backgrounds ships
(/usr/share/backgrounds/mate/nature: water drops, leaves, grass, flowers, a ladybird, a dune, a
storm; 1280x1024 to 2560x1920 pixels, photographs, not drawings). Each photo of the roll is a
different crop of one of them (zoom 55-100 %, position and mirroring drawn from the seed),
scaled to 12 megapixels with Lanczos, with a faint luma grain (uniform, sigma about 2 levels: a
phone's sensor noise, which an upscaled wallpaper lacks and without which its JPEG would be half
a real one's size). With the default --count 40 (other counts keep the proportions):

  32 JPEGs, quality 90, 4:2:0: "Apple iPhone 12" (4032x3024) or "samsung SM-G991B" (4000x3000),
     EXIF as cameras write it: Make, Model, Software, DateTime, Orientation, DateTimeOriginal and
     -Digitized with OffsetTime and SubSec, ExposureTime, FNumber, ISO, ExposureProgram,
     MeteringMode, Flash, FocalLength (and 35 mm), lens, PixelX/YDimension, GPS for most of them;
     and in IFD1 an embedded JPEG thumbnail of 160x120 (120x160 for a portrait stored upright),
     except for 4 of them (as a photo saved by a messaging app). Portraits: some stored as
     4032x3024 with Orientation 6 (rotated 90 degrees clockwise for display, as phones do), some
     stored upright (3024x4032, Orientation 1).
  8 HEICs (iPhone 12, 4032x3024 or portrait 3024x4032) from `heif-enc` (libheif-examples;
     x265, -q 75, preset medium), its EXIF copied from an intermediate JPEG (no IFD1 thumbnail,
     as iPhones write HEIC): 4 with a 320-px thumbnail item (`heif-enc -t 320`, as iPhones write
     them) and 4 without (heif-enc 1.15 writes none unless -t is given: "default: off").

Every output is checked: exiftool reads its EXIF (camera, date, orientation, GPS as intended)
and, for a JPEG, whether IFD1 has a thumbnail and of what size (decoded with Pillow); heif-info
says whether a HEIC has its thumbnail item. The result is deterministic for a seed on a given
set of tools (Pillow, x265). Prints a summary: count per kind, total bytes.
Needs Pillow, piexif, heif-enc/heif-info, exiftool and mate-backgrounds (`scripts/setup.sh
--photos` installs them; scripts/demo.sh and scripts/bench.sh run it).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

SOURCE_DIR = Path("/usr/share/backgrounds/mate/nature")
SOURCES = ["Aqua.jpg", "Blinds.jpg", "Dune.jpg", "FreshFlower.jpg", "Garden.jpg", "GreenMeadow.jpg",
           "LadyBird.jpg", "RainDrops.jpg", "Storm.jpg", "TwoWings.jpg", "Wood.jpg", "YellowFlower.jpg"]

CAMERAS = {
    "iphone": {"make": "Apple", "model": "iPhone 12", "size": (4032, 3024), "software": "17.5.1",
               "fnumber": (8, 5), "focal": (21, 5), "focal35": 26,
               "lens_make": "Apple", "lens": "iPhone 12 back dual wide camera 4.2mm f/1.6"},
    "samsung": {"make": "samsung", "model": "SM-G991B", "size": (4000, 3000), "software": "G991BXXU9EWH2",
                "fnumber": (18, 10), "focal": (543, 100), "focal35": 26,
                "lens_make": None, "lens": None},
}
PLACES = [(48.8566, 2.3522, 35), (45.7640, 4.8357, 170), (43.2965, 5.3698, 12), (46.2044, 6.1432, 375),
          (44.8378, -0.5792, 6), (47.2184, -1.5536, 20)]


@dataclass
class Plan:
    index: int
    name: str
    kind: str                      # "jpeg" or "heic"
    camera: str
    source: str
    box: tuple[float, float, float, float]
    mirror: bool
    portrait: str                  # "" landscape, "rotated" (Orientation 6), "upright" (3024x4032)
    thumbnail: bool                # JPEG: IFD1 thumbnail; HEIC: thumbnail item
    gps: tuple[float, float, int] | None
    taken: datetime
    exposure: tuple[int, int]
    iso: int
    flash: int
    facts: dict = field(default_factory=dict)


def pick(rng: random.Random, n: int, k: int) -> set[int]:
    return set(rng.sample(range(n), k)) if k else set()


def plan_roll(count: int, seed: int, heic_thumbs: int | None) -> list[Plan]:
    rng = random.Random(seed)
    n_heic = round(count / 5)
    n_jpeg = count - n_heic
    n_jpeg_bare = round(n_jpeg / 8)
    if heic_thumbs is None:
        heic_thumbs = n_heic // 2
    if not 0 <= heic_thumbs <= n_heic:
        sys.exit(f"make-camera-roll: --heic-thumbnails must be 0..{n_heic}")
    kinds = ["heic"] * n_heic + ["jpeg"] * n_jpeg
    rng.shuffle(kinds)
    jpegs = [i for i, k in enumerate(kinds) if k == "jpeg"]
    heics = [i for i, k in enumerate(kinds) if k == "heic"]
    bare = {jpegs[j] for j in pick(rng, len(jpegs), n_jpeg_bare)}
    rotated = {jpegs[j] for j in pick(rng, len(jpegs), max(1, round(n_jpeg / 6)) if jpegs else 0)}
    upright = {jpegs[j] for j in pick(rng, len(jpegs), round(n_jpeg / 10)) if jpegs[j] not in rotated}
    upright |= {heics[j] for j in pick(rng, len(heics), round(n_heic / 4))}
    heic_with = {heics[j] for j in pick(rng, len(heics), heic_thumbs)}
    order = SOURCES[:]
    rng.shuffle(order)
    when = datetime(2026, 6, 14, 9, 12, 3)
    number = 1000 + rng.randrange(7000)
    plans = []
    for i, kind in enumerate(kinds):
        camera = "iphone" if kind == "heic" or rng.random() < 0.6 else "samsung"
        portrait = "rotated" if i in rotated else "upright" if i in upright else ""
        source = order[i % len(order)]
        sw, sh = source_size(source)
        aspect = 3 / 4 if portrait else 4 / 3
        fw, fh = (sw, sw / aspect) if sw / sh < aspect else (sh * aspect, sh)  # the largest crop
        zoom = rng.uniform(0.55, 1.0)
        cw, ch = fw * zoom, fh * zoom
        x0, y0 = rng.uniform(0, sw - cw), rng.uniform(0, sh - ch)
        when += timedelta(seconds=rng.choice([rng.randrange(2, 40), rng.randrange(60, 1800), rng.randrange(1800, 10800)]))
        number += 1
        if camera == "samsung":
            name = when.strftime("%Y%m%d_%H%M%S") + ".jpg"
        else:
            name = f"IMG_{number:04d}." + ("HEIC" if kind == "heic" else "JPG")
        place = PLACES[rng.randrange(len(PLACES))]
        gps = (place[0] + rng.uniform(-0.02, 0.02), place[1] + rng.uniform(-0.02, 0.02), place[2]) \
            if rng.random() < 0.7 else None
        plans.append(Plan(i, name, kind, camera, source, (x0, y0, x0 + cw, y0 + ch), rng.random() < 0.5, portrait,
                          i in heic_with if kind == "heic" else i not in bare, gps, when,
                          (1, rng.choice([30, 60, 120, 250, 500, 1000, 2000])), rng.choice([25, 32, 50, 64, 100, 200, 400, 800]),
                          rng.choice([16, 16, 16, 24, 9])))
    return plans


_sizes: dict[str, tuple[int, int]] = {}


def source_size(name: str) -> tuple[int, int]:
    from PIL import Image
    if name not in _sizes:
        with Image.open(SOURCE_DIR / name) as im:
            _sizes[name] = im.size
    return _sizes[name]


def rational(x: float, den: int) -> tuple[int, int]:
    return (round(x * den), den)


def dms(value: float) -> tuple[tuple[int, int], ...]:
    value = abs(value)
    d = int(value)
    m = int((value - d) * 60)
    s = (value - d - m / 60) * 3600
    return ((d, 1), (m, 1), (round(s * 100), 100))


def exif_bytes(p: Plan, width: int, height: int, orientation: int, thumbnail: bytes | None) -> bytes:
    import piexif
    cam = CAMERAS[p.camera]
    stamp = p.taken.strftime("%Y:%m:%d %H:%M:%S").encode()
    zeroth = {
        piexif.ImageIFD.Make: cam["make"].encode(), piexif.ImageIFD.Model: cam["model"].encode(),
        piexif.ImageIFD.Orientation: orientation, piexif.ImageIFD.XResolution: (72, 1),
        piexif.ImageIFD.YResolution: (72, 1), piexif.ImageIFD.ResolutionUnit: 2,
        piexif.ImageIFD.Software: cam["software"].encode(), piexif.ImageIFD.DateTime: stamp,
        piexif.ImageIFD.YCbCrPositioning: 1,
    }
    exif = {
        piexif.ExifIFD.ExposureTime: p.exposure, piexif.ExifIFD.FNumber: cam["fnumber"],
        piexif.ExifIFD.ExposureProgram: 2, piexif.ExifIFD.ISOSpeedRatings: p.iso,
        piexif.ExifIFD.ExifVersion: b"0232", piexif.ExifIFD.DateTimeOriginal: stamp,
        piexif.ExifIFD.DateTimeDigitized: stamp, piexif.ExifIFD.OffsetTime: b"+02:00",
        piexif.ExifIFD.OffsetTimeOriginal: b"+02:00", piexif.ExifIFD.SubSecTimeOriginal: f"{p.index * 37 % 1000:03d}".encode(),
        piexif.ExifIFD.ShutterSpeedValue: rational(math.log2(p.exposure[1] / p.exposure[0]), 1000),
        piexif.ExifIFD.ApertureValue: rational(2 * math.log2(cam["fnumber"][0] / cam["fnumber"][1]), 1000),
        piexif.ExifIFD.ExposureBiasValue: (0, 1), piexif.ExifIFD.MeteringMode: 5, piexif.ExifIFD.Flash: p.flash,
        piexif.ExifIFD.FocalLength: cam["focal"], piexif.ExifIFD.ColorSpace: 1,
        piexif.ExifIFD.PixelXDimension: width, piexif.ExifIFD.PixelYDimension: height,
        piexif.ExifIFD.SensingMethod: 2, piexif.ExifIFD.SceneType: b"\x01", piexif.ExifIFD.ExposureMode: 0,
        piexif.ExifIFD.WhiteBalance: 0, piexif.ExifIFD.FocalLengthIn35mmFilm: cam["focal35"],
        piexif.ExifIFD.SceneCaptureType: 0,
    }
    if cam["lens"]:
        exif[piexif.ExifIFD.LensMake] = cam["lens_make"].encode()
        exif[piexif.ExifIFD.LensModel] = cam["lens"].encode()
    d: dict = {"0th": zeroth, "Exif": exif, "GPS": {}, "1st": {}, "thumbnail": None}
    if p.gps:
        lat, lon, alt = p.gps
        d["GPS"] = {
            piexif.GPSIFD.GPSVersionID: (2, 2, 0, 0),
            piexif.GPSIFD.GPSLatitudeRef: b"N" if lat >= 0 else b"S", piexif.GPSIFD.GPSLatitude: dms(lat),
            piexif.GPSIFD.GPSLongitudeRef: b"E" if lon >= 0 else b"W", piexif.GPSIFD.GPSLongitude: dms(lon),
            piexif.GPSIFD.GPSAltitudeRef: 0, piexif.GPSIFD.GPSAltitude: (alt * 100, 100),
            piexif.GPSIFD.GPSTimeStamp: (((p.taken.hour - 2) % 24, 1), (p.taken.minute, 1), (p.taken.second, 1)),
            piexif.GPSIFD.GPSDateStamp: p.taken.strftime("%Y:%m:%d").encode(),
        }
    if thumbnail is not None:
        d["1st"] = {piexif.ImageIFD.Compression: 6, piexif.ImageIFD.XResolution: (72, 1),
                    piexif.ImageIFD.YResolution: (72, 1), piexif.ImageIFD.ResolutionUnit: 2}
        d["thumbnail"] = thumbnail
    return piexif.dump(d)


def render(p: Plan, seed: int, grain: float):
    """The photo's pixels as stored: upright, or turned for Orientation 6."""
    from PIL import Image, ImageChops
    w, h = CAMERAS[p.camera]["size"]
    size = (h, w) if p.portrait else (w, h)
    with Image.open(SOURCE_DIR / p.source) as src:
        im = src.convert("RGB").resize(size, Image.Resampling.LANCZOS, box=p.box)
    if p.mirror:
        im = im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if p.portrait == "rotated":
        # Stored as the sensor saw it: the upright portrait turned 90 degrees counter-clockwise,
        # which Orientation 6 (turn 90 degrees clockwise to display) undoes.
        im = im.transpose(Image.Transpose.ROTATE_90)
    if grain > 0:
        noise = random.Random(seed * 100003 + p.index).randbytes(im.width * im.height)
        a = grain * math.sqrt(3)       # uniform on [-a, a] has standard deviation a / sqrt(3)
        lut = [max(0, min(255, 128 + round((v - 127.5) / 127.5 * a))) for v in range(256)]
        n = Image.frombytes("L", im.size, noise).point(lut)
        im = ImageChops.add(im, Image.merge("RGB", (n, n, n)), 1.0, -128)
    return im


def make_one(p: Plan, out: Path, tmp: Path, a: argparse.Namespace) -> None:
    from PIL import Image
    im = render(p, a.seed, a.grain)
    dest = out / p.name
    if p.kind == "jpeg":
        thumb = None
        if p.thumbnail:
            t = im.resize((160, 120) if im.width > im.height else (120, 160), Image.Resampling.LANCZOS, reducing_gap=3.0)
            b = io.BytesIO()
            t.save(b, "JPEG", quality=80)
            thumb = b.getvalue()
        ex = exif_bytes(p, im.width, im.height, 6 if p.portrait == "rotated" else 1, thumb)
        im.save(dest, "JPEG", quality=a.jpeg_quality, subsampling=2, exif=ex)
        return
    inter = tmp / f"{p.index}.jpg"
    im.save(inter, "JPEG", quality=97, subsampling=0, exif=exif_bytes(p, im.width, im.height, 1, None))
    cmd = ["heif-enc", "-q", str(a.heic_quality), "-p", "preset=medium", "-o", str(dest), str(inter)]
    if p.thumbnail:
        cmd[1:1] = ["-t", "320"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    inter.unlink()
    if r.returncode != 0 or not dest.exists():
        sys.exit(f"make-camera-roll: {' '.join(cmd)} failed: {r.stderr.strip()}")


def heif_thumbnails(path: Path) -> tuple[tuple[int, int], list[str]]:
    text = subprocess.run(["heif-info", str(path)], capture_output=True, text=True, check=True).stdout
    size, thumbs = (0, 0), []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("image:") and "primary" in s:
            w, h = s.split()[1].split("x")
            size = (int(w), int(h))
        elif s.startswith("thumbnail:"):
            thumbs.append(s.split()[1])
    return size, thumbs


def verify(plans: list[Plan], out: Path) -> None:
    from PIL import Image
    import piexif
    tags = ["-Make", "-Model", "-Orientation", "-DateTimeOriginal", "-GPSLatitude", "-ExposureTime", "-FNumber",
            "-ISO", "-ThumbnailLength", "-ImageWidth", "-ImageHeight"]
    r = subprocess.run(["exiftool", "-j", "-n", *tags, *(str(out / p.name) for p in plans)],
                       capture_output=True, text=True, check=True)
    facts = {Path(f["SourceFile"]).name: f for f in json.loads(r.stdout)}
    bad = []
    for p in plans:
        f = facts[p.name]
        cam = CAMERAS[p.camera]
        w, h = cam["size"]
        want = (h, w) if p.portrait == "upright" else (w, h)
        problems = []
        if (f.get("ImageWidth"), f.get("ImageHeight")) != want:
            problems.append(f"size {f.get('ImageWidth')}x{f.get('ImageHeight')}, not {want[0]}x{want[1]}")
        if f.get("Make") != cam["make"] or f.get("Model") != cam["model"]:
            problems.append(f"camera {f.get('Make')} {f.get('Model')}")
        if f.get("DateTimeOriginal") != p.taken.strftime("%Y:%m:%d %H:%M:%S"):
            problems.append(f"DateTimeOriginal {f.get('DateTimeOriginal')}")
        if "ExposureTime" not in f or "FNumber" not in f or "ISO" not in f:
            problems.append("no exposure fields")
        if ("GPSLatitude" in f) != (p.gps is not None):
            problems.append("GPS " + ("missing" if p.gps else "unexpected"))
        orientation = 6 if p.portrait == "rotated" else 1
        if f.get("Orientation", 1) != orientation:
            problems.append(f"Orientation {f.get('Orientation')}, not {orientation}")
        if p.kind == "jpeg":
            thumb = piexif.load(str(out / p.name)).get("thumbnail")
            if p.thumbnail:
                tsize = Image.open(io.BytesIO(thumb)).size if thumb else None
                wanted = (120, 160) if p.portrait == "upright" else (160, 120)
                if not f.get("ThumbnailLength") or tsize != wanted:
                    problems.append(f"EXIF thumbnail {tsize}, not {wanted}")
                p.facts["thumbnail"] = f"IFD1 {tsize[0]}x{tsize[1]}, {len(thumb)} bytes" if tsize else "?"
            elif thumb or f.get("ThumbnailLength"):
                problems.append("an EXIF thumbnail it should not have")
        else:
            size, thumbs = heif_thumbnails(out / p.name)
            if size != want:
                problems.append(f"heif-info size {size}")
            if p.thumbnail and thumbs != [f"{320}x{240}" if want[0] > want[1] else "240x320"]:
                problems.append(f"thumbnail items {thumbs}, wanted one of 320 px")
            if not p.thumbnail and thumbs:
                problems.append(f"thumbnail items {thumbs}, wanted none")
            p.facts["thumbnail"] = f"item {thumbs[0]}" if thumbs else ""
        if problems:
            bad.append(f"{p.name}: " + "; ".join(problems))
    if bad:
        sys.exit("make-camera-roll: outputs are not as intended:\n  " + "\n  ".join(bad))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--heic-thumbnails", type=int, default=None,
                    help="how many HEICs get a 320-px thumbnail item (default: half of them)")
    ap.add_argument("--jpeg-quality", type=int, default=90)
    ap.add_argument("--heic-quality", type=int, default=75)
    ap.add_argument("--grain", type=float, default=2.0, help="luma grain, standard deviation in 8-bit levels")
    ap.add_argument("--jobs", type=int, default=2, help="photos made at once")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    a = ap.parse_args()
    if a.count < 1:
        ap.error("--count must be at least 1")
    missing = [t for t in ("heif-enc", "heif-info", "exiftool") if not shutil.which(t)]
    if missing:
        sys.exit(f"make-camera-roll: {', '.join(missing)} not found (apt-get install libheif-examples libimage-exiftool-perl)")
    try:
        import PIL  # noqa: F401
        import piexif  # noqa: F401
    except ImportError as e:
        sys.exit(f"make-camera-roll: {e} (pip install Pillow piexif)")
    if not all((SOURCE_DIR / s).exists() for s in SOURCES):
        sys.exit(f"make-camera-roll: the photographs in {SOURCE_DIR} are missing (apt-get install mate-backgrounds)")

    plans = plan_roll(a.count, a.seed, a.heic_thumbnails)
    a.out.mkdir(parents=True, exist_ok=True)
    if any(a.out.iterdir()):
        sys.exit(f"make-camera-roll: {a.out} is not empty")
    with tempfile.TemporaryDirectory(prefix="camera-roll.") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = [pool.submit(make_one, p, a.out, Path(tmp), a) for p in plans]
            for fut in futures:
                fut.result()
    verify(plans, a.out)

    kinds: dict[str, list[int]] = {}
    for p in plans:
        size = (a.out / p.name).stat().st_size
        if p.kind == "jpeg":
            k = "JPEG with an EXIF thumbnail" if p.thumbnail else "JPEG without a thumbnail"
        else:
            k = "HEIC with a thumbnail item" if p.thumbnail else "HEIC without a thumbnail item"
        kinds.setdefault(k, []).append(size)
        if not a.quiet:
            w, h = CAMERAS[p.camera]["size"]
            dims = f"{h}x{w}" if p.portrait == "upright" else f"{w}x{h}"
            print(f"  {p.name:22} {p.kind.upper():4} {dims:9} {size / 2**20:5.2f} MiB  {p.source:16} "
                  f"{'portrait (Orientation 6)' if p.portrait == 'rotated' else 'portrait' if p.portrait else 'landscape':24} "
                  f"{'GPS' if p.gps else '   '}  {p.facts.get('thumbnail', '')}")
    total = sum(sum(v) for v in kinds.values())
    print(f"camera roll in {a.out} (seed {a.seed}): {len(plans)} photos, {total} bytes ({total / 2**20:.1f} MiB); "
          + "; ".join(f"{len(v)} {k} (mean {sum(v) / len(v) / 2**20:.2f} MiB)" for k, v in sorted(kinds.items()))
          + f"; {sum(1 for p in plans if p.portrait)} portrait ({sum(1 for p in plans if p.portrait == 'rotated')} "
          f"with Orientation 6), {sum(1 for p in plans if p.gps)} with GPS")


if __name__ == "__main__":
    main()
