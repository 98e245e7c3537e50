#!/usr/bin/env bash
# demo.sh - the whole main job on one machine: set up, build, start avahi (loopback only) and
# two agents with separate homes ("alice" and "bob"), let them discover each other, send a
# phone's camera roll from alice to bob, accept it in bob's inbox, and check that bob's vault
# holds byte-identical copies (scripts/two-agents.sh). Leaves nothing running.
#
# The camera roll is made from real photographs (scripts/make-camera-roll.py, from the nature
# photographs Debian's mate-backgrounds ships): 8 photos of 12 megapixels, JPEGs with camera EXIF
# and GPS, one without an embedded thumbnail, one portrait stored turned (Orientation 6), and two
# HEICs, one with a thumbnail item and one without.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

bash scripts/setup.sh --photos
echo "== building (the first build takes several minutes: about 9 on 2 cores)"
swift build -c release 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"
bash scripts/avahi-lo.sh start

WORK=$(mktemp -d /tmp/locafoto-demo.XXXXXX)
trap 'bash scripts/avahi-lo.sh stop >/dev/null || true; echo "(demo files and agent logs are in $WORK)"' EXIT
echo "== making a camera roll from real photographs"
python3 scripts/make-camera-roll.py "$WORK/camera-roll" --count 8
bash scripts/two-agents.sh "$BIN" "$WORK" "$WORK"/camera-roll/*
echo "== demo OK"
