#!/usr/bin/env bash
# trainpath io against fio, on the same files in the same folder, in one run:
#   1. random 4 KiB reads, QD32, io_uring, O_DIRECT, over the four files of
#      trainpath's dataset (fio reads those very files): IOPS, latency p50/p99;
#   2. checkpoint-style sequential 1 MiB writes, QD8, io_uring, O_DIRECT, to a
#      fresh file (extending writes on both sides): data-write throughput,
#      plus trainpath's full commit (write + fdatasync + metadata) beside it;
#   3. 4 KiB write + fdatasync, psync, overwriting a laid-out file: the
#      fdatasync latency p50/p99, which must agree within 15 % (both tools time
#      the same system call), and the write latency.
# Each pair alternates trainpath, fio, trainpath, fio, ... (BENCH_ROUNDS,
# default 3, runs a side) and the table compares the medians: ratio =
# trainpath / fio. Not a test: a disagreement does not fail it.
#
# usage: bench/io-vs-fio.sh [BUILD_DIR] [DIR]
#   BUILD_DIR  where trainpath was built (default build)
#   DIR        an existing folder on the storage to measure (default: a fresh
#              folder under /var/tmp, removed at the end); needs ~1.6 GiB free
#   env BENCH_ROUNDS  runs per side and pair (default 3)
#   env BENCH_KEEP=1  keep the JSON results (the path is printed)
set -euo pipefail
BUILD=${1:-build}
DIR_ARG=${2:-}
ROUNDS=${BENCH_ROUNDS:-3}

die() { echo "io-vs-fio: $*" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a whole number >= 1 (got '$ROUNDS')"
[[ -x $BUILD/trainpath ]] || die "no trainpath binary in '$BUILD' (pass the build folder as \$1)"
TP=$(realpath "$BUILD/trainpath")
command -v fio >/dev/null 2>&1 || die "fio is not installed"
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 is needed to read the JSON results"

if [[ -n $DIR_ARG ]]; then
    [[ -d $DIR_ARG && -w $DIR_ARG ]] || die "'$DIR_ARG' is not a writable folder"
    DIR=$(realpath "$DIR_ARG")
    OWN_DIR=0
    for f in fio-seq.bin fio-commit.bin; do
        [[ ! -e $DIR/$f ]] || die "$DIR/$f exists (left by an earlier run?); remove it first"
    done
else
    DIR=$(mktemp -d /var/tmp/tp-bench-io.XXXXXX)
    OWN_DIR=1
fi
# trainpath's own folders in DIR: those that were not there before are removed
TP_DIRS=(trainpath-dataset trainpath-ckpt trainpath-commit)
NEW_TP_DIRS=()
for d in "${TP_DIRS[@]}"; do [[ -e $DIR/$d ]] || NEW_TP_DIRS+=("$d"); done
RES=$(mktemp -d "${TMPDIR:-/tmp}/tp-bench-io.XXXXXX")

cleanup() {
    if ((OWN_DIR)); then
        rm -rf -- "$DIR"
    else
        rm -f -- "$DIR/fio-seq.bin" "$DIR/fio-commit.bin"
        for d in "${NEW_TP_DIRS[@]}"; do rm -rf -- "${DIR:?}/$d"; done
    fi
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "# results kept in $RES"; else rm -rf -- "$RES"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

avail=$(df -B1 --output=avail "$DIR" | tail -1 | tr -d ' ')
((avail > 1800 << 20)) || die "$DIR has $((avail >> 20)) MiB free; the runs need about 1.6 GiB"

# run LOG CMD...: CMD with its output in LOG; a failure stops the benchmark
run() {
    local log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "io-vs-fio: failed: $*" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
}

echo "# $(nproc) cores; kernel $(uname -r); $(fio --version); trainpath $("$TP" --version | awk '{print $NF}')"
echo "# DIR $DIR: stat -f says $(stat -f -c %T "$DIR"); findmnt: $(findmnt -n -T "$DIR" -o TARGET,SOURCE,FSTYPE,OPTIONS)"
echo "# load $(cut -d' ' -f1-4 /proc/loadavg); $ROUNDS rounds per side, trainpath and fio alternating; medians"

DS=$DIR/trainpath-dataset
FILES="$DS/data-0000.bin:$DS/data-0001.bin:$DS/data-0002.bin:$DS/data-0003.bin"
ds_tp=(io dataset "$DIR" --records 131072 --record-size 4K --files 4 --epochs 2 --qd 32
    --direct --engine io_uring -q)
# 512M is the total over the four files (128 MiB each, the size of each);
# fio's random map reads every block of every file once per loop
ds_fio=(--name=randread "--filename=$FILES" --rw=randread --bs=4k --iodepth=32
    --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --size=512M --loops=2
    --lat_percentiles=1 --clat_percentiles=1 --output-format=json)
ck_tp=(io checkpoint "$DIR" --size 1G --shards 1 --repeat 1 --bs 1M --qd 8 --direct
    --engine io_uring -q)
# fallocate=none: fio creates an empty file and extends it, as trainpath does
ck_fio=(--name=seqwrite "--filename=$DIR/fio-seq.bin" --rw=write --bs=1M --iodepth=8
    --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --size=1G
    --fallocate=none --end_fsync=0 --output-format=json)
cm_tp=(io commit "$DIR" --write-size 4K --count 2000 --engine psync --overwrite -q)
# overwrite=1: fio lays the file out with writes (and fsyncs it) first; without
# it, a write job on a new file only fallocates it, and every fdatasync then
# also converts unwritten extents (on ext4 ~1.5x slower)
cm_fio=(--name=commit "--filename=$DIR/fio-commit.bin" --rw=write --bs=4k --ioengine=psync
    --fdatasync=1 --size=8000k --overwrite=1 --output-format=json)

# the dataset is created (buffered) once, unmeasured, and written back;
# every measured trainpath run then reuses it (results.created is checked)
run "$RES/ds-prep.log" "$TP" "${ds_tp[@]}" --epochs 1 --json "$RES/ds-prep.json"
sync "$DS"/data-000[0-3].bin

for ((i = 0; i < ROUNDS; i++)); do
    run "$RES/ds-tp-$i.log" "$TP" "${ds_tp[@]}" --json "$RES/ds-tp-$i.json"
    run "$RES/ds-fio-$i.log" fio "${ds_fio[@]}" "--output=$RES/ds-fio-$i.json"
done
for ((i = 0; i < ROUNDS; i++)); do
    run "$RES/ck-tp-$i.log" "$TP" "${ck_tp[@]}" --json "$RES/ck-tp-$i.json"
    rm -f -- "$DIR/fio-seq.bin"
    run "$RES/ck-fio-$i.log" fio "${ck_fio[@]}" "--output=$RES/ck-fio-$i.json"
    rm -f -- "$DIR/fio-seq.bin"
done
for ((i = 0; i < ROUNDS; i++)); do
    run "$RES/cm-tp-$i.log" "$TP" "${cm_tp[@]}" --json "$RES/cm-tp-$i.json"
    rm -f -- "$DIR/fio-commit.bin"
    run "$RES/cm-fio-$i.log" fio "${cm_fio[@]}" "--output=$RES/cm-fio-$i.json"
    rm -f -- "$DIR/fio-commit.bin"
done

/usr/bin/python3 - "$RES" "$ROUNDS" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
def load(kind, side):
    out = []
    for i in range(n):
        j = json.load(open(f"{d}/{kind}-{side}-{i}.json"))
        out.append(j["results"] if side == "tp" else j["jobs"][0])
    return out
ds_tp, ds_fio, ck_tp, ck_fio, cm_tp, cm_fio = (load(k, s) for k in ("ds", "ck", "cm") for s in ("tp", "fio"))
med = statistics.median
pct = lambda o, p: o["percentile"][f"{p:.6f}"]

rows = []  # (metric, unit, trainpath values, fio values, scale, note)
def row(metric, unit, tp, fio, scale=1.0, note=""):
    rows.append((metric, unit, tp, fio, scale, note))

row("randread 4K QD32: IOPS", "k/s", [r["samples_per_s"]["value"] for r in ds_tp],
    [j["read"]["iops"] for j in ds_fio], 1e-3)
row("randread latency p50 (fio lat)", "us", [r["latency"]["p50"] for r in ds_tp],
    [pct(j["read"]["lat_ns"], 50) for j in ds_fio], 1e-3)
row("randread latency p99 (fio lat)", "us", [r["latency"]["p99"] for r in ds_tp],
    [pct(j["read"]["lat_ns"], 99) for j in ds_fio], 1e-3)
row("randread latency p50 (fio clat)", "us", [r["latency"]["p50"] for r in ds_tp],
    [pct(j["read"]["clat_ns"], 50) for j in ds_fio], 1e-3)
row("randread latency p99 (fio clat)", "us", [r["latency"]["p99"] for r in ds_tp],
    [pct(j["read"]["clat_ns"], 99) for j in ds_fio], 1e-3)
fio_bw = [j["write"]["bw_bytes"] for j in ck_fio]  # B/s
# trainpath: the checkpoint's bytes over its write phase (first write queued to
# last completed, ns), then over the whole commit (write, fdatasync, metadata)
row("seq write 1M QD8: data write", "GB/s",
    [r["checkpoints"][0]["bytes"] / r["checkpoints"][0]["write"]["value"] * 1e9 for r in ck_tp], fio_bw, 1e-9)
row("seq write: trainpath full commit", "GB/s", [r["checkpoints"][0]["throughput"]["value"] for r in ck_tp],
    fio_bw, 1e-9, "write+fdatasync+meta vs fio's write")
sync_rows = len(rows)
row("commit 4K: fdatasync p50", "us", [r["sync_latency"]["p50"] for r in cm_tp],
    [pct(j["sync"]["lat_ns"], 50) for j in cm_fio], 1e-3)
row("commit 4K: fdatasync p99", "us", [r["sync_latency"]["p99"] for r in cm_tp],
    [pct(j["sync"]["lat_ns"], 99) for j in cm_fio], 1e-3)
row("commit 4K: write mean (fio lat)", "us", [r["write_latency"]["mean"] for r in cm_tp],
    [j["write"]["lat_ns"]["mean"] for j in cm_fio], 1e-3)
row("commit 4K: fdatasync mean", "us", [r["sync_latency"]["mean"] for r in cm_tp],
    [j["sync"]["lat_ns"]["mean"] for j in cm_fio], 1e-3)

print("\nper run (trainpath | fio):")
for metric, unit, tp, fio, s, _ in rows:
    f = lambda v: " ".join(f"{x * s:.4g}" for x in v)
    print(f"  {metric + ' (' + unit + ')':<44} {f(tp)} | {f(fio)}")

print(f"\n{'metric':<34} {'unit':>5} | {'trainpath':>10} {'fio':>10} {'ratio':>6} | note")
for k, (metric, unit, tp, fio, s, note) in enumerate(rows):
    a, b = med(tp) * s, med(fio) * s
    r = a / b if b else float("nan")
    if k in (sync_rows, sync_rows + 1):
        note = ("AGREE" if abs(r - 1) <= 0.15 else "DISAGREE") + " (within 15 %)"
    print(f"{metric:<34} {unit:>5} | {a:10.3f} {b:10.3f} {r:6.2f} | {note}")
print("ratio = trainpath / fio: above 1 is faster for IOPS and GB/s, slower for latencies")

notes = []
created = sum(r["created"] for r in ds_tp)
if created:
    notes.append(f"{created} measured trainpath dataset run(s) created the files instead of reusing them")
eng = [r["engine"] for r in ds_tp + ck_tp]
if not all(e["engine"] == "io_uring" and e["registered_buffers"] and e["fixed_files"] for e in eng):
    notes.append("trainpath did not get io_uring with registered buffers and files in every run")
reads = {j["read"]["total_ios"] for j in ds_fio}
if reads != {2 * 131072}:
    notes.append(f"fio randread issued {sorted(reads)} reads, not 2 x 131072")
if any(r["wrong"] for r in ds_tp):
    notes.append("trainpath found wrong records")
for s in notes:
    print("NOTE:", s)
PY
