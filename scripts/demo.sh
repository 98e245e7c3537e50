#!/usr/bin/env bash
# demo.sh - the whole main job on one machine: set up, build, start avahi (loopback only) and
# two agents with separate homes ("alice" and "bob"), let them discover each other, send sample
# photos from alice to bob, accept them in bob's inbox, and check that bob's vault holds
# byte-identical copies. Leaves nothing running.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

bash scripts/setup.sh
echo "== building (first build takes a minute or two)"
swift build -c release 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"
bash scripts/avahi-lo.sh start

WORK=$(mktemp -d /tmp/locafoto-demo.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    bash scripts/avahi-lo.sh stop >/dev/null || true
    echo "(demo files and agent logs are in $WORK)"
}
trap cleanup EXIT
unset XDG_RUNTIME_DIR  # keep each agent's control socket inside its own home

lf() { local who=$1 cmd=$2; shift 2; "$BIN" $cmd --home "$WORK/$who" "$@"; }

for who in alice bob; do
    head -c 24 /dev/urandom | base64 > "$WORK/$who.pass"   # a real passphrase, never on argv
    chmod 600 "$WORK/$who.pass"
    "$BIN" vault init --home "$WORK/$who" --passphrase-file "$WORK/$who.pass" --kdf interactive
    "$BIN" agent --home "$WORK/$who" --name "$who-demo" --listen 127.0.0.1 --port 0 \
        --passphrase-file "$WORK/$who.pass" >"$WORK/$who.log" 2>&1 &
    pids+=($!)
done
for who in alice bob; do
    for _ in $(seq 1 50); do lf "$who" status >/dev/null 2>&1 && break; sleep 0.2; done
done

echo "== waiting for the agents to discover each other over mDNS"
for _ in $(seq 1 50); do
    lf alice peers --json | grep -q '"bob-demo"' && lf bob peers --json | grep -q '"alice-demo"' && break
    sleep 0.2
done
echo "-- alice sees:"; lf alice peers
echo "-- bob sees:";   lf bob peers

PHOTOS=(Tests/LocafotoFormatsTests/Fixtures/sample.jpg Tests/LocafotoFormatsTests/Fixtures/sample.png
        Tests/LocafotoFormatsTests/Fixtures/sample.heic Tests/LocafotoFormatsTests/Fixtures/sample.webp)
echo "== alice sends ${#PHOTOS[@]} photos to bob"
lf alice send bob-demo "${PHOTOS[@]}" >"$WORK/send.out" 2>&1 &
send_pid=$!

for _ in $(seq 1 50); do
    offer=$(lf bob inbox --json | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o[0]["id"] if o else "")')
    [ -n "$offer" ] && break
    sleep 0.2
done
[ -n "$offer" ] || { echo "demo: no offer reached bob's inbox" >&2; exit 1; }
echo "-- bob's inbox:"; lf bob inbox
echo "== bob accepts"
lf bob accept "${offer:0:8}"
wait "$send_pid" || { cat "$WORK/send.out"; echo "demo: send failed" >&2; exit 1; }
echo "-- alice's send reported:"; cat "$WORK/send.out"
echo "-- bob's vault:"; lf bob list

mkdir -p "$WORK/exported"
for id in $(lf bob list --json | python3 -c 'import json,sys; print(" ".join(p["id"] for p in json.load(sys.stdin)))'); do
    lf bob export "$id" "$WORK/exported" >/dev/null
done
for p in "${PHOTOS[@]}"; do
    cmp -s "$p" "$WORK/exported/$(basename "$p")" || { echo "demo: $(basename "$p") differs after the round trip" >&2; exit 1; }
done
echo "== demo OK: bob's vault holds byte-identical copies of all ${#PHOTOS[@]} photos"
