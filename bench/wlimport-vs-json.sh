#!/usr/bin/env bash
# trainpath workload import against Python's json.load of the same trace,
# side by side in one run (not a test): the way the common analysis tools
# (HTA, TraceLens, torch's own) read a torch.profiler trace is json.load of
# the whole file. A real trace (tests/fixtures/traces/, NCCL DDP on two
# A100s, from HolisticTraceAnalysis) is repeated to 10 MB, 100 MB, 1 GB and
# 2 GB by tests/integration/wlimport/gen_trace.py, plain and gzipped (the
# gzipped copy of the 100 MB one: what tensorboard_trace_handler writes),
# and each is read by both: wall time and peak memory (GNU time's maximum
# resident set), the median of BENCH_REPS runs, and trainpath over Python.
# Python reads a .gz through gzip.open, as those tools do.
#
# usage: bench/wlimport-vs-json.sh [BUILD_DIR]     # default build
#   env BENCH_REPS     runs per file and reader (default 3)
#   env BENCH_SIZES    the sizes in MB (default "10 100 1000 2000")
#   env BENCH_PY_MAX   the largest size (MB) Python is asked to read (default
#                      2000: json.load of 2 GB needs about 10 GB of memory)
#   env BENCH_KEEP=1   keep the scratch folder
set -euo pipefail
BUILD=${1:-build}
REPS=${BENCH_REPS:-3}
SIZES=${BENCH_SIZES:-10 100 1000 2000}
PYMAX=${BENCH_PY_MAX:-2000}
die() { echo "wlimport-vs-json: $*" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a whole number >= 1 (got '$REPS')"
[[ -x $BUILD/trainpath ]] || die "no trainpath binary in '$BUILD' (pass the build folder as \$1)"
[[ -x /usr/bin/time ]] || die "GNU time is needed (apt-get install time)"
TP=$(realpath "$BUILD/trainpath")
HERE=$(cd "$(dirname "$0")/.." && pwd)
SRC=$HERE/tests/fixtures/traces/hta_nccl_ddp_ws2_r0.json.gz
GEN=$HERE/tests/integration/wlimport/gen_trace.py
DIR=$(mktemp -d /var/tmp/tp-bench-wlimport.XXXXXX)
cleanup() {
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "# results kept in $DIR"; else rm -rf -- "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one run: "seconds kilobytes" of a command, its output thrown away
measure() { /usr/bin/time -f "%e %M" -o "$DIR/t" "$@" >/dev/null 2>"$DIR/err" ||
    { cat "$DIR/err" >&2; die "failed: $*"; }; cat "$DIR/t"; }
# the median of REPS runs: "seconds kilobytes" (each the median of its own)
median() {
    local s=() m=() i
    for ((i = 0; i < REPS; i++)); do read -r a b < <(measure "$@"); s+=("$a"); m+=("$b"); done
    printf '%s\n' "${s[@]}" | sort -g | sed -n "$(((REPS + 1) / 2))p" | tr '\n' ' '
    printf '%s\n' "${m[@]}" | sort -g | sed -n "$(((REPS + 1) / 2))p"
}

echo "# trainpath workload import vs python3 json.load, $(nproc) CPUs, $(date -u +%F)"
echo "# source: $(basename "$SRC") repeated; median of $REPS runs"
printf '| %-10s | %12s | %10s | %12s | %10s | %8s | %8s |\n' file "trainpath s" "MiB" "json.load s" "MiB" speedup "mem"
printf '|%s|\n' "------------|--------------|------------|--------------|------------|----------|----------"
row() { # name file
    local f=$2 t tm p pm
    read -r t tm < <(median "$TP" workload import -q --out "$DIR/out.json" --samples 1 --sample-bytes 4 "$f")
    local mb=$(($(stat -c %s "$f") / 1000000))
    if ((mb <= PYMAX)); then
        if [[ $f == *.gz ]]; then
            read -r p pm < <(median python3 -c "import gzip, json, sys; json.load(gzip.open(sys.argv[1], 'rt'))" "$f")
        else
            read -r p pm < <(median python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$f")
        fi
        awk -v n="$1" -v t="$t" -v tm="$tm" -v p="$p" -v pm="$pm" 'BEGIN {
            printf "| %-10s | %12.2f | %10.0f | %12.2f | %10.0f | %7.1fx | %7.1fx |\n",
                n, t, tm / 1024, p, pm / 1024, p / t, pm / tm }'
    else
        awk -v n="$1" -v t="$t" -v tm="$tm" 'BEGIN {
            printf "| %-10s | %12.2f | %10.0f | %12s | %10s | %8s | %8s |\n", n, t, tm / 1024,
                "-", "-", "-", "-" }'
    fi
}
for mb in $SIZES; do
    python3 "$GEN" "$SRC" "${mb}e6" >"$DIR/t$mb.json" 2>/dev/null
    row "${mb} MB" "$DIR/t$mb.json"
    if [[ $mb == 100 ]]; then
        python3 "$GEN" "$SRC" "${mb}e6" --gzip >"$DIR/t$mb.json.gz" 2>/dev/null
        row "${mb} MB .gz" "$DIR/t$mb.json.gz"
    fi
    rm -f "$DIR/t$mb.json" "$DIR/t$mb.json.gz"
done
