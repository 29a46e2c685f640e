#!/usr/bin/env bash
# Allreduce, two local ranks, 8 B to 64 MiB: trainpath against Open MPI's
# MPI_Allreduce in one run, each on shared memory and on TCP, both measured
# by the same sweep (trainpath coll --backend mpi times MPI the way it times
# itself: per-iteration maximum over ranks), both launched by the same
# mpirun with the same core binding; and trainpath's --repro exact on both,
# against its own plain allreduce and against Open MPI's plain one.
# Every configuration runs BENCH_REPS times (default 3), alternating; the
# tables print medians, and the spread (min-max over the runs) of the
# ratios; and the shared-memory busbw at 1 MiB and more as a fraction of
# this machine's memory-copy bandwidth at that size (build/memcpy_bw: the
# source from memory, not the cache; measured in the same run, after the
# collectives). Not a test.
#
# usage: bench/coll-vs-mpi.sh [BUILD_DIR] [SIZES] [TIME_PER_SIZE]
#   env BENCH_REPS    runs per configuration (default 3)
set -euo pipefail
BUILD=${1:-build}
SIZES=${2:-8-64M}
TIME=${3:-300ms}
REPS=${BENCH_REPS:-3}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "coll-vs-mpi: BENCH_REPS must be a whole number >= 1 (got '$REPS')" >&2; exit 2; }
TP=$(realpath "$BUILD/trainpath")
OUT=$(mktemp -d /tmp/tp-bench-coll.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { mpirun -np 2 --bind-to core --map-by core "$@"; }
common=(coll --sizes "$SIZES" --time "$TIME" --warmup 5 -q)

echo "# $(nproc) cores; $(mpirun --version | head -1); trainpath $("$TP" --version); $REPS runs each"
echo "# results in $OUT"
for ((r = 1; r <= REPS; r++)); do
    mpi "$TP" "${common[@]}" --json "$OUT/tp_shm.$r.json"
    mpi --mca btl self,vader "$TP" "${common[@]}" --backend mpi --json "$OUT/mpi_shm.$r.json"
    mpi "$TP" "${common[@]}" --repro exact --json "$OUT/ex_shm.$r.json"
    mpi "$TP" "${common[@]}" --intra fabric --json "$OUT/tp_tcp.$r.json"
    mpi --mca btl self,tcp "$TP" "${common[@]}" --backend mpi --json "$OUT/mpi_tcp.$r.json"
    mpi "$TP" "${common[@]}" --intra fabric --repro exact --json "$OUT/ex_tcp.$r.json"
done

MEMCPY=$(realpath "$BUILD/memcpy_bw")
/usr/bin/python3 - "$OUT" "$REPS" "$MEMCPY" <<'PY'
import json, statistics as st, subprocess, sys
d, reps, memcpy_bw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = ("tp_shm", "mpi_shm", "ex_shm", "tp_tcp", "mpi_tcp", "ex_tcp")
def load(name, r):
    return {e["size_bytes"]: e for e in json.load(open(f"{d}/{name}.{r}.json"))["results"]["sizes"]}
runs = {n: [load(n, r) for r in range(1, reps + 1)] for n in names}
sizes = sorted(runs["tp_shm"][0])
def t(n, s, r): return runs[n][r][s]["time"]["mean"]          # ns, mean over iterations
def bw(n, s, r): return runs[n][r][s]["busbw"]["value"] / 1e9
def med_bw(n, s): return st.median(bw(n, s, r) for r in range(reps))
def ratio(f, s):  # median and spread of a per-run ratio
    v = [f(s, r) for r in range(reps)]
    return st.median(v), min(v), max(v)
def fmt(x): return f"{x[0]:5.2f} ({x[1]:.2f}-{x[2]:.2f})"
def name(s): return f"{s}" if s < 1024 else f"{s>>10}K" if s < 1 << 20 else f"{s>>20}M"

print("\n## plain allreduce: busbw GB/s (median), trainpath / Open MPI (median of the runs' ratios, min-max)")
print(f"{'size':>6} | {'shm tp':>7} {'MPI':>7} {'ratio':>17} | {'tcp tp':>7} {'MPI':>7} {'ratio':>17}")
for s in sizes:
    r1 = ratio(lambda s, r: bw("tp_shm", s, r) / bw("mpi_shm", s, r) if bw("mpi_shm", s, r) else 0, s)
    r2 = ratio(lambda s, r: bw("tp_tcp", s, r) / bw("mpi_tcp", s, r) if bw("mpi_tcp", s, r) else 0, s)
    print(f"{name(s):>6} | {med_bw('tp_shm', s):7.3f} {med_bw('mpi_shm', s):7.3f} {fmt(r1):>17} | "
          f"{med_bw('tp_tcp', s):7.3f} {med_bw('mpi_tcp', s):7.3f} {fmt(r2):>17}")

print("\n## --repro exact: time over trainpath's plain and over Open MPI's plain allreduce (median of the runs' ratios, min-max)")
print(f"{'size':>6} | {'shm exact/plain':>17} {'exact/MPI':>17} | {'tcp exact/plain':>17} {'exact/MPI':>17}")
for s in sizes:
    cols = [ratio(lambda s, r, a=a, b=b: t(a, s, r) / t(b, s, r), s)
            for a, b in (("ex_shm", "tp_shm"), ("ex_shm", "mpi_shm"), ("ex_tcp", "tp_tcp"), ("ex_tcp", "mpi_tcp"))]
    print(f"{name(s):>6} | {fmt(cols[0]):>17} {fmt(cols[1]):>17} | {fmt(cols[2]):>17} {fmt(cols[3]):>17}")

big = [s for s in sizes if s >= 1 << 20]
if big:
    out = subprocess.run([memcpy_bw] + [str(s) for s in big], capture_output=True, text=True, check=True).stdout
    mem = {int(a): float(b) for a, b in (l.split() for l in out.splitlines())}
    print("\n## shared memory against memcpy: trainpath's busbw (median) over this core's memcpy bandwidth at that size (target >= 0.8)")
    print(f"{'size':>6} | {'busbw GB/s':>10} {'memcpy GB/s':>11} {'fraction':>8} | {'met?':>4}")
    for s in big:
        f = med_bw("tp_shm", s) / mem[s]
        print(f"{name(s):>6} | {med_bw('tp_shm', s):10.3f} {mem[s]:11.3f} {f:8.2f} | {'yes' if f >= 0.8 else 'NO':>4}")

s = sizes[0]
lat = {n: st.median(t(n, s, r) for r in range(reps)) / 1e3 for n in names}
print(f"\nlatency at {s} B (median of the means, us): shm trainpath {lat['tp_shm']:.2f} vs OpenMPI {lat['mpi_shm']:.2f}"
      f" (ratio {lat['tp_shm']/lat['mpi_shm']:.2f}); tcp trainpath {lat['tp_tcp']:.2f} vs OpenMPI {lat['mpi_tcp']:.2f}"
      f" (ratio {lat['tp_tcp']/lat['mpi_tcp']:.2f})")
print("algorithms (trainpath shm, run 1):", ", ".join(f"{name(k)}:{v['algo']}" for k, v in sorted(runs["tp_shm"][0].items())))
print("any wrong:", sum(e["wrong"] for n in names for run in runs[n] for e in run.values()))
PY
