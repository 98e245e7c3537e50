#!/usr/bin/env bash
# container-test.sh - build the container image with podman and prove that it runs: a relay in
# the container, two agents outside it on the host, a photo deposited at the relay by one and
# collected byte-identical by the other.
#
#   bash scripts/container-test.sh          (Debian 12, as root; see docs/install.md "Container")
#
# Phases (each one timed, then the total):
#   setup      apt packages (podman buildah runc debootstrap jq), scripts/setup.sh's build deps
#   binary     the release binary on the host (swift build -c release --static-swift-stdlib),
#              or LOCAFOTO_BIN
#   base       a Debian bookworm minbase made by debootstrap, imported as debian:bookworm-slim
#              (cached in the work folder; no image registry is needed)
#   image      podman build of the Dockerfile's `prebuilt` target: the same runtime stage as the
#              default build, with the host's binary instead of the Swift build stage; every
#              library the binary needs must resolve inside the image (ldd)
#   toolchain  the Dockerfile's `toolchain` stage (the default build's Swift image + -dev
#              packages) built on the Debian base: every pkg-config module and link library of
#              Package.swift resolves there
#   relay      the image run as a relay (LOCAFOTO_ROLE=relay, host network, 127.0.0.1 only,
#              only agent A may deposit); its health check passes; its process is not root
#   meet       agents A and C (own homes, no mDNS) meet by a direct handshake (A pairs with C's
#              address), then C stops
#   deposit    A: `send C PHOTO --via RELAY` returns with the photo held; the relay's queue for C
#   collect    C starts with --relay RELAY, finds the offer (from A, via the relay), accepts it;
#              the exported photo is byte-identical (sha256) to the original; A gets the receipt
#   stop       the relay container stops cleanly on SIGTERM (exit status 0)
#
# Everything podman keeps (storage, the debootstrap rootfs, the built image and its layer cache)
# lives in LOCAFOTO_CONTAINER_DIR (default: .build-container in the checkout);
# LOCAFOTO_CONTAINER_FRESH=1 empties it first (podman system reset, then rm) for a cold run. Containers, agents and node homes are removed on exit, also on failure or Ctrl-C
# (LOCAFOTO_KEEP_TMP=1 keeps the node homes and logs). Networking: the relay container shares
# the host's network namespace and listens on 127.0.0.1 only; nothing else is contacted but the
# Debian mirror (debootstrap, apt-get in the image build).
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${LOCAFOTO_CONTAINER_DIR:-$REPO/.build-container}"
MIRROR="${LOCAFOTO_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGE=localhost/locafoto:container-test
BASE=docker.io/library/debian:bookworm-slim
WAIT="${LOCAFOTO_CONTAINER_WAIT:-90}"      # hang guard (seconds) for every wait below
COLLECT_EVERY=2                             # agents visit the relay every 2 s (agent --collect-interval)

# podman with its state in $WORK. crun cannot run on this kind of host (hybrid cgroups v1/v2), runc
# with cgroupfs can; containers need rlimits below the hard limits of the calling shell.
PODMAN=(podman --root "$WORK/storage" --runroot "$WORK/runroot" --runtime runc --cgroup-manager=cgroupfs)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

die() { echo "container-test: FAIL: $*" >&2; exit 1; }
log() { echo "container-test: $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

T_START=$(now)
PHASE=""; T_PHASE=""; TIMINGS=()
phase() {
    local t; t=$(now)
    if [ -n "$PHASE" ]; then TIMINGS+=("$(printf '%-10s %6ss' "$PHASE" "$(elapsed "$T_PHASE" "$t")")"); fi
    PHASE="$1"; T_PHASE="$t"
    [ "$PHASE" = "done" ] || echo "== $PHASE"
}

# wait_until WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds; fails after $WAIT s,
# or as soon as an agent or the relay container this script started is gone.
wait_until() {
    local what="$1"; shift
    local deadline=$(( $(date +%s) + WAIT ))
    until "$@" >/dev/null 2>&1; do
        alive
        [ "$(date +%s)" -lt "$deadline" ] || die "timed out after ${WAIT}s waiting for $what"
        sleep 0.2
    done
}
alive() {
    local pid
    for pid in "${PIDS[@]}"; do
        [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || die "an agent (pid $pid) exited while waiting"
    done
    if [ -n "$CTR" ] && [ "$("${PODMAN[@]}" inspect --format '{{.State.Running}}' "$CTR" 2>/dev/null)" != true ]; then
        die "the relay container is not running"
    fi
}

[ "$(id -u)" = 0 ] || die "run as root (podman with its own storage, debootstrap)"

# ---------------------------------------------------------------------------------- cleanup
TMP=""; CTR=""; PIDS=()
cleanup() {
    local status=$?
    set +e
    if [ "$status" != 0 ]; then
        [ -n "$CTR" ] && { echo "--- relay container log (podman logs $CTR) ---"; "${PODMAN[@]}" logs "$CTR" 2>&1 | tail -n 40; }
        if [ -n "$TMP" ]; then
            for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f ---"; tail -n 40 "$f"; }; done
        fi
    fi
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    [ -n "$CTR" ] && "${PODMAN[@]}" rm -f -v "$CTR" >/dev/null 2>&1
    if [ -n "$TMP" ]; then
        if [ -n "${LOCAFOTO_KEEP_TMP:-}" ]; then echo "container-test: node homes and logs kept in $TMP"; else rm -rf "$TMP"; fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------------------------ setup
phase setup
missing=()
for p in podman buildah runc debootstrap jq; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
fi
if [ -z "${LOCAFOTO_BIN:-}" ]; then bash "$REPO/scripts/setup.sh"; fi
if [ -n "${LOCAFOTO_CONTAINER_FRESH:-}" ] && [ -d "$WORK" ]; then
    log "LOCAFOTO_CONTAINER_FRESH: emptying $WORK"
    # Containers (also build containers) first, then whatever podman still has mounted there
    # (deepest first); `podman system reset` is not used: it also drops networks outside $WORK.
    if [ -d "$WORK/storage" ]; then
        "${PODMAN[@]}" ps -a -q --external 2>/dev/null | xargs -r "${PODMAN[@]}" rm -f >/dev/null 2>&1 || true
    fi
    findmnt -rn -o TARGET | { grep "^$WORK/" || true; } | sort -r | xargs -r -n 1 umount
    rm -rf "$WORK"
fi
mkdir -p "$WORK"

# ----------------------------------------------------------------------------------- binary
phase binary
if [ -n "${LOCAFOTO_BIN:-}" ]; then
    BIN="$(realpath "$LOCAFOTO_BIN")"
else
    command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
    (cd "$REPO" && nice -n 10 swift build -c release --product locafoto --static-swift-stdlib)
    BIN="$(cd "$REPO" && swift build -c release --show-bin-path)/locafoto"
fi
[ -x "$BIN" ] || die "no binary at $BIN"
log "binary: $BIN"

# ------------------------------------------------------------------------------------- base
phase base
# The root (shared with scripts/package-test.sh); the image is re-imported when it was rebuilt.
[ -f "$WORK/rootfs/.locafoto-complete" ] || fresh_root=1
ROOTFS=$(bash "$REPO/scripts/debian-root.sh" "$WORK" "$MIRROR")
if [ -n "${fresh_root:-}" ]; then "${PODMAN[@]}" rmi -f "$BASE" >/dev/null 2>&1 || true; fi
if ! "${PODMAN[@]}" image exists "$BASE"; then
    log "importing the rootfs as $BASE"
    tar -C "$ROOTFS" --exclude=./.locafoto-complete -c . | "${PODMAN[@]}" import - "$BASE" >/dev/null
fi

# ------------------------------------------------------------------------------------ image
phase image
# The build context: what the Dockerfile copies for `--target prebuilt` (the same layout as the
# checkout, with the binary at out/locafoto).
CTX="$WORK/context"
rm -rf "$CTX"
mkdir -p "$CTX/out" "$CTX/scripts"
cp "$BIN" "$CTX/out/locafoto"
cp "$REPO/scripts/docker-entrypoint.sh" "$CTX/scripts/"
# --format docker keeps the HEALTHCHECK (the OCI format has none); --network=host lets the
# runtime stage's apt-get reach the Debian mirror.
"${PODMAN[@]}" build --pull=never --network=host --force-rm --format docker "${LIMITS[@]}" \
    --target prebuilt -f "$REPO/Dockerfile" -t "$IMAGE" "$CTX" >"$WORK/image-build.log" 2>&1 \
    || { tail -n 30 "$WORK/image-build.log" >&2; die "podman build --target prebuilt failed (log: $WORK/image-build.log)"; }
missing_libs=$("${PODMAN[@]}" run --rm --network=none --no-healthcheck "${LIMITS[@]}" --entrypoint ldd "$IMAGE" /usr/local/bin/locafoto | grep 'not found' || true)
[ -z "$missing_libs" ] || die "libraries missing in the image (ldd):
$missing_libs"
"${PODMAN[@]}" run --rm --network=none --no-healthcheck "${LIMITS[@]}" --entrypoint locafoto "$IMAGE" --help >/dev/null \
    || die "the binary does not run in the image"
health=$("${PODMAN[@]}" image inspect --format '{{json .Config.Healthcheck.Test}}' "$IMAGE")
[ "$health" = '["CMD","/usr/local/bin/docker-entrypoint.sh","healthcheck"]' ] || die "unexpected image health check: $health"
log "image $IMAGE: $("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'), every library resolves"

# -------------------------------------------------------------------------------- toolchain
phase toolchain
# The users' default build compiles in the `toolchain` stage (the Swift image plus the C
# libraries' development packages). No Swift image can be pulled here, so the stage's text runs
# on the Debian base instead (swift:6.2-bookworm is Debian bookworm too): every pkg-config module
# Package.swift names must resolve, with its cflags and libs, and every library the C modules
# and targets (`linkedLibrary`, and GRDB: sqlite3) link must have its development link.
"${PODMAN[@]}" build --pull=never --network=host --force-rm "${LIMITS[@]}" --target toolchain \
    --build-arg SWIFT_IMAGE="$BASE" -f "$REPO/Dockerfile" -t localhost/locafoto:container-test-toolchain "$CTX" \
    >"$WORK/toolchain-build.log" 2>&1 \
    || { tail -n 30 "$WORK/toolchain-build.log" >&2; die "podman build --target toolchain failed (log: $WORK/toolchain-build.log)"; }
PKGS=$(sed -n 's/.*pkgConfig: *"\([^"]*\)".*/\1/p' "$REPO/Package.swift" | sort -u | xargs)
LINKS=$({ sed -n 's/^ *link *"\([^"]*\)".*/\1/p' "$REPO"/Sources/*/module.modulemap
          sed -n 's/.*linkedLibrary("\([^"]*\)").*/\1/p' "$REPO/Package.swift"; echo sqlite3; } | sort -u | xargs)
[ -n "$PKGS" ] && [ -n "$LINKS" ] || die "found no pkg-config modules or link libraries in Package.swift and Sources/*/module.modulemap"
# shellcheck disable=SC2016  # expanded by the container's shell
"${PODMAN[@]}" run --rm --network=none --no-healthcheck "${LIMITS[@]}" localhost/locafoto:container-test-toolchain sh -ec '
    for p in $1; do pkg-config --print-errors --cflags --libs "$p" >/dev/null; done
    for l in $2; do ls /usr/lib/*/"lib$l.so" /usr/lib/"lib$l.so" 2>/dev/null | grep -q . || { echo "no lib$l.so" >&2; exit 1; }; done
' sh "$PKGS" "$LINKS" || die "the toolchain stage lacks development packages (pkg-config: $PKGS; link: $LINKS)"
log "toolchain stage: pkg-config $PKGS; -l${LINKS// / -l}: all resolve"

# ------------------------------------------------------------------------------ agents' homes
TMP="$(mktemp -d /tmp/lfct.XXXXXX)"     # short: control sockets live in the homes
chmod 700 "$TMP"
(umask 077; head -c 24 /dev/urandom | base64 >"$TMP/pass")
PHOTO="$TMP/photo.jpg"
# A JPEG no vault holds yet: the sample with random bytes after its end.
cat "$REPO/Tests/LocafotoFormatsTests/Fixtures/sample.jpg" >"$PHOTO"
head -c 65536 /dev/urandom >>"$PHOTO"

# The agents and every CLI call see none of the LOCAFOTO_* variables of the calling shell.
CLEAN_ENV=(env -u LOCAFOTO_HOME -u LOCAFOTO_SOCKET -u LOCAFOTO_PASSPHRASE_FILE -u LOCAFOTO_RELAYS
           -u LOCAFOTO_RELAY_ALLOW -u LOCAFOTO_RELAY_OPEN -u XDG_RUNTIME_DIR)
lf() { "${CLEAN_ENV[@]}" "$BIN" "$@"; }
lfa() { lf "$@" --home "$TMP/a" --json; }
lfc() { lf "$@" --home "$TMP/c" --json; }
for n in a c; do lf vault init --home "$TMP/$n" --passphrase-file "$TMP/pass" --kdf interactive >/dev/null; done

# start_agent NODE EXTRA...: runs `locafoto agent` for $TMP/NODE on 127.0.0.1 (free port, no
# mDNS) in the background; sets AGENT_PID.
start_agent() {
    local node="$1"; shift
    echo "===== agent $node $*" >>"$TMP/$node.log"
    "${CLEAN_ENV[@]}" "$BIN" agent --home "$TMP/$node" --name "ct-$node" --listen 127.0.0.1 --port 0 \
        --no-discovery --passphrase-file "$TMP/pass" "$@" >>"$TMP/$node.log" 2>&1 &
    AGENT_PID=$!
    PIDS+=("$AGENT_PID")
    wait_until "agent $node to answer status" lf status --home "$TMP/$node" --json
}

# stop_agent PID NODE: SIGTERM; the agent must exit with status 0.
stop_agent() {
    local pid="$1" node="$2" status=0
    kill -TERM "$pid"
    wait "$pid" || status=$?
    local rest=() p
    for p in "${PIDS[@]}"; do [ "$p" = "$pid" ] || rest+=("$p"); done
    PIDS=("${rest[@]}")
    [ "$status" = 0 ] || die "agent $node exited with status $status after SIGTERM"
}

# A free loopback port for the relay, chosen before A starts (A is told where its relay is).
RELAY_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RELAY="127.0.0.1:$RELAY_PORT"
start_agent a --relay "$RELAY" --collect-interval "$COLLECT_EVERY"
A_PID=$AGENT_PID
FP_A=$(lfa id | jq -r .fingerprint)

# ------------------------------------------------------------------------------------ relay
phase relay
CTR="lfct-relay-$$"
# There is no systemd here to run the health check on a timer (podman 4.3 logs an error about it
# even with --health-interval=disable: kept out of the output unless the run fails); the check
# itself is run below with `podman healthcheck run`.
"${PODMAN[@]}" run -d --pull=never --name "$CTR" --network host "${LIMITS[@]}" --health-interval=disable \
    -e LOCAFOTO_ROLE=relay -e LOCAFOTO_NAME=ct-relay -e LOCAFOTO_PORT="$RELAY_PORT" \
    -e LOCAFOTO_RELAY_ALLOW="$FP_A" "$IMAGE" --listen 127.0.0.1 >/dev/null 2>"$TMP/podman-run.err" \
    || { cat "$TMP/podman-run.err" >&2; die "podman run of the relay failed"; }
relay_started() {
    local out; out=$("${PODMAN[@]}" logs "$CTR" 2>&1)
    grep -E "relay 'ct-relay' \[[^]]+\] listening on port [0-9]+" <<<"$out" | head -n 1
    grep -q -E "relay 'ct-relay' \[[^]]+\] listening on port [0-9]+" <<<"$out"
}
wait_until "the relay in the container to log that it listens" relay_started
started=$(relay_started)
FP_R=$(sed -E 's/.*\[([^]]+)\].*/\1/' <<<"$started")
[ "$(sed -E 's/.* port ([0-9]+).*/\1/' <<<"$started")" = "$RELAY_PORT" ] || die "the relay listens elsewhere: $started"
wait_until "the container's health check to pass" "${PODMAN[@]}" healthcheck run "$CTR"
relay_status() { "${PODMAN[@]}" exec "$CTR" locafoto relay status --json; }
[ "$(relay_status | jq -r '.admission + " " + (.allowed | tostring)')" = "allow-list 1" ] \
    || die "the relay's admission is not the allow-list of A: $(relay_status)"
pid=$("${PODMAN[@]}" inspect --format '{{.State.Pid}}' "$CTR")
[ "$(cat "/proc/$pid/comm")" = locafoto ] || die "the container's process is $(cat "/proc/$pid/comm"), not locafoto"
ids=$(awk '/^(Uid|Gid):/ { printf "%s %s %s %s ", $2, $3, $4, $5 }' "/proc/$pid/status")
[ "$ids" = "10001 10001 10001 10001 10001 10001 10001 10001 " ] || die "the relay runs with uids/gids $ids, not 10001"
owner=$("${PODMAN[@]}" exec "$CTR" stat -c '%U:%G %a' /data)
[ "$owner" = "locafoto:locafoto 700" ] || die "/data in the container is $owner, not locafoto:locafoto 700"
log "relay $FP_R on $RELAY: healthy, runs as uid/gid 10001 (locafoto), /data is its own"

# ------------------------------------------------------------------------------------- meet
phase meet
start_agent c
C_PID=$AGENT_PID
FP_C=$(lfc id | jq -r .fingerprint)
PORT_C=$(lfc status | jq -r .port)
paired=$(lfa pair "127.0.0.1:$PORT_C" | jq -r .fingerprint)
[ "$paired" = "$FP_C" ] || die "A paired with $paired, not C ($FP_C)"
[ "$(lfa peers | jq -r --arg fp "$FP_C" '.[] | select(.fingerprint == $fp) | .trust')" = known ] \
    || die "A does not know C after the handshake: $(lfa peers)"
stop_agent "$C_PID" c
log "A knows C ($FP_C); C is offline"

# ---------------------------------------------------------------------------------- deposit
phase deposit
sent=$(lfa send "${FP_C%%-*}" "$PHOTO" --via "$RELAY") || die "send --via the relay failed: $sent"
[ "$(jq -r .state <<<"$sent")" = held ] || die "the relay does not hold the photo: $sent"
TRANSFER=$(jq -r .id <<<"$sent")
queue=$(relay_status | jq -c --arg fp "$FP_C" '.queues[] | select(.recipient.fingerprint == $fp)')
[ "$(jq -r '"\(.offers) \(.items)"' <<<"$queue")" = "1 1" ] || die "the relay's queue for C: $(relay_status)"
log "the relay holds 1 photo for C ($(jq -r .bytes <<<"$queue") bytes)"

# ---------------------------------------------------------------------------------- collect
phase collect
start_agent c --relay "$RELAY" --collect-interval "$COLLECT_EVERY"
C_PID=$AGENT_PID
has_offer() { [ "$(lfc inbox | jq length)" -ge 1 ]; }
wait_until "the relayed offer in C's inbox" has_offer
offer=$(lfc inbox | jq -c '.[0]')
[ "$(lfc inbox | jq length)" = 1 ] || die "expected one offer in C's inbox: $(lfc inbox)"
[ "$(jq -r .sender.fingerprint <<<"$offer")" = "$FP_A" ] || die "the offer is not from A: $offer"
[ "$(jq -r .via.fingerprint <<<"$offer")" = "$FP_R" ] || die "the offer does not name the relay in via: $offer"
lfc accept "$(jq -r .id <<<"$offer" | cut -c1-8)" >/dev/null
photo_id() { lfc list | jq -r --arg fp "$FP_A" '.[] | select(.sender.fingerprint == $fp) | .id' | head -n 1; }
imported() { [ -n "$(photo_id)" ]; }
wait_until "the photo to be imported on C" imported
mkdir "$TMP/export"
exported=$(lfc export "$(photo_id)" "$TMP/export" | jq -r .path)
want=$(sha256sum <"$PHOTO" | cut -d' ' -f1)
got=$(sha256sum <"$exported" | cut -d' ' -f1)
[ "$got" = "$want" ] || die "the collected photo differs from the original: sha256 $got, not $want"
log "C collected the photo byte-identical (sha256 $got)"
receipt_done() { [ "$(lfa transfers | jq -r --arg id "$TRANSFER" '.[] | select(.id == $id) | .state')" = "done" ]; }
wait_until "A to get the relay's receipt (transfer done)" receipt_done
queue_empty() { [ "$(relay_status | jq '.queues | length')" = 0 ]; }
wait_until "the relay to empty its queue" queue_empty
stop_agent "$C_PID" c
stop_agent "$A_PID" a

# ------------------------------------------------------------------------------------- stop
phase stop
# (podman 4.3 logs an error about the health check's systemd timer here too: kept out of the output)
"${PODMAN[@]}" stop -t 10 "$CTR" >/dev/null 2>"$TMP/podman-stop.err" \
    || { cat "$TMP/podman-stop.err" >&2; die "podman stop of the relay failed"; }
code=$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$CTR")
[ "$code" = 0 ] || die "the relay container exited with status $code after SIGTERM"

phase "done"
echo "== container test passed"
printf '   %s\n' "${TIMINGS[@]}"
printf '   %-10s %6ss\n' total "$(elapsed "$T_START" "$(now)")"
