#!/usr/bin/env bash
# bench-thumbnails.sh - how long LocafotoMedia takes per photo (a benchmark, not a test).
#
#   scripts/bench-thumbnails.sh [COUNT]        # default 100 photos
#
# Makes COUNT photos of 12 MP (4000x3000 JPEG, quality 92, ~4-5 MB each: photo-like noise over
# gradients, with EXIF incl. GPS, every other one with orientation 6) under
# ${BENCH_DIR:-/tmp/locafoto-bench-photos} (kept for reruns; needs python3 with pillow, numpy
# and piexif), then runs the env-gated Swift Testing suite ThumbnailBenchmark, which loads them
# into memory and prints ms/photo for Media.thumbnail (320 px, q80), Media.metadata,
# Media.compress (seed 004: 1500 px, q75) and Media.strippingLocation, one photo at a time,
# plus thumbnail throughput with one thread per core. For reference it also times libvips'
# own CLI, vipsthumbnail, on the same files when installed.
#
# PACKAGE_DIR (default: this repository) is the Swift package to build and run.
set -euo pipefail

COUNT=${1:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACKAGE_DIR=${PACKAGE_DIR:-$ROOT}
BENCH_DIR=${BENCH_DIR:-/tmp/locafoto-bench-photos}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

have=$( (find "$BENCH_DIR" -maxdepth 1 -name 'photo-*.jpg' 2>/dev/null || true) | wc -l)
if [ "$have" -ne "$COUNT" ]; then
    rm -rf "$BENCH_DIR"
    mkdir -p "$BENCH_DIR"
    echo "bench: making $COUNT photos of 12 MP in $BENCH_DIR ..."
    python3 - "$BENCH_DIR" "$COUNT" <<'PY'
import io, sys
import numpy as np
import piexif
from PIL import Image

out, count = sys.argv[1], int(sys.argv[2])
W, H, M = 4000, 3000, 64
rng = np.random.default_rng(1234)
yy, xx = np.mgrid[0:H + M, 0:W + M].astype(np.float32)
base = np.stack([
    128 + 90 * np.sin(xx / 370.0) * np.cos(yy / 290.0),
    128 + 80 * np.cos((xx + yy) / 510.0),
    100 + 0.025 * xx,
], axis=-1)
base += rng.normal(0, 14, base.shape)  # sensor-like noise: realistic entropy for the decoder
base = np.clip(base, 0, 255).astype(np.uint8)
for k in range(count):
    dx, dy = (k * 7) % M, (k * 13) % M
    img = Image.fromarray(base[dy:dy + H, dx:dx + W])
    exif = piexif.dump({
        "0th": {piexif.ImageIFD.Make: b"Bench", piexif.ImageIFD.Model: b"12MP",
                piexif.ImageIFD.Orientation: 6 if k % 2 else 1},
        "Exif": {piexif.ExifIFD.DateTimeOriginal: b"2024:05:01 10:00:00"},
        "GPS": {piexif.GPSIFD.GPSLatitudeRef: b"N", piexif.GPSIFD.GPSLatitude: ((48, 1), (51, 1), (30, 1)),
                piexif.GPSIFD.GPSLongitudeRef: b"E", piexif.GPSIFD.GPSLongitude: ((2, 1), (17, 1), (40, 1))},
    })
    img.save(f"{out}/photo-{k:04d}.jpg", "JPEG", quality=92, exif=exif)
PY
fi
du -sh "$BENCH_DIR" | sed 's/^/bench: /'

cd "$PACKAGE_DIR"
swift build -c release --product locafoto-bench 2>&1 | tail -n 1
"$(swift build -c release --show-bin-path)/locafoto-bench" "$BENCH_DIR"

if command -v vipsthumbnail >/dev/null; then
    tmp=$(mktemp -d)
    start=$(date +%s%N)
    VIPS_CONCURRENCY=1 vipsthumbnail "$BENCH_DIR"/photo-*.jpg --size 320 -o "$tmp/%s.jpg[Q=80,strip]"
    end=$(date +%s%N)
    rm -rf "$tmp"
    echo "bench: reference vipsthumbnail CLI (files, 1 thread): $(( (end - start) / 1000000 / COUNT )) ms/photo"
fi
