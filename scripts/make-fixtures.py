#!/usr/bin/env python3
"""Makes the small real image fixtures of Tests/LocafotoFormatsTests/Fixtures.

    pip install pillow pillow-heif
    python3 scripts/make-fixtures.py

Images are drawn deterministically (no randomness); encoders may still differ slightly
between library versions, which does not matter: the tests only depend on each file being
a real image of its format (sniffing, vault round trips compare bytes with the file itself).
Every file is kept well under 20 KB.
"""

import os
import sys

from PIL import Image, ImageDraw, features

try:
    import pillow_heif
except ImportError:  # pragma: no cover
    sys.exit("pillow-heif is required: pip install pillow pillow-heif")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "LocafotoFormatsTests", "Fixtures")
LIMIT = 20 * 1024


def picture(width=48, height=32):
    """A small gradient with a few shapes, so encoders have something real to compress."""
    img = Image.new("RGB", (width, height))
    px = img.load()
    for y in range(height):
        for x in range(width):
            px[x, y] = (x * 255 // (width - 1), y * 255 // (height - 1), (x * y) % 256)
    draw = ImageDraw.Draw(img)
    draw.rectangle((4, 4, 18, 14), fill=(250, 250, 250))
    draw.ellipse((24, 10, 42, 28), fill=(20, 90, 200))
    return img


def main():
    os.makedirs(OUT, exist_ok=True)
    img = picture()
    made = []

    def save(name, **kwargs):
        path = os.path.join(OUT, name)
        img_to_save = kwargs.pop("image", img)
        img_to_save.save(path, **kwargs)
        made.append(path)

    save("sample.jpg", format="JPEG", quality=80)
    save("sample.png", format="PNG", optimize=True)
    save("sample.gif", format="GIF", image=img.convert("P", palette=Image.Palette.ADAPTIVE, colors=32))
    save("sample.webp", format="WEBP", quality=80)
    save("sample.tiff", format="TIFF")  # little-endian "II*\0" (Pillow's default)
    # Big-endian TIFF ("MM\0*"): Pillow writes little-endian only, so write a minimal
    # uncompressed 2x2 RGB baseline TIFF by hand (valid per TIFF 6.0).
    made.append(write_big_endian_tiff(os.path.join(OUT, "sample-be.tiff")))

    heif_img = picture(64, 48)
    pillow_heif.register_heif_opener()
    path = os.path.join(OUT, "sample.heic")
    heif_img.save(path, format="HEIF", quality=50)
    made.append(path)

    if features.check("avif"):  # Pillow >= 11.3 wheels include libavif
        path = os.path.join(OUT, "sample.avif")
        picture(64, 48).save(path, format="AVIF", quality=50)
        made.append(path)

    # A PNG with a misleading extension: sniffing must ignore extensions.
    with open(os.path.join(OUT, "sample.png"), "rb") as f:
        png = f.read()
    path = os.path.join(OUT, "png-renamed.jpg")
    with open(path, "wb") as f:
        f.write(png)
    made.append(path)

    # Not an image.
    path = os.path.join(OUT, "not-an-image.txt")
    with open(path, "w") as f:
        f.write("This is a plain text file, not a photo.\n")
    made.append(path)

    for p in made:
        size = os.path.getsize(p)
        if size >= LIMIT:
            sys.exit(f"{p} is {size} bytes; fixtures must stay under {LIMIT}")
        print(f"{os.path.relpath(p, ROOT)}: {size} bytes")


def write_big_endian_tiff(path):
    import struct

    width, height = 2, 2
    pixels = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
    entries = [
        (256, 3, 1, width),            # ImageWidth
        (257, 3, 1, height),           # ImageLength
        (258, 3, 3, None),             # BitsPerSample -> offset to 8,8,8
        (259, 3, 1, 1),                # Compression: none
        (262, 3, 1, 2),                # PhotometricInterpretation: RGB
        (273, 4, 1, None),             # StripOffsets
        (277, 3, 1, 3),                # SamplesPerPixel
        (278, 3, 1, height),           # RowsPerStrip
        (279, 4, 1, len(pixels)),      # StripByteCounts
    ]
    ifd_offset = 8
    ifd_size = 2 + 12 * len(entries) + 4
    bps_offset = ifd_offset + ifd_size
    data_offset = bps_offset + 6
    out = bytearray(b"MM\x00\x2a" + struct.pack(">I", ifd_offset))
    out += struct.pack(">H", len(entries))
    for tag, typ, count, value in entries:
        if tag == 258:
            value = bps_offset
            out += struct.pack(">HHII", tag, typ, count, value)
        elif tag == 273:
            out += struct.pack(">HHII", tag, typ, count, data_offset)
        elif typ == 3:
            out += struct.pack(">HHIHH", tag, typ, count, value, 0)
        else:
            out += struct.pack(">HHII", tag, typ, count, value)
    out += struct.pack(">I", 0)
    out += struct.pack(">HHH", 8, 8, 8)
    out += pixels
    with open(path, "wb") as f:
        f.write(out)
    return path


if __name__ == "__main__":
    main()
