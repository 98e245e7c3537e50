#!/usr/bin/env bash
# bench-catalog.sh - PhotoQuery on a 100,000-photo vault catalog: plans and timings.
#
#   scripts/bench-catalog.sh [COUNT] [RUNS]      (default 100000 photos, 20 runs per query)
#
# Creates a vault with `locafoto vault init` (the real migrations build the schema), fills its
# catalog with COUNT synthetic photo rows, tags and album memberships straight through SQLite
# (Python's sqlite3: the same system SQLite the vault uses through GRDB), then times every query
# kind PhotoQuery compiles to and prints its EXPLAIN QUERY PLAN (scripts/bench-catalog.py).
# Only the catalog is measured: the rows point at LOCA files that do not exist.
# Exits non-zero if an unfiltered sort needs a temporary b-tree. Not a test otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-100000}
RUNS=${2:-20}

swift build --product locafoto 2>&1 | tail -n 1
BIN="$(swift build --show-bin-path)/locafoto"

W=$(mktemp -d /tmp/locafoto-bench-catalog.XXXXXX)
trap 'rm -rf "$W"' EXIT
printf 'bench-catalog passphrase\n' >"$W/passphrase"
"$BIN" vault init --home "$W/home" --passphrase-file "$W/passphrase" --kdf interactive >/dev/null
python3 scripts/bench-catalog.py "$W/home/vault/catalog.sqlite" "$COUNT" "$RUNS"
