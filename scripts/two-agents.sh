#!/usr/bin/env bash
# two-agents.sh - the main job with a given locafoto binary: two agents with separate homes
# ("alice" and "bob") discover each other over mDNS, alice sends the photos to bob, bob accepts
# them into his vault, and bob's vault is checked to hold byte-identical copies. Needs a running
# avahi-daemon (scripts/avahi-lo.sh start); needs nothing else beside coreutils and grep, so it
# also runs in a bare Debian root where only the package is installed (scripts/package-test.sh).
#
#   scripts/two-agents.sh BIN WORKDIR PHOTO...
#
# Leaves no agent running; the agents' logs stay in WORKDIR.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: two-agents.sh BIN WORKDIR PHOTO..." >&2; exit 64; }
BIN=$1 WORK=$2
shift 2
PHOTOS=("$@")
mkdir -p "$WORK"

pids=()
stop_agents() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_agents EXIT
unset XDG_RUNTIME_DIR  # keep each agent's control socket inside its own home

lf() { local who=$1 cmd=$2; shift 2; "$BIN" $cmd --home "$WORK/$who" "$@"; }
# until WHAT COMMAND...: every 0.2 s, for at most 20 s (a hang guard).
until_ok() {
    local what=$1; shift
    for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "two-agents: timed out waiting for $what" >&2
    for who in alice bob; do [ -f "$WORK/$who.log" ] && { echo "--- $who's log"; tail -n 20 "$WORK/$who.log"; } >&2; done
    exit 1
}

for who in alice bob; do
    head -c 24 /dev/urandom | base64 > "$WORK/$who.pass"   # a real passphrase, never on argv
    chmod 600 "$WORK/$who.pass"
    "$BIN" vault init --home "$WORK/$who" --passphrase-file "$WORK/$who.pass" --kdf interactive
    "$BIN" agent --home "$WORK/$who" --name "$who-demo" --listen 127.0.0.1 --port 0 \
        --passphrase-file "$WORK/$who.pass" >"$WORK/$who.log" 2>&1 &
    pids+=($!)
done
for who in alice bob; do until_ok "$who's agent" lf "$who" status; done

echo "== waiting for the agents to discover each other over mDNS"
sees() { lf "$1" peers --json | grep -q "\"$2\""; }
until_ok "alice to see bob" sees alice bob-demo
until_ok "bob to see alice" sees bob alice-demo
echo "-- alice sees:"; lf alice peers
echo "-- bob sees:";   lf bob peers

echo "== alice sends ${#PHOTOS[@]} photos to bob"
lf alice send bob-demo "${PHOTOS[@]}" >"$WORK/send.out" 2>&1 &
send_pid=$!
has_offer() { lf bob inbox --json | grep -q '"pending"'; }
until_ok "the offer in bob's inbox" has_offer
echo "-- bob's inbox:"; lf bob inbox
echo "== bob accepts"
lf bob accept --all
wait "$send_pid" || { cat "$WORK/send.out"; echo "two-agents: send failed" >&2; exit 1; }
echo "-- alice's send reported:"; cat "$WORK/send.out"
# Bob's agent reads each new photo's EXIF (date taken, size, camera) once the transfer is over,
# off the transfer's path: a photo it has read has a width in the list.
indexed() { [ "$(lf bob list --json | grep -c '"width"')" -eq "${#PHOTOS[@]}" ]; }
until_ok "bob's agent to read the photos' EXIF" indexed
echo "-- bob's vault:"; lf bob list

# Every photo of bob's vault (`--limit` is a filter that takes them all), then compared.
lf bob export --limit 100000 "$WORK/exported" >/dev/null
for p in "${PHOTOS[@]}"; do
    cmp -s "$p" "$WORK/exported/$(basename "$p")" || { echo "two-agents: $(basename "$p") differs after the round trip" >&2; exit 1; }
done
echo "== OK: bob's vault holds byte-identical copies of all ${#PHOTOS[@]} photos"
