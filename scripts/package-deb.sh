#!/usr/bin/env bash
# package-deb.sh - build the Debian package of Locafoto with dpkg-deb: no network, no debhelper.
#
#   scripts/package-deb.sh [--binary PATH --generate-manual PATH] [--out DIR]
#
# Without --binary it builds the release binary with the Swift runtime linked in statically
# (`swift build -c release --static-swift-stdlib`: the package needs no Swift toolchain) and
# argument-parser's generate-manual. What goes in is what scripts/install.sh installs, staged
# with DESTDIR under the prefix /usr:
#   /usr/bin/locafoto, /usr/lib/locafoto/locafoto-open-file,
#   /usr/share/man/man1/locafoto.1 and locafoto-*.1 (one per command, gzip -9n),
#   bash, zsh and fish completions, /usr/lib/systemd/user/locafoto.service,
#   /usr/share/applications/locafoto.desktop (.locaphoto/.lfs handler) and locafoto-web.desktop
#   (the launcher), /usr/share/mime/packages/locafoto.xml, /usr/share/doc/locafoto/copyright.
# Depends comes from dpkg-shlibdeps on the binary (libsodium23, libavahi-client3, libvips42, …);
# avahi-daemon and the desktop databases are recommended. No maintainer scripts are needed: the
# MIME, desktop-entry and man databases are refreshed by the file triggers of shared-mime-info,
# desktop-file-utils and man-db, and the user unit is each user's to enable
# (`systemctl --user enable --now locafoto`), as Debian policy asks of user services.
# Writes DIR/locafoto_VERSION_ARCH.deb (default DIR: .build/deb) and prints its path.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "package-deb.sh: $*" >&2; exit 1; }

BIN="" GENMAN="" OUT="$REPO/.build/deb"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) BIN=$(realpath "$2"); shift 2 ;;
        --generate-manual) GENMAN=$(realpath "$2"); shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) die "unknown argument: $1 (see the header of this script)" ;;
    esac
done
# dpkg-deb builds with root-owned files itself (--root-owner-group): no fakeroot is needed.
if ! command -v dpkg-shlibdeps >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >/dev/null
fi

if [ -z "$BIN" ]; then
    command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
    (cd "$REPO" && swift build -c release --product locafoto --static-swift-stdlib 2>&1 | tail -n 1 \
        && swift build -c release --product generate-manual 2>&1 | tail -n 1)
    built=$(cd "$REPO" && swift build -c release --show-bin-path)
    BIN="$built/locafoto"
    GENMAN="$built/generate-manual"
fi
[ -x "$BIN" ] || die "no executable at $BIN"
[ -n "$GENMAN" ] || GENMAN="$(dirname "$BIN")/generate-manual"
[ -x "$GENMAN" ] || die "no generate-manual at $GENMAN (swift build -c release --product generate-manual)"
if ldd "$BIN" | grep -q 'libswiftCore\|libFoundation'; then
    die "$BIN links the Swift runtime dynamically; build it with --static-swift-stdlib"
fi

VERSION=$("$BIN" --version | sed -n 's/^locafoto \([0-9.]*\) .*/\1/p')
[ -n "$VERSION" ] || die "cannot read the version from $BIN --version"
ARCH=$(dpkg --print-architecture)
# Who the package says maintains it: DEBFULLNAME and DEBEMAIL, as Debian's tools read them.
MAINTAINER="${DEBFULLNAME:-Locafoto developers} <${DEBEMAIL:-locafoto@example.org}>"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
mkdir -p "$ROOT"

# What a desktop install puts in place, under /usr.
DESTDIR="$ROOT" bash "$REPO/scripts/install.sh" --prefix /usr --no-build --binary "$BIN" --generate-manual "$GENMAN" >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/locafoto"
# Policy 12.3: man pages compressed with gzip -9n; a changelog and the copyright in the doc folder.
gzip -9n "$ROOT"/usr/share/man/man1/*.1
install -d "$ROOT/usr/share/doc/locafoto"
cat >"$ROOT/usr/share/doc/locafoto/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: locafoto
Comment: Locafoto for Linux, with the Swift runtime (Apache-2.0 with Runtime Library Exception)
 and swift-nio, swift-argument-parser, GRDB (MIT), Hummingbird and other Swift packages linked
 in statically.

Files: *
Copyright: 2026 the Locafoto developers
License: Apache-2.0
 On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.
EOF
printf 'locafoto (%s) unstable; urgency=medium\n\n  * Package built from the repository (scripts/package-deb.sh).\n\n -- %s  %s\n' \
    "$VERSION" "$MAINTAINER" "$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}")" \
    | gzip -9n >"$ROOT/usr/share/doc/locafoto/changelog.gz"

# Depends: the shared libraries the binary links, as dpkg-shlibdeps resolves them.
mkdir -p "$WORK/src/debian"
printf 'Source: locafoto\n\nPackage: locafoto\nArchitecture: any\n' >"$WORK/src/debian/control"
DEPENDS=$(cd "$WORK/src" && dpkg-shlibdeps -O "$ROOT/usr/bin/locafoto" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || die "dpkg-shlibdeps found no dependencies for the binary"
# libvips is opened at first use (dlopen: the agent stays small until it decodes a photo), so
# dpkg-shlibdeps cannot see it: thumbnails, previews and filters need it.
DEPENDS="$DEPENDS, libvips42 (>= 8.14)"

mkdir -p "$ROOT/DEBIAN"
cat >"$ROOT/DEBIAN/control" <<EOF
Package: locafoto
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
Depends: $DEPENDS
Recommends: avahi-daemon, shared-mime-info, desktop-file-utils, xdg-utils
Suggests: libnotify-bin
Section: net
Priority: optional
Homepage: https://localhost/locafoto
Description: share photos on the LAN, end to end encrypted, into an encrypted vault
 Locafoto is an AirDrop analogue for Linux: each machine runs an agent that
 advertises itself over mDNS, authenticates peers with a Noise XX handshake and
 receives offers of photos into an inbox. Accepted photos are verified and
 imported into an encrypted vault. The same agent runs as a store-and-forward
 relay that cannot read what it holds. A CLI, a web app on 127.0.0.1 and desktop
 notifications drive it.
EOF
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

mkdir -p "$OUT"
DEB="$OUT/locafoto_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
echo "$DEB"
