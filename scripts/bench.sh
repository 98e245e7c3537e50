#!/usr/bin/env bash
# bench.sh - the transfer benchmark: locafoto next to tar|nc, scp, rsync over ssh and a LocalSend
# v2 implementation, on workloads W0-W4 (W4: real JPEGs), interleaved, medians of 3 runs, every file verified.
#
#   scripts/bench.sh [--runs N] [--workloads W0,W1,W2,W3,W4] [--tools tar,scp,rsync,localsend,locafoto]
#
# Installs what it needs (openssh-server, rsync, netcat-openbsd; localsend-cli from PyPI into
# .build/bench-venv — its wheel declares no dependencies, so requests and cryptography are added),
# builds the release binary, then runs scripts/bench-transfer.py (which says what is measured and
# how) inside a private network namespace with only loopback: nothing leaves the machine, and no
# mDNS is involved (the agents are given each other's address). Not a test: prints tables.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

bash scripts/setup.sh >/dev/null
need=()
for pair in sshd:openssh-server rsync:rsync nc:netcat-openbsd ip:iproute2 vips:libvips-tools; do
    command -v "${pair%%:*}" >/dev/null || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair#*:}")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
VENV=.build/bench-venv
if [ ! -x "$VENV/bin/localsend-cli" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q localsend-cli==0.1.1 requests cryptography
fi

swift build -c release --product locafoto 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"

NS=locafoto-bench-$$
ip netns add "$NS"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip netns exec "$NS" ip link set lo up
unset XDG_RUNTIME_DIR
ip netns exec "$NS" python3 scripts/bench-transfer.py --bin "$BIN" --localsend "$PWD/$VENV/bin/localsend-cli" "$@"
