#!/usr/bin/env bash
# bench-catalog.sh - the sealed vault catalog at 100,000 photos: unlock, memory, every list query.
#
#   scripts/bench-catalog.sh [COUNT] [RUNS]      (default 100000 photos, 20 runs per query)
#
# Creates a vault with `locafoto vault init` (the real migrations build the schema), fills its
# catalog with COUNT synthetic photo rows, tags and album memberships straight through SQLite
# (Python's sqlite3: the same system SQLite the vault uses through GRDB) in clear, as a catalog
# of the previous version holds them; then locafoto-catalog-bench (release) unlocks it — which
# seals every row — and times a second unlock (the decrypted mirror), its memory and every query
# kind of `list` through the vault's API. Only the catalog is measured: the rows point at LOCA
# files that do not exist. Not a test: it prints numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-100000}
RUNS=${2:-20}

swift build -c release --product locafoto 2>&1 | tail -n 1
swift build -c release --product locafoto-catalog-bench 2>&1 | tail -n 1
BIN="$(swift build -c release --show-bin-path)/locafoto"
CBENCH="$(swift build -c release --show-bin-path)/locafoto-catalog-bench"

W=$(mktemp -d /tmp/locafoto-bench-catalog.XXXXXX)
trap 'rm -rf "$W"' EXIT
(umask 077; printf 'bench-catalog passphrase\n' >"$W/passphrase")
"$BIN" vault init --home "$W/home" --passphrase-file "$W/passphrase" --kdf interactive >/dev/null
python3 scripts/bench-catalog.py --fill-only "$W/home/vault/catalog.sqlite" "$COUNT"
"$CBENCH" "$W/home/vault" "$W/passphrase" "$RUNS"
