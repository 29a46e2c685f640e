#!/usr/bin/env bash
# trainpath against PyTorch itself, side by side in one run (not a test):
#   1. a real DistributedDataParallel job (bench/pytorch_ddp.py: an MLP of
#      about 3.4 M parameters, Adam, batch 64, gloo, 2 processes on this
#      host, one thread each) recorded by contrib/pytorch/trainpath_record.py,
#      then trainpath step --workload replaying that recording over 2 ranks
#      on TCP (--intra fabric, as gloo's loopback): the step time, the
#      compute (forward, backward, optimizer) and the exposed communication
#      (the step less the compute) of each, medians over the steps, and
#      replay over real. BENCH_REPS pairs of runs (default 3), alternating.
#   2. torch.distributed's gloo all_reduce against trainpath coll over TCP
#      (--intra fabric, 2 ranks, f32, sum) at 8 B, 64 KiB, 1 MiB and 16 MiB:
#      the mean time of an iteration as each measures it (per iteration the
#      slower rank), and trainpath over gloo. BENCH_REPS runs each.
# Needs python3-torch with gloo (scripts/install-deps.sh installs it).
#
# usage: bench/step-vs-pytorch.sh [BUILD_DIR]     # default build
#   env BENCH_REPS    runs per configuration (default 3)
#   env BENCH_STEPS   recorded and replayed steps (default 30)
#   env BENCH_KEEP=1  keep the scratch folder with the results
set -euo pipefail
BUILD=${1:-build}
REPS=${BENCH_REPS:-3}
STEPS=${BENCH_STEPS:-30}
die() { echo "step-vs-pytorch: $*" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a whole number >= 1 (got '$REPS')"
[[ $STEPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_STEPS must be a whole number >= 1 (got '$STEPS')"
[[ -x $BUILD/trainpath ]] || die "no trainpath binary in '$BUILD' (pass the build folder as \$1)"
TP=$(realpath "$BUILD/trainpath")
PY=/usr/bin/python3
$PY -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null ||
    die "python3-torch with gloo is needed (scripts/install-deps.sh installs it)"
HERE=$(cd "$(dirname "$0")" && pwd)

DIR=$(mktemp -d /var/tmp/tp-bench-torch.XXXXXX)
cleanup() {
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "# results kept in $DIR"; else rm -rf -- "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# a port below the kernel's ephemeral range that no socket holds
port() {
    local p
    for ((;;)); do
        p=$((20000 + RANDOM % 12000))
        ss -Htan "( sport = :$p )" | grep -q . || { echo $p; return; }
    done
}

echo "# $(nproc) cores; torch $($PY -c 'import torch; print(torch.__version__)'); trainpath $("$TP" --version)"
echo "# $REPS runs each, $STEPS steps; results in $DIR"
SIZES=8,65536,1048576,16777216
for ((r = 1; r <= REPS; r++)); do
    $PY "$HERE/pytorch_ddp.py" step "$DIR/wl.$r.json" "$(port)" "$STEPS" >"$DIR/ddp.$r.out" 2>&1 ||
        { cat "$DIR/ddp.$r.out" >&2; die "the PyTorch job failed (run $r)"; }
    "$TP" step -n 2 --intra fabric --workload "$DIR/wl.$r.json" --steps "$STEPS" --no-io \
        --json "$DIR/replay.$r.json" -q >"$DIR/replay.$r.out" 2>&1 ||
        { cat "$DIR/replay.$r.out" >&2; die "trainpath step --workload failed (run $r)"; }
    $PY "$HERE/pytorch_ddp.py" allreduce "$DIR/gloo.$r.json" "$(port)" "$SIZES" 200 >"$DIR/gloo.$r.out" 2>&1 ||
        { cat "$DIR/gloo.$r.out" >&2; die "the gloo allreduce failed (run $r)"; }
    "$TP" coll -n 2 --intra fabric --sizes "$SIZES" --time 300ms --warmup 5 -q \
        --json "$DIR/coll.$r.json" >"$DIR/coll.$r.out" 2>&1 ||
        { cat "$DIR/coll.$r.out" >&2; die "trainpath coll failed (run $r)"; }
done

$PY - "$DIR" "$REPS" <<'PY'
import json, statistics as st, sys
d, reps = sys.argv[1], int(sys.argv[2])
def load(name, r): return json.load(open(f"{d}/{name}.{r}.json"))
def med(v): return st.median(v)
rows = []
for r in range(1, reps + 1):
    w = load("wl", r)
    s = w["steps"]
    comp = [f + b + o for f, b, o in zip(s["forward_ns"], s["backward_ns"], s["optimizer_ns"])]
    real = {"step": med(s["step_ns"]), "compute": med(comp),
            "exposed": med([t - c for t, c in zip(s["step_ns"], comp)])}
    rep = load("replay", r)["results"]
    rows.append((real, rep, rep["runs"][0]["series"]))  # series[key][step][rank]
print("\n## 1. a real DDP step (gloo, 2 processes) against its replay (trainpath step --workload, 2 ranks, TCP): medians over the steps, ms")
print("real: rank 0's recorded step, compute = forward + backward + optimizer, exposed = step - compute; replay: the step and compute of its summary, exposed = comm_exposed over ranks and steps")
print(f"{'run':>3} | {'real step':>9} {'compute':>8} {'exposed':>8} | {'replay step':>11} {'compute':>8} {'exposed':>8} | {'step ratio':>10} {'compute ratio':>13}")
ratios = []
for i, (real, rep, ser) in enumerate(rows, 1):
    wl = rep["workload"]
    rstep = wl["replayed"]["step_p50"]["value"]
    rcomp = wl["replayed"]["compute_p50"]["value"]
    # exposed comm: each rank's comm_exposed, the median over ranks and steps
    rexp = med([x for step in ser["comm_exposed"] for x in step])
    ratios.append((rstep / real["step"], rcomp / real["compute"]))
    print(f"{i:>3} | {real['step']/1e6:9.2f} {real['compute']/1e6:8.2f} {real['exposed']/1e6:8.2f} | "
          f"{rstep/1e6:11.2f} {rcomp/1e6:8.2f} {rexp/1e6:8.2f} | {rstep/real['step']:10.2f} {rcomp/real['compute']:13.2f}")
print(f"median replay/real: step {med([a for a, _ in ratios]):.2f}, compute {med([b for _, b in ratios]):.2f}")
print("buckets replayed (bytes, DDP's firing order):", rows[0][1]["workload"]["replayed"]["bucket_bytes"])

print("\n## 2. allreduce over TCP, 2 ranks, f32: torch.distributed (gloo) against trainpath coll --intra fabric; mean us per iteration (median of the runs), trainpath/gloo time (median, min-max)")
print(f"{'size':>9} | {'gloo':>10} {'trainpath':>10} | {'tp/gloo time':>20}")
for size in ("8", "65536", "1048576", "16777216"):
    g, t, q = [], [], []
    for r in range(1, reps + 1):
        gm = load("gloo", r)["sizes"][size]["mean_ns"]
        tm = next(e["time"]["mean"] for e in load("coll", r)["results"]["sizes"] if e["size_bytes"] == int(size))
        g.append(gm); t.append(tm); q.append(tm / gm)
    print(f"{size:>9} | {med(g)/1e3:10.1f} {med(t)/1e3:10.1f} | {med(q):6.2f} ({min(q):.2f}-{max(q):.2f})")
PY
