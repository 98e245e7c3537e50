#!/usr/bin/env bash
# debian-root.sh - a clean Debian 12 (bookworm) root made by debootstrap --variant=minbase, cached:
# the base of the container image (scripts/container-test.sh) and the machine the package is
# installed on (scripts/package-test.sh). Built once into DIR/rootfs; a later call finds it there.
#
#   scripts/debian-root.sh DIR [MIRROR]      (as root; prints the rootfs path)
#
# As in the official debian:bookworm-slim: the release, its updates and security sources in
# deb822 form, no package lists and no downloaded packages kept.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: debian-root.sh DIR [MIRROR]" >&2; exit 64; }
DIR=$1
MIRROR=${2:-${LOCAFOTO_DEBIAN_MIRROR:-http://deb.debian.org/debian}}
ROOTFS="$DIR/rootfs"
mkdir -p "$DIR"
if [ ! -f "$ROOTFS/.locafoto-complete" ]; then
    command -v debootstrap >/dev/null || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    rm -rf "$ROOTFS" "$ROOTFS.tmp"
    echo "debian-root: debootstrap --variant=minbase bookworm ($MIRROR)" >&2
    debootstrap --variant=minbase bookworm "$ROOTFS.tmp" "$MIRROR" >"$DIR/debootstrap.log" 2>&1 \
        || { tail -n 20 "$DIR/debootstrap.log" >&2; echo "debian-root: debootstrap failed (log: $DIR/debootstrap.log)" >&2; exit 1; }
    rm -f "$ROOTFS.tmp/etc/apt/sources.list"
    cat >"$ROOTFS.tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${MIRROR}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -rf "$ROOTFS.tmp"/var/lib/apt/lists/* "$ROOTFS.tmp"/var/cache/apt/*.bin "$ROOTFS.tmp"/var/cache/apt/archives/*.deb
    touch "$ROOTFS.tmp/.locafoto-complete"
    mv "$ROOTFS.tmp" "$ROOTFS"
else
    echo "debian-root: cached in $ROOTFS" >&2
fi
echo "$ROOTFS"
