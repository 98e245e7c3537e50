#!/usr/bin/env bash
# test.sh - set up a fresh Debian 12 machine and run every test:
#   unit tests (swift test), the integration suite with real avahi-daemon + D-Bus and real
#   agents (pytest), the independent Python interoperability checks, and the Dockerfile lint.
# avahi-daemon is started on `lo` only (scripts/avahi-lo.sh) unless a system daemon already runs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

bash scripts/setup.sh
bash scripts/avahi-lo.sh start
trap 'bash scripts/avahi-lo.sh stop' EXIT

echo "== build"
swift build --build-tests
# argument-parser's man page generator, for the desktop install test (Tests/Integration/test_install.py)
swift build --product generate-manual

echo "== unit tests"
swift test --skip-build

echo "== integration tests (real agents, real avahi-daemon)"
LOCAFOTO_BIN="$(swift build --show-bin-path)/locafoto" python3 -m pytest -q Tests/Integration

echo "== interoperability (independent Python implementations)"
python3 scripts/gen-vectors.py --check
python3 scripts/gen-vectors-relay.py --check
python3 scripts/gen-vectors-handshake.py --check
# the independent peer's HELLO checks, name sanitizing and handshake against vectors/handshake.json
python3 scripts/interop/python_peer.py self-test
LOCAFOTO_BIN="$(swift build --show-bin-path)/locafoto" bash scripts/interop/test_python_peer.sh

echo "== fuzz smoke (every parser of untrusted bytes, a few seconds each; scripts/fuzz.sh)"
bash scripts/fuzz.sh smoke

echo "== Dockerfile lint"
hadolint Dockerfile
# The image built with podman and a relay run in it (scripts/container-test.sh, ~4 min cold plus
# a release build): on request, as it needs the Debian mirror for debootstrap.
if [ -n "${LOCAFOTO_CONTAINER_TEST:-}" ]; then
    echo "== container image (podman): relay in a container, agents outside"
    bash scripts/container-test.sh
fi

echo "== all tests passed"
