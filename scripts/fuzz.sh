#!/usr/bin/env bash
# fuzz.sh - coverage-guided fuzzing (libFuzzer + AddressSanitizer + LeakSanitizer) of every
# parser of untrusted bytes. The targets live in Fuzz/ (a separate SwiftPM package that depends
# on this one by path), one per parser; see docs/fuzzing.md and Fuzz/RESULTS.md.
#
#   scripts/fuzz.sh build                   build every target into .build-fuzz (-sanitize=fuzzer,address; release
#                                           unless FUZZ_CONFIG=debug)
#   scripts/fuzz.sh list                    the target names
#   scripts/fuzz.sh run TARGET|all SECONDS  fuzz each target for SECONDS (one at a time), then print
#                                           "target: N execs, C crashes, L leaks (S s, R exec/s)"
#   scripts/fuzz.sh smoke                   build (debug), then every target for FUZZ_SMOKE_SECONDS (default 8);
#                                           scripts/test.sh does the same, building beside the tests
#   scripts/fuzz.sh repro TARGET FILE...    run the target on these inputs once (a crash reproduces)
#
# Seeds are Fuzz/corpus/<target> (committed; regenerate with Fuzz/make-corpus.py). What the
# fuzzer finds goes to .build-fuzz/corpus/<target> (grows across runs) and crash/leak/timeout
# inputs to .build-fuzz/artifacts/<target>/ (both ignored by git). Extra libFuzzer flags can be
# passed in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-jobs=1 -workers=1"). Runs under `nice` (FUZZ_NICE, 10).
# FUZZ_SCRATCH moves .build-fuzz elsewhere.
# FUZZ_CONFIG: release (the default: the fastest executions, for long runs) or debug (the smoke's:
# built in half the CPU time (4.4 CPU minutes against 8.6 here); -Onone with assertions on, so the
# Swift code runs 1 to 13 times slower while libvips, libheif and libsodium run as fast, and
# every seed input is still run in the smoke's seconds).
# Exit status 1 when any target crashed or leaked.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

ROOT=$PWD
SCRATCH=${FUZZ_SCRATCH:-$ROOT/.build-fuzz}
CONFIG=${FUZZ_CONFIG:-release}
case "$CONFIG" in release | debug) ;; *) echo "fuzz.sh: FUZZ_CONFIG is release or debug, not '$CONFIG'" >&2; exit 2 ;; esac
BIN=$SCRATCH/$CONFIG
NICE=${FUZZ_NICE:-10}
# Swift's backtracer would spend minutes symbolicating every crash; libFuzzer reports it anyway.
export SWIFT_BACKTRACE=enable=no
# Leak detection at exit and after inputs (LeakSanitizer ships in the toolchain's ASan runtime).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

TARGETS=(fuzz-frame fuzz-noise fuzz-hello fuzz-wire-message fuzz-preview fuzz-relay-message fuzz-locaphoto fuzz-loca fuzz-lfs
    fuzz-backup fuzz-txt fuzz-web-login fuzz-localsend fuzz-jpeg fuzz-png fuzz-webp fuzz-heif fuzz-tiff fuzz-exif
    fuzz-image-header)

build() {
    bash scripts/setup.sh >/dev/null
    echo "== building fuzz targets ($CONFIG) into $SCRATCH"
    local start=$SECONDS
    # ld.gold cannot link these (internal error); lld comes with the Swift toolchain. ld prints
    # harmless "Cannot export local symbol __asan_*" lines, filtered out.
    # A failed build must fail here: binaries left by an earlier build would otherwise be fuzzed
    # as if they were current.
    local status=0
    (cd Fuzz && nice -n "$NICE" swift build -c "$CONFIG" --scratch-path "$SCRATCH" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld 2>&1) \
        | grep -v -e "Cannot export local symbol" -e "prohibited flag(s): -pthread" || status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || { echo "fuzz.sh: the build failed (status $status)" >&2; exit 1; }
    for t in "${TARGETS[@]}"; do
        [ -x "$BIN/$t" ] || { echo "fuzz.sh: $t was not built" >&2; exit 1; }
    done
    echo "== built ${#TARGETS[@]} targets in $((SECONDS - start)) s"
}

known() {
    local t
    for t in "${TARGETS[@]}"; do [ "$t" = "$1" ] && return 0; done
    echo "fuzz.sh: unknown target '$1' (scripts/fuzz.sh list)" >&2
    exit 2
}

# run_one TARGET SECONDS: fuzz, then print the summary line; returns 1 on a crash or leak.
run_one() {
    local t=$1 seconds=$2
    local work=$SCRATCH/corpus/$t art=$SCRATCH/artifacts/$t log=$SCRATCH/logs/$t.log
    mkdir -p "$work" "$art" "$SCRATCH/logs"
    local before
    # Inputs that made the target fail (crash-, leak-, timeout-, oom-). Not slow-unit-: libFuzzer
    # writes those for any input that took over 10 s of wall time, which a paused or starved
    # process produces without any fault of the target's.
    failures() { find "$art" -type f ! -name 'slow-unit-*' | wc -l; }
    before=$(failures)
    local dict=()
    [ -f "Fuzz/dict/$t.dict" ] && dict=("-dict=Fuzz/dict/$t.dict")
    local start=$SECONDS
    # shellcheck disable=SC2086
    nice -n "$NICE" "$BIN/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_FLAGS:-} "$work" "Fuzz/corpus/$t" >"$log" 2>&1 || true
    local elapsed=$((SECONDS - start))
    local execs crashes leaks rate
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    if [ -z "$execs" ]; then  # stopped by a crash: the last status line has the count
        execs=$(grep -o '^#[0-9]*' "$log" | tail -n1 | tr -d '#')
    fi
    execs=${execs:-0}
    leaks=$(grep -c "ERROR: LeakSanitizer" "$log" || true)
    crashes=$(($(failures) - before - leaks))
    [ "$crashes" -lt 0 ] && crashes=0
    rate=$((execs / (elapsed > 0 ? elapsed : 1)))
    echo "$t: $execs execs, $crashes crashes, $leaks leaks ($elapsed s, $rate exec/s)"
    if [ "$crashes" -gt 0 ] || [ "$leaks" -gt 0 ]; then
        echo "   log: $log; inputs: $art" >&2
        grep -m5 -e "FUZZ PROPERTY VIOLATED" -e "ERROR: " -e "Fatal error" "$log" | sed 's/^/   /' >&2 || true
        return 1
    fi
}

run() {
    local which=$1 seconds=$2 failed=0 t
    local list=("${TARGETS[@]}")
    [ "$which" != all ] && { known "$which"; list=("$which"); }
    for t in "${list[@]}"; do
        [ -x "$BIN/$t" ] || { echo "fuzz.sh: $t is not built; run scripts/fuzz.sh build" >&2; exit 1; }
        run_one "$t" "$seconds" || failed=1
    done
    return $failed
}

case "${1:-}" in
    build) build ;;
    list) printf '%s\n' "${TARGETS[@]}" ;;
    run)
        [ $# -eq 3 ] || { echo "usage: scripts/fuzz.sh run TARGET|all SECONDS" >&2; exit 2; }
        run "$2" "$3"
        ;;
    smoke)
        start=$SECONDS
        CONFIG=${FUZZ_CONFIG:-debug}
        BIN=$SCRATCH/$CONFIG
        build
        run all "${FUZZ_SMOKE_SECONDS:-8}" && status=0 || status=1
        echo "== fuzz smoke: $((SECONDS - start)) s in all"
        exit $status
        ;;
    repro)
        [ $# -ge 3 ] || { echo "usage: scripts/fuzz.sh repro TARGET FILE..." >&2; exit 2; }
        known "$2"
        t=$2
        shift 2
        "$BIN/$t" -runs=1 "$@"
        ;;
    *)
        sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
