#!/usr/bin/env bash
# test.sh - set up a fresh Debian 12 machine and run every test:
#   unit tests (swift test), the integration suite with real avahi-daemon + D-Bus and real
#   agents (pytest), the independent Python interoperability checks, the fuzz smoke, the
#   Dockerfile, web app and Swift format lints, and the Debian package and container image tests,
#   all from one release build.
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
phase "Swift format (.swift-format: every rule listed, CONTRIBUTING.md says why five are off; \`swift-format format -i -r Sources Tests Package.swift\` mends)"
swift-format lint --strict -r Sources Tests Package.swift Fuzz/Package.swift Fuzz/Sources
phase "imports (each target imports exactly the direct dependencies Package.swift declares)"
python3 scripts/check-imports.py
phase "architecture (docs/architecture.md's layers, C library owners and send's path against the code)"
python3 scripts/check-architecture.py
# Two cores, and much of the testing waits on agents, sockets, apt and podman rather than
# computing: the fuzz targets are built (a separate package and build folder) and then each is
# fuzzed for a few seconds, all in the background at the lowest priority (`nice` 19), so that
# they take only what the build and the tests leave idle. Their output is shown when they are
# waited for at the end; a failure there fails this script.
# The smoke's build is a debug one (FUZZ_CONFIG, scripts/fuzz.sh): it costs a fraction of the
# CPU of a release one, and the seconds of fuzzing that follow run every seed input either way.
fuzz="fuzz targets built (debug), then fuzzed ${FUZZ_SMOKE_SECONDS:-8} s each (every parser of untrusted bytes; scripts/fuzz.sh)"
phase "$fuzz: in the background"
# A session of its own is also a scheduling group of its own where the kernel groups by session
# (autogroup): there the group's niceness is what counts, so it is set too.
FUZZ_NICE=19 FUZZ_CONFIG=debug setsid -w bash -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null || true
    bash scripts/fuzz.sh build && bash scripts/fuzz.sh run all "$1"' _ "${FUZZ_SMOKE_SECONDS:-8}" >"$logs/fuzz" 2>&1 &
fuzz_job=$!
background+=("$fuzz_job")

# One build for everything: release, with the tests. The unit tests run from it (their
# `@testable` imports need -enable-testing), and its `locafoto` is the binary the integration
# tests, the Debian package and the container image all use: the Swift runtime linked in
# statically (Package.swift). A debug build beside it would cost as much CPU again.
build=(swift build -c release -Xswiftc -enable-testing --explicit-target-dependency-import-check error)
phase "build: release, the tests included (warnings are errors; a target imports only what Package.swift declares)"
"${build[@]}" --build-tests
# argument-parser's man page generator, for the Debian package and the desktop install test
# (Tests/Integration/test_install.py). The same flags: nothing already built is built again.
"${build[@]}" --product generate-manual
bin="$(swift build -c release --show-bin-path)"

phase "unit tests"
swift test -c release --skip-build

# What a person installs: the Debian package, installed with apt into a clean Debian 12 root
# where the main job runs (scripts/package-test.sh), and the container image, run as a relay
# (scripts/container-test.sh). Both use the Debian mirror (debootstrap, apt-get) and share one
# debootstrapped root. They run in the background beside the integration tests: they spend their
# time on apt, dpkg and podman, the integration tests theirs waiting on agents, and neither sees
# the other's network (the package's demo runs in a network namespace of its own, the container
# test's agents use no mDNS). Their output is shown when they are waited for, after the
# interoperability checks. LOCAFOTO_SKIP_INSTALL_TESTS=1 leaves them out (a quick local run; CI
# never sets it).
install_job=""
if [ -z "${LOCAFOTO_SKIP_INSTALL_TESTS:-}" ]; then
    install="Debian package (built, installed with apt into a clean Debian 12 root, the main job run there), then the container image (podman: relay in a container, agents outside)"
    phase "$install: in the background"
    setsid -w bash -c 'set -euo pipefail
        deb=$(bash scripts/package-deb.sh --binary "$1/locafoto" --generate-manual "$1/generate-manual")
        bash scripts/package-test.sh "$deb"
        LOCAFOTO_BIN="$1/locafoto" bash scripts/container-test.sh' _ "$bin" >"$logs/install" 2>&1 &
    install_job=$!
    background+=("$install_job")
fi

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

if [ -n "$install_job" ]; then
    phase "$install: done"
    wait "$install_job" && status=0 || status=$?
    cat "$logs/install"
    [ "$status" -eq 0 ] || { echo "test.sh: the Debian package or the container image test failed (above)" >&2; exit 1; }
fi

phase "$fuzz: done"
wait "$fuzz_job" && status=0 || status=$?
cat "$logs/fuzz"
[ "$status" -eq 0 ] || { echo "test.sh: the fuzz targets did not build, or the fuzz smoke found a problem (above)" >&2; exit 1; }

phase "all tests passed"
