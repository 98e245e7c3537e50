#!/usr/bin/env bash
# install.sh - build Locafoto in release mode and install it the way a desktop user expects:
# the `locafoto` binary, a systemd user unit that unlocks the vault from a credential, a
# .desktop handler and shared-mime-info types for .locaphoto and .lfs (opening one imports it),
# a launcher that opens the web app (locafoto-web.desktop),
# the man pages (argument-parser's generate-manual: locafoto(1) and one per command,
# locafoto-send(1) …) and bash/zsh/fish completions.
#
#   scripts/install.sh [--prefix DIR] [--no-build --binary PATH [--generate-manual PATH]]
#                      [--unit-dir DIR] [--uninstall]
#
# Default prefix ~/.local (no root needed). DESTDIR is honoured (staged install: the files name
# PREFIX, nothing is registered). The user unit goes to ~/.config/systemd/user when the prefix
# is inside $HOME, else to PREFIX/lib/systemd/user (--unit-dir overrides). --uninstall removes
# exactly the files an install with the same --prefix/--unit-dir/DESTDIR puts in place.
set -euo pipefail

usage() {
    sed -n '2,14s/^# \{0,1\}//p' "$0"
    cat <<'EOF'
Options:
  --prefix DIR            install under DIR (default: ~/.local)
  --no-build              do not build; install the binary given by --binary
  --binary PATH           the locafoto binary to install (with --no-build)
  --generate-manual PATH  argument-parser's generate-manual tool (default: next to the binary)
  --unit-dir DIR          where the systemd user unit goes
  --uninstall             remove what an install put in place
  -h, --help              this text
EOF
}

die() { echo "install.sh: $*" >&2; exit 1; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix="${HOME:?HOME is not set}/.local"
build=1
binary=""
genman=""
unit_dir=""
uninstall=0
destdir="${DESTDIR:-}"
destdir="${destdir%/}"

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --no-build) build=0; shift ;;
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
        --binary=*) binary=${1#*=}; shift ;;
        --generate-manual) [ $# -ge 2 ] || die "--generate-manual needs a path"; genman=$2; shift 2 ;;
        --generate-manual=*) genman=${1#*=}; shift ;;
        --unit-dir) [ $# -ge 2 ] || die "--unit-dir needs a directory"; unit_dir=$2; shift 2 ;;
        --unit-dir=*) unit_dir=${1#*=}; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
prefix=$(absolute "$prefix")
prefix=${prefix%/}
[ -n "$prefix" ] || die "the prefix cannot be /"
# The paths go into a unit file, a desktop entry and a shell script: refuse the characters
# each of them would need its own escaping for. Spaces are fine.
case "$prefix$unit_dir" in
    *[\'\"\\\$\`%\&\|]* | *$'\n'*) die "the prefix and unit directory cannot contain ' \" \\ \$ \` % & | or a newline" ;;
esac

home=$(cd "$HOME" 2>/dev/null && pwd -P || printf '%s' "$HOME")
config_home=${XDG_CONFIG_HOME:-$HOME/.config}
if [ -z "$unit_dir" ]; then
    case "$prefix/" in
        "$HOME"/* | "$home"/*) unit_dir="$config_home/systemd/user" ;;
        *) unit_dir="$prefix/lib/systemd/user" ;;
    esac
fi
unit_dir=$(absolute "$unit_dir")
unit_dir=${unit_dir%/}

bindir="$prefix/bin"
libdir="$prefix/lib/locafoto"
datadir="$prefix/share"

# Every file this script installs: destination (without DESTDIR), mode. --uninstall removes these.
files=(
    "$bindir/locafoto 0755"
    "$libdir/locafoto-open-file 0755"
    "$datadir/applications/locafoto.desktop 0644"
    "$datadir/applications/locafoto-web.desktop 0644"
    "$datadir/mime/packages/locafoto.xml 0644"
    "$datadir/man/man1/locafoto.1 0644"
    "$datadir/bash-completion/completions/locafoto 0644"
    "$datadir/zsh/site-functions/_locafoto 0644"
    "$datadir/fish/vendor_completions.d/locafoto.fish 0644"
    "$unit_dir/locafoto.service 0644"
)

user_manager() { command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; }

# Removes empty directories from $1 upwards, stopping below $2.
prune() {
    local d=$1
    while [ "$d" != "$2" ] && [ "$d" != / ] && [ -d "$d" ] && rmdir "$d" 2>/dev/null; do d=$(dirname "$d"); done
}

# The shared-mime-info database under share/mime is generated from packages/*.xml: regenerate it,
# or remove it when ours was the only package (then every generated file was made for us).
refresh_mime() {
    local mime="$destdir$datadir/mime"
    [ -z "$destdir" ] || return 0
    if compgen -G "$mime/packages/*.xml" >/dev/null; then
        if command -v update-mime-database >/dev/null; then
            update-mime-database "$mime"
        else
            echo "note: update-mime-database not found (Debian: shared-mime-info); run it on $mime"
        fi
    elif [ -d "$mime" ]; then
        rm -f "$mime"/{aliases,generic-icons,globs,globs2,icons,magic,mime.cache,subclasses,treemagic,types,version,XMLnamespaces}
        rm -f "$mime"/application/x-locafoto-photo.xml "$mime"/application/x-locafoto-lfs.xml
        prune "$mime/application" "$datadir"
        prune "$mime/packages" "$datadir"
    fi
}

# Likewise share/applications/mimeinfo.cache, built from the *.desktop files there.
refresh_desktop() {
    local apps="$destdir$datadir/applications"
    [ -z "$destdir" ] || return 0
    if compgen -G "$apps/*.desktop" >/dev/null; then
        if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$apps"; fi
    elif [ -d "$apps" ]; then
        rm -f "$apps/mimeinfo.cache"
    fi
}

if [ "$uninstall" = 1 ]; then
    if [ -z "$destdir" ] && user_manager; then
        systemctl --user disable --now locafoto.service 2>/dev/null || true
    fi
    # `systemctl --user enable` made this link; without a user manager to undo it, remove it if it points at our unit.
    wants="$destdir$unit_dir/default.target.wants/locafoto.service"
    if [ -L "$wants" ] && [ "$(readlink "$wants")" = "$unit_dir/locafoto.service" ]; then
        rm -f "$wants" && echo "removed $wants"
        prune "$(dirname "$wants")" "$destdir$unit_dir"
    fi
    for entry in "${files[@]}"; do
        path="$destdir${entry% *}"
        if [ -e "$path" ] || [ -L "$path" ]; then rm -f "$path" && echo "removed $path"; fi
    done
    # The pages of the commands (their list changes with the release): ours by their name.
    for path in "$destdir$datadir"/man/man1/locafoto-*.1; do
        if [ -e "$path" ] || [ -L "$path" ]; then rm -f "$path" && echo "removed $path"; fi
    done
    refresh_mime
    refresh_desktop
    for entry in "${files[@]}"; do
        path="${entry% *}"
        case "$path" in
            "$prefix"/*) stop=$prefix ;;
            "$config_home"/*) stop=$config_home ;;
            *) stop=$(dirname "$path") ;;
        esac
        prune "$destdir$(dirname "$path")" "$destdir$stop"
    done
    if [ -z "$destdir" ] && user_manager; then systemctl --user daemon-reload; fi
    echo "Locafoto uninstalled from $prefix (the node home, vault and ~/.config/locafoto are kept)."
    exit 0
fi

command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
if [ "$build" = 1 ]; then
    command -v swift >/dev/null || die "Swift 6.2+ is required to build (or use --no-build --binary PATH)"
    (cd "$repo" && swift build -c release --product locafoto && swift build -c release --product generate-manual)
    built=$(cd "$repo" && swift build -c release --show-bin-path)
    binary="$built/locafoto"
    [ -n "$genman" ] || genman="$built/generate-manual"
else
    [ -n "$binary" ] || die "--no-build needs --binary PATH"
fi
[ -x "$binary" ] || die "no executable at $binary"
binary=$(absolute "$binary")
[ -n "$genman" ] || genman="$(dirname "$binary")/generate-manual"
[ -x "$genman" ] || die "no generate-manual at $genman: build it with \`swift build --product generate-manual\` (argument-parser's tool) or give --generate-manual PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Generated from the binary itself, so they always match its commands: a short overview,
# locafoto(1), and a page per command, locafoto-send(1), locafoto-album-create(1), ...
mkdir "$work/man-raw" "$work/man"
"$genman" "$binary" --multi-page --output-directory "$work/man-raw"
[ -s "$work/man-raw/locafoto.1" ] || die "generate-manual made no locafoto.1"
for raw in "$work"/man-raw/locafoto*.1; do
    base=$(basename "$raw" .1)
    case "$base" in locafoto.help | locafoto.media-worker*) continue ;; esac  # not for people
    # generate-manual names pages locafoto.send.1; man pages of subcommands are locafoto-send.1.
    page="$work/man/${base//./-}.1"
    # NAME says locafoto-send, as the page is called (what whatis and apropos index); SYNOPSIS
    # says `locafoto send`, as it is typed.
    names=()
    if [ "$base" != locafoto ]; then
        names=(-e "0,/^\\.Nm \"locafoto.*\"\$/s//.Nm ${base//./-}/" -e "0,/^\\.Nm\$/s//.Nm \"${base//./ }\"/")
    fi
    # mdoc wants .Pp for a paragraph break (empty lines draw warnings); references follow the
    # renaming; the exit statuses are the table every command shares, not `.Ex -std`.
    sed -E -e 's/^$/.Pp/' \
        -e '/^\.Xr locafoto\.(help|media-worker) 1/d' \
        -e ':x' -e 's/^(\.Xr locafoto[a-z-]*)\.([a-z])/\1-\2/' -e 'tx' \
        -e ':y' -e 's/^(\.Dt LOCAFOTO[A-Z-]*)\.([A-Z])/\1-\2/' -e 'ty' -e 's/^\.Os$/.Os Locafoto/' "${names[@]}" \
        -e 's|^\.Ex -std$|The same statuses for every command: 0 done; 1 it did not happen (rejected, failed, cancelled); 64 usage; 65 refused content; 66 not found; 69 no agent running or peer unreachable; 70 internal error; 74 I/O error; 75 vault locked, try later; 77 refused (wrong passphrase, unsafe socket).|' \
        "$raw" >"$page"
    # The last reference of the list ends without a comma once the hidden pages are gone.
    last=$({ grep -n '^\.Xr ' "$page" || true; } | tail -n 1 | cut -d: -f1)
    [ -z "$last" ] || sed -i "${last}s/ ,\$//" "$page"
    [ -z "$(tail -c 1 "$page")" ] || echo >>"$page"  # generate-manual may end without a newline
    # Every command's page points back to the overview.
    if [ "$base" = locafoto ]; then
        :
    elif grep -q '^\.Sh "SEE ALSO"' "$page"; then
        sed -i 's/^\.Sh "SEE ALSO"$/&\n.Xr locafoto 1 ,/' "$page"
    else
        printf '.Sh "SEE ALSO"\n.Xr locafoto 1\n' >>"$page"
    fi
done
# (bash-completion sources the file: a #! line has no use there.)
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$work/locafoto.bash"
"$binary" --generate-completion-script zsh >"$work/_locafoto"
"$binary" --generate-completion-script fish >"$work/locafoto.fish"

# A desktop entry's Exec quotes an argument with reserved characters (spaces here) in "...";
# a unit's ExecStart likewise.
quoted() { case "$1" in *[[:space:]\>\<~\|\&\;\*\?\#\(\)]*) printf '"%s"' "$1" ;; *) printf '%s' "$1" ;; esac; }
sed -e "s|@BINDIR@/locafoto agent|$(quoted "$bindir/locafoto") agent|g" -e "s|@BINDIR@|$bindir|g" \
    "$repo/dist/locafoto.service" >"$work/locafoto.service"
sed -e "s|@OPENER@|$(quoted "$libdir/locafoto-open-file")|" -e "s|@BINDIR@|$bindir|" \
    "$repo/dist/locafoto.desktop" >"$work/locafoto.desktop"
# The launcher: opens the web app in the browser, logged in (`locafoto web --open`).
sed -e "s|@BINDIR@/locafoto web|$(quoted "$bindir/locafoto") web|" -e "s|@BINDIR@|$bindir|" \
    "$repo/dist/locafoto-web.desktop" >"$work/locafoto-web.desktop"
sed -e "s|@BINDIR@|$bindir|" "$repo/dist/locafoto-open-file" >"$work/locafoto-open-file"

source_of() {
    case "$1" in
        */bin/locafoto) printf '%s' "$binary" ;;
        */locafoto-open-file) printf '%s' "$work/locafoto-open-file" ;;
        */locafoto.desktop) printf '%s' "$work/locafoto.desktop" ;;
        */locafoto-web.desktop) printf '%s' "$work/locafoto-web.desktop" ;;
        */mime/packages/locafoto.xml) printf '%s' "$repo/dist/locafoto-mime.xml" ;;
        */man1/locafoto.1) printf '%s' "$work/man/locafoto.1" ;;
        */completions/locafoto) printf '%s' "$work/locafoto.bash" ;;
        */_locafoto) printf '%s' "$work/_locafoto" ;;
        */locafoto.fish) printf '%s' "$work/locafoto.fish" ;;
        */locafoto.service) printf '%s' "$work/locafoto.service" ;;
        *) die "no source for $1" ;;
    esac
}

for entry in "${files[@]}"; do
    path="${entry% *}"
    mode="${entry##* }"
    install -D -m "$mode" "$(source_of "$path")" "$destdir$path"
    echo "installed $destdir$path"
done
for page in "$work"/man/locafoto-*.1; do
    install -D -m 0644 "$page" "$destdir$datadir/man/man1/$(basename "$page")"
done
echo "installed $destdir$datadir/man/man1/locafoto-*.1 ($(ls "$work"/man/locafoto-*.1 | wc -l) pages, one per command)"

refresh_mime
refresh_desktop

echo
echo "$("$destdir$bindir/locafoto" --version 2>/dev/null || echo Locafoto) installed under $prefix."
if [ -n "$destdir" ]; then
    echo "Staged in $destdir: nothing registered (run update-mime-database, update-desktop-database and"
    echo "systemctl --user daemon-reload where it is installed)."
    exit 0
fi
case ":$PATH:" in *":$bindir:"*) ;; *) echo "note: $bindir is not on your PATH; add it (e.g. in ~/.profile)." ;; esac
case "$prefix" in
    /usr | /usr/local) ;;
    *) echo "note: zsh finds the completion if you add  fpath+=($datadir/zsh/site-functions)  to ~/.zshrc before compinit." ;;
esac
echo
echo "To run the agent at login, unlocking the vault from a passphrase file (never the command line):"
echo "  locafoto vault init          # if you have no vault yet"
echo "  mkdir -p $config_home/locafoto"
echo "  (umask 077; systemd-ask-password 'Vault passphrase:' > $config_home/locafoto/vault-passphrase)"
if user_manager; then
    systemctl --user daemon-reload
    echo "  systemctl --user enable --now locafoto"
else
    echo "  systemctl --user daemon-reload        # no user manager is reachable from here"
    echo "  systemctl --user enable --now locafoto"
fi
