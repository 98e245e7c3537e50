#!/usr/bin/env bash
# package-test.sh - the Debian package as a new user meets it: installed with apt into a clean
# Debian 12 root, where it runs the main job.
#
#   bash scripts/package-test.sh [DEB]        (as root; DEB defaults to a fresh scripts/package-deb.sh)
#
# Phases (each one timed):
#   root     a Debian bookworm minbase (scripts/debian-root.sh, cached in LOCAFOTO_CONTAINER_DIR,
#            default .build-container, shared with scripts/container-test.sh), copied
#   install  `apt-get install ./locafoto_*.deb avahi-daemon` in it: apt resolves the package's
#            Depends from the Debian mirror (no Swift toolchain, no -dev package)
#   check    what the package put in place: the binary runs and every library it links resolves,
#            man locafoto-send renders, the desktop entries and the MIME package, the user unit;
#            lintian has no error to report
#   demo     scripts/two-agents.sh with /usr/bin/locafoto inside the root, in a network namespace
#            of its own (loopback only) with its own D-Bus and avahi-daemon: two agents discover
#            each other, one sends photos, the other accepts them into its vault, byte-identical
#   purge    `apt-get purge locafoto` leaves none of its files
# Nothing is contacted but the Debian mirror (apt-get). The copy of the root is removed on exit
# (LOCAFOTO_KEEP_TMP=1 keeps it).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${LOCAFOTO_CONTAINER_DIR:-$REPO/.build-container}"
MIRROR="${LOCAFOTO_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
die() { echo "package-test: FAIL: $*" >&2; exit 1; }
log() { echo "package-test: $*"; }
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, network namespaces)"

T0=$(date +%s.%N); PHASE=""; TP=""; TIMINGS=()
phase() {
    local t; t=$(date +%s.%N)
    [ -z "$PHASE" ] || TIMINGS+=("$(awk -v p="$PHASE" -v a="$TP" -v b="$t" 'BEGIN { printf "%-8s %6.1fs", p, b - a }')")
    PHASE=$1; TP=$t
    [ "$PHASE" = done ] || echo "== $PHASE"
}

DEB=${1:-}
if [ -z "$DEB" ]; then
    phase build
    DEB=$(bash "$REPO/scripts/package-deb.sh")
fi
DEB=$(realpath "$DEB")
[ -f "$DEB" ] || die "no package at $DEB"
log "package: $DEB"

ROOT="" NS=""
cleanup() {
    local status=$?
    set +e
    if [ -n "$ROOT" ]; then
        # Whatever still runs inside the root (daemons of the demo), then its mounts.
        for pid in $(ls /proc | grep -E '^[0-9]+$'); do
            [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "$pid" 2>/dev/null
        done
        findmnt -rn -o TARGET | { grep "^$ROOT/" || true; } | sort -r | xargs -r -n 1 umount -l
        if [ "$status" != 0 ] && [ -d "$ROOT/tmp/demo" ]; then
            for f in "$ROOT"/tmp/demo/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done
        fi
        if [ -n "${LOCAFOTO_KEEP_TMP:-}" ]; then echo "package-test: the root is kept in $ROOT"; else rm -rf "$(dirname "$ROOT")"; fi
    fi
    [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------------------------- root
phase root
for tool in lintian:lintian ip:iproute2 debootstrap:debootstrap; do
    command -v "${tool%%:*}" >/dev/null || need="${need:-} ${tool#*:}"
done
if [ -n "${need:-}" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $need >/dev/null
fi
BASE=$(bash "$REPO/scripts/debian-root.sh" "$WORK" "$MIRROR")
ROOT="$(mktemp -d /var/tmp/locafoto-package-test.XXXXXX)/root"
cp -a "$BASE" "$ROOT"
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# As in any chroot: package scripts must not start daemons here.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"

# ---------------------------------------------------------------------------------- install
phase install
cp "$DEB" "$ROOT/tmp/"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 "/tmp/$(basename "$DEB")" avahi-daemon dbus man-db \
    >"$ROOT/tmp/apt.log" 2>&1 || { tail -n 30 "$ROOT/tmp/apt.log"; die "apt-get install of the package failed"; }
in_root dpkg-query -W -f='${Status} ${Version}\n' locafoto | grep -q "install ok installed" || die "dpkg does not list locafoto as installed"
if in_root sh -c 'command -v swift || ls /usr/lib/swift' >/dev/null 2>&1; then die "a Swift toolchain is in the root: the test proves nothing"; fi

# ------------------------------------------------------------------------------------ check
phase check
version=$(in_root locafoto --version) || die "locafoto --version failed in the root"
log "$version"
if in_root ldd /usr/bin/locafoto | grep -q "not found"; then in_root ldd /usr/bin/locafoto; die "a library of the binary does not resolve"; fi
in_root sh -c 'MANWIDTH=80 man locafoto-send 2>&1' | grep -q "locafoto send" || die "man locafoto-send does not render"
in_root sh -c 'MANWIDTH=80 man locafoto 2>&1' | grep -q "locafoto-send(1)" || die "man locafoto does not point to the commands' pages"
for f in /usr/bin/locafoto /usr/lib/locafoto/locafoto-open-file /usr/share/applications/locafoto.desktop \
         /usr/share/applications/locafoto-web.desktop /usr/share/mime/packages/locafoto.xml /usr/lib/systemd/user/locafoto.service \
         /usr/share/bash-completion/completions/locafoto /usr/share/doc/locafoto/copyright; do
    [ -f "$ROOT$f" ] || die "$f is missing"
done
grep -q "^Exec=/usr/bin/locafoto web --open$" "$ROOT/usr/share/applications/locafoto-web.desktop" || die "the launcher does not open the web app"
grep -q "^ExecStart=/usr/bin/locafoto agent" "$ROOT/usr/lib/systemd/user/locafoto.service" || die "the unit does not run /usr/bin/locafoto"
# Errors fail the test; warnings are listed for a person to read.
lintian --no-tag-display-limit "$DEB" >"$ROOT/tmp/lintian.txt" 2>&1 || true
if grep -q "^E:" "$ROOT/tmp/lintian.txt"; then cat "$ROOT/tmp/lintian.txt"; die "lintian reports errors"; fi
log "lintian: no error, $(grep -c '^W:' "$ROOT/tmp/lintian.txt" || true) warning(s)"
grep "^W:" "$ROOT/tmp/lintian.txt" | sed 's/^/  /' || true

# ------------------------------------------------------------------------------------- demo
phase demo
NS="locafoto-pkg-$$"
ip netns add "$NS"
ip -n "$NS" link set lo up
mkdir -p "$ROOT/tmp/photos"
cp "$REPO"/Tests/LocafotoFormatsTests/Fixtures/sample.{jpg,png,heic,webp} "$ROOT/tmp/photos/"
cp "$REPO/scripts/avahi-lo.sh" "$REPO/scripts/two-agents.sh" "$ROOT/tmp/"
ip netns exec "$NS" chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    bash -c 'bash /tmp/avahi-lo.sh start && bash /tmp/two-agents.sh /usr/bin/locafoto /tmp/demo /tmp/photos/*; s=$?; bash /tmp/avahi-lo.sh stop >/dev/null 2>&1; exit $s' \
    || die "the main job failed in the root"

# ------------------------------------------------------------------------------------ purge
phase purge
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq locafoto >"$ROOT/tmp/purge.log" 2>&1 || { cat "$ROOT/tmp/purge.log"; die "apt-get purge failed"; }
left=$(find "$ROOT/usr" -name '*locafoto*' | head -n 5)
[ -z "$left" ] || die "left after purge: $left"

phase done
log "PASS: installed with apt in a clean Debian 12 root, the main job ran there, purged cleanly"
printf '  %s\n' "${TIMINGS[@]}"
awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "  total    %6.1fs\n", b - a }'
