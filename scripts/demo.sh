#!/usr/bin/env bash
# demo.sh - the whole main job on one machine: set up, build, start avahi (loopback only) and
# two agents with separate homes ("alice" and "bob"), let them discover each other, send sample
# photos from alice to bob, accept them in bob's inbox, and check that bob's vault holds
# byte-identical copies (scripts/two-agents.sh). Leaves nothing running.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

bash scripts/setup.sh
echo "== building (the first build takes several minutes: about 9 on 2 cores)"
swift build -c release 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"
bash scripts/avahi-lo.sh start

WORK=$(mktemp -d /tmp/locafoto-demo.XXXXXX)
trap 'bash scripts/avahi-lo.sh stop >/dev/null || true; echo "(demo files and agent logs are in $WORK)"' EXIT
bash scripts/two-agents.sh "$BIN" "$WORK" \
    Tests/LocafotoFormatsTests/Fixtures/sample.jpg Tests/LocafotoFormatsTests/Fixtures/sample.png \
    Tests/LocafotoFormatsTests/Fixtures/sample.heic Tests/LocafotoFormatsTests/Fixtures/sample.webp
echo "== demo OK"
