#!/usr/bin/env bash
# fuzz/campaign.sh [SECONDS_PER_HARNESS] [--update] [HARNESS...]
#
# The long fuzzing campaign (`make check` only replays the corpora and
# explores for a few seconds). Builds the fuzz build if needed (BUILD,
# default build-fuzz: clang, ASan + UBSan, -Dfuzz=true), then runs every
# harness (or the ones named: wire auth plan ...) for SECONDS (default 600)
# on a copy of its committed corpus, restarting after a finding until the
# time is spent, merges what it found into a minimal corpus (-merge=1) and
# prints a table per harness: executions, executions per second, the
# merged corpus (files, KiB), coverage (libFuzzer's cov: edges, ft:
# features, at the end) and the findings (crash, leak, timeout, oom). The
# inputs behind findings stay in OUT/NAME/artifacts (OUT: BUILD/campaign).
#
# The harnesses' scratch files (each input written as the file its parser
# reads) go to SCRATCH, default /dev/shm where it is writable: on a disk
# the writes cost the file-reading harnesses half their speed. Two
# campaigns with different harnesses may run at once (one per core).
#
# --update replaces fuzz/corpus/NAME with the merged corpus (keeping the
# regress-* inputs there: past findings, replayed by every `make check`).
# Exit status: 1 when anything was found, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=600
UPDATE=0
NAMES=()
for a in "$@"; do
    case "$a" in
    --update) UPDATE=1 ;;
    '' | *[!0-9]*) NAMES+=("$a") ;;
    *) SECS=$a ;;
    esac
done
BUILD=${BUILD:-build-fuzz}
OUT=${OUT:-$BUILD/campaign}
SCRATCH=${SCRATCH:-/dev/shm}
[ -d "$SCRATCH" ] && [ -w "$SCRATCH" ] || SCRATCH=${TMPDIR:-/tmp}
[ ${#NAMES[@]} -gt 0 ] || NAMES=(wire auth plan policy gate report fleet hist facts frames history triage)

command -v clang >/dev/null || { echo "campaign: clang is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
if [ ! -f "$BUILD/build.ninja" ]; then
    CC=clang meson setup "$BUILD" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        --buildtype=debugoptimized >/dev/null || { echo "campaign: meson setup $BUILD failed" >&2; exit 2; }
fi
meson compile -C "$BUILD" fuzzers >/dev/null || { echo "campaign: building the harnesses failed" >&2; exit 2; }

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0
found_any=0
rows=()
for name in "${NAMES[@]}"; do
    exe=$BUILD/fuzz/fuzz_$name
    [ -x "$exe" ] || { echo "campaign: no harness $exe" >&2; exit 2; }
    work=$OUT/$name
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/merged" "$work/artifacts"
    scratch=$(mktemp -d "$SCRATCH/tp-campaign-$name.XXXXXX") || { echo "campaign: no scratch folder in $SCRATCH" >&2; exit 2; }
    [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/corpus/"
    flags=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/")
    [ -f "fuzz/dict/$name.dict" ] && flags+=(-dict="fuzz/dict/$name.dict")
    export TMPDIR=$scratch
    echo "campaign: fuzz_$name for ${SECS}s" >&2
    start=$(date +%s)
    execs=0 runs=0
    while :; do
        left=$((SECS - ($(date +%s) - start)))
        [ "$left" -ge 1 ] || break
        runs=$((runs + 1))
        "$exe" "${flags[@]}" -max_total_time="$left" "$work/corpus" >"$work/run$runs.log" 2>&1
        rc=$?
        n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/run$runs.log")
        execs=$((execs + ${n:-0}))
        # a finding stops libFuzzer: go on with the time left, at most 20 times
        [ "$rc" -ne 0 ] && [ "$runs" -lt 20 ] || break
    done
    elapsed=$(($(date +%s) - start))
    "$exe" -merge=1 "$work/merged" "$work/corpus" >"$work/merge.log" 2>&1
    rm -rf "$scratch"
    last=$(grep -h -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$work/run$runs.log" | tail -n 1)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    files=$(find "$work/merged" -type f | wc -l)
    kib=$(($(find "$work/merged" -type f -exec cat {} + | wc -c) / 1024))
    count() { find "$work/artifacts" -name "$1-*" | wc -l; }
    crash=$(count crash) leak=$(count leak) timeout=$(count timeout) oom=$(count oom)
    [ $((crash + leak + timeout + oom)) -gt 0 ] && found_any=1
    rows+=("$(printf '%-8s %12d %9d %7d %7d %6s %6s %6d %5d %8d %4d' "$name" "$execs" \
        $((execs / (elapsed > 0 ? elapsed : 1))) "$files" "$kib" "${cov:-?}" "${ft:-?}" \
        "$crash" "$leak" "$timeout" "$oom")")
    if [ "$UPDATE" -eq 1 ]; then
        mkdir -p "fuzz/corpus/$name"
        find "fuzz/corpus/$name" -type f ! -name 'regress-*' -delete
        cp "$work/merged/"* "fuzz/corpus/$name/" 2>/dev/null
    fi
done

printf '\n%-8s %12s %9s %7s %7s %6s %6s %6s %5s %8s %4s\n' harness execs execs/s files KiB \
    cov ft crash leak timeout oom
printf '%s\n' "${rows[@]}"
echo "(${SECS}s per harness; corpus: the merged corpus; cov/ft: libFuzzer's at the end;" \
    "findings in $OUT/NAME/artifacts)"
exit "$found_any"
