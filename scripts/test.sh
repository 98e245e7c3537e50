#!/usr/bin/env bash
# test.sh - set up a fresh Debian 12 machine and run every test:
#   unit tests (swift test), the integration suite with real avahi-daemon + D-Bus and real
#   agents (pytest), the independent Python interoperability checks, the fuzz smoke, the
#   Dockerfile, web app and Swift format lints, and the Debian package and container image tests (one release build).
# avahi-daemon is started on `lo` only (scripts/avahi-lo.sh) unless a system daemon already runs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

# Each phase is named with the time since the start (where the test command's minutes go).
phase() { printf '== %s  [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

bash scripts/setup.sh
bash scripts/avahi-lo.sh start
# Background builds (below) run in sessions of their own, so that an early exit ends them whole.
background=()
logs=$(mktemp -d)
trap 'for pid in "${background[@]}"; do kill -- "-$pid" 2>/dev/null || true; done; rm -rf "$logs"; bash scripts/avahi-lo.sh stop' EXIT

# The lints first: they take seconds, the build minutes.
phase "Dockerfile lint"
hadolint Dockerfile
phase "web app lint (ESLint, HTML Tidy, CSS)"
bash scripts/lint-web.sh
phase "Swift format (.swift-format: 120 columns; \`swift-format format -i -r Sources Tests\` mends)"
swift-format lint --strict -r Sources Tests Package.swift Fuzz/Package.swift Fuzz/Sources
phase "build (warnings are errors; a target imports only what Package.swift declares)"
swift build --build-tests --explicit-target-dependency-import-check error
# argument-parser's man page generator, for the desktop install test (Tests/Integration/test_install.py)
swift build --product generate-manual

# Two cores, and much of the testing below waits on agents, sockets and timers rather than
# computing: the fuzz targets build meanwhile (a separate package and build folder, under
# `nice`), then the release build (the Swift runtime linked in statically) for the Debian
# package and the container image, also under `nice`. Each starts as soon as the machine has
# room, not when the tests reach it: the release build is the longest path to the end. Their
# output is shown when each is waited for; a failure of either fails this script there.
# LOCAFOTO_SKIP_INSTALL_TESTS=1 leaves the package and container out (a quick local run; CI
# never sets it).
install_tests=${LOCAFOTO_SKIP_INSTALL_TESTS:+no}
# Asked before the release build starts: SwiftPM commands wait for one another's lock on .build.
bin="$(swift build --show-bin-path)"
phase "fuzz targets: building in the background while the tests run (scripts/fuzz.sh build)"
setsid -w bash scripts/fuzz.sh build >"$logs/fuzz-build" 2>&1 &
fuzz_build=$!
background+=("$fuzz_build")
if [ "${install_tests:-yes}" = yes ]; then
    phase "release build for the package and the container image: in the background, after the fuzz targets"
    # `tail --pid` returns when the fuzz build has ended (whatever its outcome).
    setsid -w bash -c 'set -o pipefail
        tail --pid="$1" -f /dev/null
        nice -n 10 swift build -c release --product locafoto --static-swift-stdlib 2>&1 | tail -n 1 &&
        nice -n 10 swift build -c release --product generate-manual 2>&1 | tail -n 1' _ "$fuzz_build" \
        >"$logs/release" 2>&1 &
    release_build=$!
    background+=("$release_build")
fi

phase "unit tests"
swift test --skip-build

phase "integration tests (real agents, real avahi-daemon)"
# --durations: the slowest tests are named in every run (where the suite's time goes).
# Two files at a time (pytest-xdist; a file's tests stay together, in order, as they share
# fixtures): most tests wait on agents, sockets and timers, and this halves the suite's time.
LOCAFOTO_BIN="$bin/locafoto" python3 -m pytest -q -n 2 --dist loadfile --durations=15 Tests/Integration

phase "interoperability (independent Python implementations)"
python3 scripts/gen-vectors.py --check
python3 scripts/gen-vectors-relay.py --check
python3 scripts/gen-vectors-handshake.py --check
# the independent peer's HELLO checks, name sanitizing and handshake against vectors/handshake.json
python3 scripts/interop/python_peer.py self-test
LOCAFOTO_BIN="$bin/locafoto" bash scripts/interop/test_python_peer.sh

phase "fuzz targets built"
wait "$fuzz_build" && status=0 || status=$?
cat "$logs/fuzz-build"
[ "$status" -eq 0 ] || { echo "test.sh: the fuzz targets did not build" >&2; exit 1; }

smoke="fuzz smoke (every parser of untrusted bytes, ${FUZZ_SMOKE_SECONDS:-8} s each; scripts/fuzz.sh)"
if [ "${install_tests:-yes}" != yes ]; then
    phase "$smoke"
    bash scripts/fuzz.sh run all "${FUZZ_SMOKE_SECONDS:-8}"
fi

# What a person installs: the release build makes the Debian package, installed with apt into a
# clean Debian 12 root where the main job runs (scripts/package-test.sh), and the container
# image, run as a relay (scripts/container-test.sh). Both use the Debian mirror (debootstrap,
# apt-get) and share one debootstrapped root. The release build has the machine to itself
# until it is done; the fuzz smoke (one core) then runs beside the package and container
# tests, which mostly wait on apt, podman and agents.
if [ "${install_tests:-yes}" = yes ]; then
    phase "release build done"
    wait "$release_build" && status=0 || status=$?
    cat "$logs/release"
    [ "$status" -eq 0 ] || { echo "test.sh: the release build failed" >&2; exit 1; }
    phase "$smoke: in the background"
    setsid -w bash scripts/fuzz.sh run all "${FUZZ_SMOKE_SECONDS:-8}" >"$logs/fuzz-smoke" 2>&1 &
    fuzz_smoke=$!
    background+=("$fuzz_smoke")
    release="$(swift build -c release --show-bin-path)"
    phase "Debian package: built, installed with apt into a clean Debian 12 root, the main job run there"
    deb=$(bash scripts/package-deb.sh --binary "$release/locafoto" --generate-manual "$release/generate-manual")
    bash scripts/package-test.sh "$deb"
    phase "container image (podman): relay in a container, agents outside"
    LOCAFOTO_BIN="$release/locafoto" bash scripts/container-test.sh
    phase "fuzz smoke done"
    wait "$fuzz_smoke" && status=0 || status=$?
    cat "$logs/fuzz-smoke"
    [ "$status" -eq 0 ] || { echo "test.sh: the fuzz smoke found a problem (above)" >&2; exit 1; }
fi

phase "all tests passed"
