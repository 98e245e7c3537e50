#!/usr/bin/env bash
# bench.sh - throughput and memory of the whole transfer path, next to `tar | nc`.
#
# Two agents on loopback (release build). The receiver trusts the sender, so the batch is
# auto-accepted; every photo is sealed, sent over Noise, verified and imported into the vault.
# Measured in the same run: `tar -c | nc` → `nc | tar -x` over loopback for the same files.
#   scripts/bench.sh [COUNT] [SIZE_MIB]      (default 200 photos of 3 MiB)
# The photos are synthetic: a JPEG signature followed by random (incompressible) bytes, which is
# what the transfer path sees of a real JPEG. Not a test: prints numbers, asserts nothing.
set -euo pipefail
umask 077  # the passphrase files it writes are private (the CLI warns otherwise)
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-200}
SIZE_MIB=${2:-3}

bash scripts/setup.sh >/dev/null
if ! command -v nc >/dev/null || ! command -v bc >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq netcat-openbsd bc >/dev/null
fi
swift build -c release --product locafoto 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"
bash scripts/avahi-lo.sh start >/dev/null

W=$(mktemp -d /tmp/locafoto-bench.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash scripts/avahi-lo.sh stop >/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
unset XDG_RUNTIME_DIR

echo "== making $COUNT photos of $SIZE_MIB MiB"
mkdir -p "$W/photos"
python3 - "$W/photos" "$COUNT" "$SIZE_MIB" <<'PY'
import os, sys
d, n, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, f"IMG_{i:04d}.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0" + os.urandom(mib * 1024 * 1024 - 4))
PY
TOTAL=$(du -sb "$W/photos" | cut -f1)

for who in src dst; do
    head -c 24 /dev/urandom | base64 > "$W/$who.pass"
    "$BIN" vault init --home "$W/$who" --passphrase-file "$W/$who.pass" --kdf interactive >/dev/null
    "$BIN" agent --home "$W/$who" --name "bench-$who-$$" --listen 127.0.0.1 --port 0 \
        --passphrase-file "$W/$who.pass" >"$W/$who.log" 2>&1 &
    pids+=($!)
done
src_pid=${pids[0]}; dst_pid=${pids[1]}
lf() { local who=$1 cmd=$2; shift 2; "$BIN" $cmd --home "$W/$who" "$@"; }
for _ in $(seq 1 100); do lf src peers --json 2>/dev/null | grep -q "bench-dst-$$" && break; sleep 0.2; done

# One handshake so that dst knows src's key, then trust it: the batch needs no prompt.
lf src send "bench-dst-$$" "$W/photos/IMG_0000.jpg" >/dev/null 2>&1 &
first_send=$!
for _ in $(seq 1 100); do
    id=$(lf dst inbox --json | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o[0]["id"][:8] if o else "")')
    [ -n "$id" ] && break; sleep 0.1
done
lf dst accept "$id" >/dev/null
wait "$first_send"
src_fp=$(lf src id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
lf dst trust "$src_fp" >/dev/null

echo "== locafoto: $COUNT photos, $((TOTAL / 1048576)) MiB"
sync; start=$(date +%s.%N)
lf src send "bench-dst-$$" "$W"/photos/*.jpg >"$W/send.out"
end=$(date +%s.%N)
lf_secs=$(echo "$end - $start" | bc -l)
src_rss=$(awk '/VmHWM/ {print $2}' /proc/$src_pid/status)
dst_rss=$(awk '/VmHWM/ {print $2}' /proc/$dst_pid/status)
tail -n 1 "$W/send.out"

echo "== tar | nc over loopback, same files"
mkdir -p "$W/untar"
port=$((20000 + RANDOM % 20000))
(nc -l 127.0.0.1 "$port" | tar -C "$W/untar" -xf -) &
rx=$!
sleep 0.3
sync; start=$(date +%s.%N)
tar -C "$W/photos" -cf - . | nc -N 127.0.0.1 "$port"
wait $rx
sync
end=$(date +%s.%N)
nc_secs=$(echo "$end - $start" | bc -l)

mb=$(echo "$TOTAL / 1000000" | bc -l)
printf '\n%-22s %10s %10s %16s %16s\n' "path" "seconds" "MB/s" "sender peak RSS" "receiver peak RSS"
printf '%-22s %10.2f %10.1f %13s MiB %13s MiB\n' "locafoto (end to end)" "$lf_secs" "$(echo "$mb / $lf_secs" | bc -l)" "$((src_rss / 1024))" "$((dst_rss / 1024))"
printf '%-22s %10.2f %10.1f\n' "tar | nc" "$nc_secs" "$(echo "$mb / $nc_secs" | bc -l)"
printf 'ratio locafoto / tar|nc: %.2fx  (target: 1.3x)\n' "$(echo "$lf_secs / $nc_secs" | bc -l)"
