#!/usr/bin/env bash
# Allreduce, two local ranks, 8 B to 64 MiB: trainpath against Open MPI's
# MPI_Allreduce in one run, each on shared memory and on TCP, both measured
# by the same sweep (trainpath coll --backend mpi times MPI the way it times
# itself: per-iteration maximum over ranks), both launched by the same
# mpirun with the same core binding. Also --repro exact against plain.
# Prints busbw and latency per size and the ratios. Not a test.
#
# usage: bench/coll-vs-mpi.sh [BUILD_DIR] [SIZES] [TIME_PER_SIZE]
set -euo pipefail
BUILD=${1:-build}
SIZES=${2:-8-64M}
TIME=${3:-300ms}
TP=$(realpath "$BUILD/trainpath")
OUT=$(mktemp -d /tmp/tp-bench-coll.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { mpirun -np 2 --bind-to core --map-by core "$@"; }
common=(coll --sizes "$SIZES" --time "$TIME" --warmup 5 -q)

echo "# $(nproc) cores; $(mpirun --version | head -1); trainpath $("$TP" --version)"
echo "# results in $OUT"
mpi "$TP" "${common[@]}" --json "$OUT/tp_shm.json"
mpi --mca btl self,vader "$TP" "${common[@]}" --backend mpi --json "$OUT/mpi_shm.json"
mpi "$TP" "${common[@]}" --intra fabric --json "$OUT/tp_tcp.json"
mpi --mca btl self,tcp "$TP" "${common[@]}" --backend mpi --json "$OUT/mpi_tcp.json"
mpi "$TP" "${common[@]}" --repro exact --json "$OUT/tp_exact.json"

/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return {e["size_bytes"]: e for e in json.load(open(f"{d}/{name}.json"))["results"]["sizes"]}
tp_shm, mpi_shm, tp_tcp, mpi_tcp, ex = (load(n) for n in ("tp_shm", "mpi_shm", "tp_tcp", "mpi_tcp", "tp_exact"))
def bw(e): return e["busbw"]["value"] / 1e9
def us(e): return e["time"]["mean"] / 1e3
print(f"{'size':>9} | {'shm: trainpath':>14} {'OpenMPI':>8} {'ratio':>6} | {'tcp: trainpath':>14} {'OpenMPI':>8} {'ratio':>6} | {'exact/plain':>11}")
print(f"{'':>9} | {'busbw GB/s':>14} {'':>8} {'':>6} | {'busbw GB/s':>14} {'':>8} {'':>6} | {'time':>11}")
for s in sorted(tp_shm):
    name = f"{s}" if s < 1024 else f"{s>>10}K" if s < 1 << 20 else f"{s>>20}M"
    a, b, c, e, x = tp_shm[s], mpi_shm[s], tp_tcp[s], mpi_tcp[s], ex[s]
    r1 = bw(a) / bw(b) if bw(b) else 0
    r2 = bw(c) / bw(e) if bw(e) else 0
    print(f"{name:>9} | {bw(a):14.3f} {bw(b):8.3f} {r1:6.2f} | {bw(c):14.3f} {bw(e):8.3f} {r2:6.2f} | {us(x)/us(a):11.2f}")
s = min(tp_shm)
print(f"\nlatency at {s} B (mean, us): shm trainpath {us(tp_shm[s]):.2f} vs OpenMPI {us(mpi_shm[s]):.2f}"
      f" (ratio {us(tp_shm[s])/us(mpi_shm[s]):.2f}); tcp trainpath {us(tp_tcp[s]):.2f} vs OpenMPI {us(mpi_tcp[s]):.2f}"
      f" (ratio {us(tp_tcp[s])/us(mpi_tcp[s]):.2f})")
print("algorithms (trainpath shm):", ", ".join(f"{k}:{v['algo']}" for k, v in sorted(tp_shm.items())))
print("any wrong:", sum(e["wrong"] for t in (tp_shm, mpi_shm, tp_tcp, mpi_tcp, ex) for e in t.values()))
PY
