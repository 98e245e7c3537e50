#!/usr/bin/env python3
"""Makes the real image fixtures of Tests/LocafotoMediaTests/Fixtures (photos WITH EXIF).

    pip install pillow pillow-heif piexif
    python3 scripts/make-media-fixtures.py

Every photo is drawn deterministically (no randomness, fixed EXIF), so re-running the script
with the same library versions gives the same bytes; other versions of the encoders may give
slightly different bytes, which the tests do not depend on (they check dimensions, metadata
and structure, never exact encoder output). Every file is kept under 60 KB (checked).

Files (the "stored" size is the pixel grid in the file; EXIF Orientation 6 = rotate 90° CW to
display, so these photos DISPLAY as 800x1200 portraits):

  photo.jpg        1200x800 stored, EXIF: Make/Model, DateTimeOriginal, Orientation=6, GPS
  photo.png        1200x800 stored, the same EXIF in an eXIf chunk
  photo.webp       1200x800 stored, the same EXIF in an EXIF chunk (extended format, VP8X)
  photo.heic       displayed 800x1200: pillow-heif writes the orientation as an irot transform
                   (applied on decode by libheif); the Exif item (Make/Model/DateTimeOriginal/
                   GPS) still says Orientation=6, as iPhone photos do: not to be applied again
  nogps.jpg        640x480, EXIF Make/Model/DateTimeOriginal, Orientation=1, no GPS
  plain.png        640x480, no EXIF at all
  small.jpg        64x48 with the full EXIF (GPS): small enough to try every truncation
  photo.tiff       16x16 uncompressed RGB, written by hand (little-endian TIFF): Make/Model,
                   Orientation=6 in IFD0, DateTimeOriginal in the EXIF IFD, a GPS IFD

Embedded thumbnails (previews and vault thumbnails take them instead of decoding the photo):
  thumb.jpg        1200x800 stored, Orientation=6, an EXIF IFD1 thumbnail of 120x80 that is
                   SOLID RED (the photo has no such red): a preview from the thumbnail is red
                   and 80x120 (turned like the photo), one decoded from the photo is not
  upright.jpg      1200x800, Orientation=1, the same solid red 120x80 EXIF thumbnail: offered
                   byte for byte as the preview, without a decoder
  letterbox.jpg    1600x900, an EXIF thumbnail of 160x120 (4:3, a letterboxed 16:9): not the
                   same picture, not used
  thumb.heic       1200x800 with a 120x80 thumbnail item (`heif-enc -t 120`)
  thumb320.heic    1600x1200 with a 320x240 thumbnail item (`heif-enc -t 320`), as iPhones write
  nothumb.heic     1600x1000 (1.6 megapixels) without a thumbnail item: no cheap preview
`python3 scripts/make-media-fixtures.py thumb.jpg letterbox.jpg` writes only the files named.
"""

import io
import os
import struct
import subprocess
import sys
import tempfile

from PIL import Image, ImageDraw

try:
    import piexif
    import pillow_heif
except ImportError:  # pragma: no cover
    sys.exit("pillow-heif and piexif are required: pip install pillow pillow-heif piexif")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "LocafotoMediaTests", "Fixtures")
LIMIT = 60 * 1024

MAKE = b"Locafoto"
MODEL = b"TestCam 1"
DATE = b"2024:05:01 10:00:00"
# 48°51'30.24" N, 2°17'40.2" E (Paris), 35 m.
GPS = {
    piexif.GPSIFD.GPSVersionID: (2, 3, 0, 0),
    piexif.GPSIFD.GPSLatitudeRef: b"N",
    piexif.GPSIFD.GPSLatitude: ((48, 1), (51, 1), (3024, 100)),
    piexif.GPSIFD.GPSLongitudeRef: b"E",
    piexif.GPSIFD.GPSLongitude: ((2, 1), (17, 1), (402, 10)),
    piexif.GPSIFD.GPSAltitudeRef: 0,
    piexif.GPSIFD.GPSAltitude: (35, 1),
}


def exif(orientation=6, gps=True):
    d = {
        "0th": {
            piexif.ImageIFD.Make: MAKE,
            piexif.ImageIFD.Model: MODEL,
            piexif.ImageIFD.Orientation: orientation,
            piexif.ImageIFD.Software: b"make-media-fixtures.py",
        },
        "Exif": {
            piexif.ExifIFD.DateTimeOriginal: DATE,
            piexif.ExifIFD.DateTimeDigitized: DATE,
        },
        "GPS": dict(GPS) if gps else {},
        "1st": {},
        "thumbnail": None,
    }
    return piexif.dump(d)  # starts with b"Exif\0\0"


def picture(width, height):
    """Smooth gradients and a few shapes; an arrow pointing to the top of the stored grid."""
    grad_x = Image.linear_gradient("L").rotate(90).resize((width, height))
    grad_y = Image.linear_gradient("L").resize((width, height))
    img = Image.merge("RGB", (grad_x, grad_y, Image.new("L", (width, height), 96)))
    d = ImageDraw.Draw(img)
    s = max(1, min(width, height) // 16)
    d.rectangle((s, s, 4 * s, 3 * s), fill=(250, 250, 250))
    d.ellipse((width - 6 * s, height - 6 * s, width - s, height - s), fill=(20, 90, 200))
    cx = width // 2
    d.polygon([(cx, s), (cx - 2 * s, 4 * s), (cx + 2 * s, 4 * s)], fill=(200, 30, 30))
    return img


def png_with_exif(img, raw_exif):
    """Pillow writes an eXIf chunk (TIFF data, without the "Exif\\0\\0" prefix)."""
    buf = io.BytesIO()
    img.save(buf, "PNG", exif=raw_exif, optimize=True)
    return buf.getvalue()


def tiff_with_exif(width, height):
    """A baseline TIFF with IFD0 (image + Make/Model/Orientation), an EXIF IFD and a GPS IFD.

    Pillow cannot write a GPS IFD into TIFF, hence this small hand-written layout:
    header, IFD0, EXIF IFD, GPS IFD (each followed by its out-of-line values), pixels.
    """
    SHORT, LONG, ASCII, RATIONAL, BYTE = 3, 4, 2, 5, 1
    size = {BYTE: 1, ASCII: 1, SHORT: 2, LONG: 4, RATIONAL: 8}

    def rationals(*pairs):
        return b"".join(struct.pack("<II", a, b) for a, b in pairs)

    def entry(tag, typ, value):
        if typ == SHORT:
            raw = b"".join(struct.pack("<H", v) for v in value)
        elif typ == LONG:
            raw = b"".join(struct.pack("<I", v) for v in value)
        elif typ == ASCII:
            raw = value + b"\0"
        elif typ == RATIONAL:
            raw = rationals(*value)
        else:
            raw = bytes(value)
        return (tag, typ, len(raw) // size[typ], raw)

    def block_size(entries):
        extra = sum(len(e[3]) + (len(e[3]) & 1) for e in entries if len(e[3]) > 4)
        return 2 + 12 * len(entries) + 4 + extra

    def pack(entries, at):
        entries = sorted(entries)
        head = struct.pack("<H", len(entries))
        data = b""
        data_at = at + 2 + 12 * len(entries) + 4
        for tag, typ, count, raw in entries:
            if len(raw) <= 4:
                head += struct.pack("<HHI", tag, typ, count) + raw.ljust(4, b"\0")
            else:
                head += struct.pack("<HHII", tag, typ, count, data_at + len(data))
                data += raw + (b"\0" if len(raw) & 1 else b"")
        return head + struct.pack("<I", 0) + data

    exif_ifd = [entry(0x9003, ASCII, DATE)]
    gps_ifd = [
        entry(0, BYTE, [2, 3, 0, 0]), entry(1, ASCII, b"N"), entry(2, RATIONAL, [(48, 1), (51, 1), (3024, 100)]),
        entry(3, ASCII, b"E"), entry(4, RATIONAL, [(2, 1), (17, 1), (402, 10)]),
    ]
    pixels = picture(width, height).tobytes()

    def ifd0(exif_at, gps_at, pixels_at):
        return [
            entry(256, SHORT, [width]), entry(257, SHORT, [height]), entry(258, SHORT, [8, 8, 8]),
            entry(259, SHORT, [1]), entry(262, SHORT, [2]), entry(271, ASCII, MAKE), entry(272, ASCII, MODEL),
            entry(273, LONG, [pixels_at]), entry(274, SHORT, [6]), entry(277, SHORT, [3]),
            entry(278, SHORT, [height]), entry(279, LONG, [len(pixels)]),
            entry(34665, LONG, [exif_at]), entry(34853, LONG, [gps_at]),
        ]

    exif_at = 8 + block_size(ifd0(0, 0, 0))
    gps_at = exif_at + block_size(exif_ifd)
    pixels_at = gps_at + block_size(gps_ifd)
    out = b"II*\0" + struct.pack("<I", 8)
    out += pack(ifd0(exif_at, gps_at, pixels_at), 8)
    out += pack(exif_ifd, exif_at) + pack(gps_ifd, gps_at)
    assert len(out) == pixels_at
    return out + pixels


ONLY = set(sys.argv[1:])


def write(name, data):
    if ONLY and name not in ONLY:
        return
    assert len(data) < LIMIT, f"{name} is {len(data)} bytes, over {LIMIT}"
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")


def main():
    os.makedirs(OUT, exist_ok=True)
    big = picture(1200, 800)

    buf = io.BytesIO()
    big.save(buf, "JPEG", quality=70, exif=exif())
    write("photo.jpg", buf.getvalue())

    # PNG: palette-quantised so that a 1200x800 image stays small (still a real PNG).
    write("photo.png", png_with_exif(big.quantize(64, dither=Image.Dither.NONE), exif()))

    buf = io.BytesIO()
    big.save(buf, "WEBP", quality=60, method=6, exif=exif())
    write("photo.webp", buf.getvalue())

    pillow_heif.register_heif_opener()
    buf = io.BytesIO()
    big.save(buf, "HEIF", quality=40, exif=exif())
    write("photo.heic", buf.getvalue())

    mid = picture(640, 480)
    buf = io.BytesIO()
    mid.save(buf, "JPEG", quality=70, exif=exif(orientation=1, gps=False))
    write("nogps.jpg", buf.getvalue())

    write("plain.png", png_with_exif(mid.quantize(64, dither=Image.Dither.NONE), b""))

    buf = io.BytesIO()
    picture(64, 48).save(buf, "JPEG", quality=80, exif=exif())
    write("small.jpg", buf.getvalue())

    write("photo.tiff", tiff_with_exif(16, 16))

    write("thumb.jpg", jpeg_with_thumbnail(big, Image.new("RGB", (120, 80), (255, 0, 0)), orientation=6))
    write("upright.jpg", jpeg_with_thumbnail(big, Image.new("RGB", (120, 80), (255, 0, 0)), orientation=1))
    write("letterbox.jpg", jpeg_with_thumbnail(picture(1600, 900), picture(160, 120), orientation=1))
    write("thumb.heic", heif_enc(big, thumbnail=120))
    write("thumb320.heic", heif_enc(picture(1600, 1200), thumbnail=320))
    write("nothumb.heic", heif_enc(picture(1600, 1000), thumbnail=None))


def jpeg_with_thumbnail(img, thumb, orientation):
    """A JPEG whose EXIF IFD1 carries `thumb` (as cameras write it: a small baseline JPEG)."""
    t = io.BytesIO()
    thumb.save(t, "JPEG", quality=80)
    d = piexif.load(exif(orientation=orientation, gps=False))
    d["thumbnail"] = t.getvalue()
    d["1st"] = {piexif.ImageIFD.Compression: 6}
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=60, exif=piexif.dump(d))
    return buf.getvalue()


def heif_enc(img, thumbnail):
    """libheif's heif-enc (Debian libheif-examples), which writes a thumbnail item on request."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in.png"), os.path.join(d, "out.heic")
        img.save(src)
        args = ["heif-enc", "-q", "30", "-o", out, src]
        if thumbnail:
            args[1:1] = ["-t", str(thumbnail)]
        subprocess.run(args, check=True, capture_output=True)
        info = subprocess.run(["heif-info", out], check=True, capture_output=True, text=True).stdout
        assert ("thumbnail:" in info) == bool(thumbnail), info
        with open(out, "rb") as f:
            return f.read()


if __name__ == "__main__":
    main()
