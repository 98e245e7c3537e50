#!/usr/bin/env bash
# bench.sh - the transfer benchmark: locafoto next to tar|nc, scp, rsync over ssh and two LocalSend
# v2 implementations, on workloads W0-W5 (W4: real JPEGs; W5: a camera roll of real photographs,
# JPEG and HEIC), interleaved, medians of 3 runs, every file verified.
#
#   scripts/bench.sh [--runs N] [--workloads W0,W1,W2,W3,W4,W5]
#                    [--tools tar,scp,rsync,localsend,localsendd,locafoto,ls2locafoto,locafoto2ls] [--link 1gbit] [--bin PATH]
#                    [--bin-b PATH --tools ...,locafoto-b]  (two builds of locafoto side by side, interleaved)
#
# Installs what it needs (openssh-server, rsync, netcat-openbsd, iproute2's tc; for W5
# `scripts/setup.sh --photos`: mate-backgrounds' photographs, heif-enc, exiftool, Pillow, piexif;
# localsend-cli 0.1.1 and localsendd 0.1.1 from PyPI into .build/bench-venv — localsend-cli's
# wheel declares no dependencies, so requests and cryptography are added; localsendd needs none),
# builds the release binary (or takes --bin PATH and builds nothing), then runs
# scripts/bench-transfer.py (which says what is measured and how) inside a private network
# namespace with only loopback: nothing leaves the machine, and no mDNS is involved (the agents are
# given each other's address). --link RATE rate-limits that namespace's loopback with a tbf qdisc
# for the runs (netem is not needed). Not a test: prints tables.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

BIN=
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) BIN="$(realpath "$2")"; shift 2 ;;
        --bin=*) BIN="$(realpath "${1#--bin=}")"; shift ;;
        --bin-b) args+=(--bin-b "$(realpath "$2")"); shift 2 ;;
        --bin-b=*) args+=(--bin-b "$(realpath "${1#--bin-b=}")"); shift ;;
        *) args+=("$1"); shift ;;
    esac
done

bash scripts/setup.sh --photos >/dev/null
need=()
# (iproute2, libvips-tools and openssl come with setup.sh.)
for pair in sshd:openssh-server rsync:rsync nc:netcat-openbsd; do
    command -v "${pair%%:*}" >/dev/null || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair#*:}")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${need[@]}" >/dev/null
fi
VENV=.build/bench-venv
if [ ! -x "$VENV/bin/localsend-cli" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q localsend-cli==0.1.1 requests cryptography
fi
[ -x "$VENV/bin/localsendd" ] || "$VENV/bin/pip" install -q localsendd==0.1.1

if [ -z "$BIN" ]; then
    swift build -c release --product locafoto 2>&1 | tail -n 1
    BIN="$(swift build -c release --show-bin-path)/locafoto"
fi

NS=locafoto-bench-$$
ip netns add "$NS"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip netns exec "$NS" ip link set lo up
unset XDG_RUNTIME_DIR
ip netns exec "$NS" python3 scripts/bench-transfer.py --bin "$BIN" --localsend "$PWD/$VENV/bin/localsend-cli" \
    --localsendd "$PWD/$VENV/bin" "${args[@]}"
