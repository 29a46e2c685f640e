#!/usr/bin/env bash
# The plan's acceptance: fed with net, coll and io results measured on this
# machine, `trainpath plan` predicts the mean step time of a `trainpath step`
# run on the same machine (2 local ranks, the resnet50 preset at scale 0.1)
# within 15 %, without and with checkpoints. Nothing of the step runs is fed
# to the plan: its compute time is the preset's nominal one. A second plan
# takes the compute distribution from a compute-only step run (the same
# ranks with a 4 KiB gradient), as a user calibrating a plan would, and must
# come within 15 % as well.
#
# The step runs generate their samples in memory (--no-io): the plan is told
# nothing of the dataset, and on a 2-core machine the loader's reads take
# CPU from the comm threads, which a GPU node's loader does not take.
#
# The test holds on a loaded machine by comparing against the noise it
# measures in the same run, not against a quiet machine's: each step run is
# made twice, before and after the inputs are measured, and the tolerance
# of a prediction is 15 % or three times the relative difference of the two
# runs, whichever is larger. The nominal plan assumes 10 ms of compute; what
# other load on the machine stretches that (the compute-only run's measured
# mean against 10 ms) counts as noise for it too. On a quiet machine both
# are a few per cent and the tolerance is the 15 % of the acceptance. A miss
# still measures everything again, up to two more times; every attempt's
# figures are printed, and the last must pass.
. "$(dirname "$0")/../lib.sh"

D=$WORK/data
mkdir -p "$D"
start_server srv -- --bind 127.0.0.1 || { echo "Bail out! no server"; exit 1; }

cat >"$WORK/plan.yaml" <<'PLAN'
# this machine: one node, two ranks; the preset at scale 0.1: 2.56 M
# parameters, fp32 gradients (10.24 MB), 10 ms of compute, 256 samples per
# rank, checkpoint 14 B/param (35.84 MB)
workload:
  name: resnet50-scale-0.1
  parameters: 2.56M
  gradient_bytes_per_parameter: 4
  samples_per_gpu: 256
  compute_time: 10ms
  train_samples: 1M
cluster:
  nodes: 1
  gpus_per_node: 2
  intra_node:
    latency: {measured: coll.json}
    bandwidth: {measured: coll.json}
  mtbf_job: 24h
  restart: 1m
prices:
  gpu_hour: 1
candidates:
  - name: this-machine
    network:
      latency: {measured: net-lat.json}
      bandwidth: {measured: net-bw.json}
    storage:
      write_bandwidth: {measured: io-ckpt.json}
      commit_latency: {measured: io-ckpt.json}
simulate:
  steps: 200
PLAN

# measure A: inputs, plans and step runs into $WORK/A; each failure is named
measure() {
    local A=$WORK/$1 r
    mkdir -p "$A"
    cp "$WORK/plan.yaml" "$A/plan.yaml"
    sed -e 's/compute_time: 10ms/compute_time: {measured: compute.json}/' "$A/plan.yaml" >"$A/plan2.yaml"
    r=(
        "step -n 2 --preset resnet50 --scale 0.1 (before the inputs)|s1a|$TP step -n 2 --preset resnet50 --scale 0.1 --steps 100 --no-io --dir $D --json $A/s1a.json -q"
        "step ... --ckpt-every 10 (before the inputs)|s2a|$TP step -n 2 --preset resnet50 --scale 0.1 --steps 100 --no-io --ckpt-every 10 --dir $D --json $A/s2a.json -q"
        "coll: allreduce over 2 local ranks (shm), 8 B to 16 MiB|coll|$TP coll -n 2 --op allreduce --sizes 8-16M --time 50ms --json $A/coll.json -q"
        "net lat over loopback|lat|$TP net lat 127.0.0.1 -p $PORT --time 0.3 --sizes 8 --json $A/net-lat.json"
        "net bw over loopback|bw|$TP net bw 127.0.0.1 -p $PORT --time 0.3 --sizes 1M --json $A/net-bw.json"
        "io checkpoint: the step's checkpoint size, one shard and one writer per rank|ck|$TP io checkpoint --dir $D --size 35840000 --shards 2 --jobs 2 --repeat 5 --json $A/io-ckpt.json -q"
        "a compute-only step run (4 KiB gradient)|c|$TP step -n 2 --preset resnet50 --scale 0.1 --grad-size 4K --steps 40 --no-io --dir $D --json $A/compute.json -q"
        "plan the machine from its measured results|plan|$TP plan $A/plan.yaml --json $A/plan.json"
        "plan with the measured compute distribution|plan2|$TP plan $A/plan2.yaml --json $A/plan2.json"
        "step -n 2 --preset resnet50 --scale 0.1 (after the inputs)|s1|$TP step -n 2 --preset resnet50 --scale 0.1 --steps 100 --no-io --dir $D --json $A/s1.json -q"
        "step ... --ckpt-every 10 (after the inputs)|s2|$TP step -n 2 --preset resnet50 --scale 0.1 --steps 100 --no-io --ckpt-every 10 --dir $D --json $A/s2.json -q"
    )
    local e desc name cmd
    for e in "${r[@]}"; do
        IFS='|' read -r desc name cmd <<<"$e"
        # shellcheck disable=SC2086 # the command line is split on purpose
        check "$1: $desc" run_rc 0 "$A/$name.out" $cmd || return 1
    done
}

STEP="r['candidates'][0]['step']['value']"
CKPT="$STEP + r['candidates'][0]['checkpoint']['stall']['value'] / 10"
# errors A: print attempt A's four predictions against the measured means
# (of the runs before and after the inputs) as TAP comments; write the
# relative errors to $WORK/A/errors and each one's tolerance to
# $WORK/A/tolerances
errors() {
    local A=$WORK/$1
    /usr/bin/python3 - "$A" "$STEP" "$CKPT" "$1" <<'PY'
import json, sys
A, step, ckpt, name = sys.argv[1:5]
def pred(f, expr):
    r = json.load(open(f"{A}/{f}"))["results"]
    return eval(expr)
def mean(f):
    return json.load(open(f"{A}/{f}"))["results"]["runs"][0]["step_time"]["mean"] / 1e9
# the compute-only run: every rank's compute of every step but the first
series = json.load(open(f"{A}/compute.json"))["results"]["runs"][0]["series"]["compute"]
c = [x for per in series[1:] for x in per]
stretch = max(0.0, sum(c) / len(c) / 1e7 - 1) if c else 0.0
errs, tols = [], []
for plan in ("plan.json", "plan2.json"):
    for expr, run in ((step, "s1"), (ckpt, "s2")):
        a, b = mean(f"{run}a.json"), mean(f"{run}.json")
        m = (a + b) / 2
        noise = abs(a - b) / m
        spread = max(noise, stretch) if plan == "plan.json" else noise
        tol = max(0.15, 3 * spread)
        p = pred(plan, expr)
        errs.append(f"{(p - m) / m:+.4f}")
        tols.append(f"{tol:.4f}")
        print(f"# {name}: {plan}, {run}: predicted {p*1e3:.3f} ms, measured {a*1e3:.3f} and "
              f"{b*1e3:.3f} ms: {100*(p - m)/m:+.1f} %; noise {100*noise:.1f} %"
              + (f", compute stretched {100*stretch:.1f} %" if plan == "plan.json" else "")
              + f": tolerance {100*tol:.0f} %")
open(f"{A}/errors", "w").write(" ".join(errs) + "\n")
open(f"{A}/tolerances", "w").write(" ".join(tols) + "\n")
PY
}
within() { /usr/bin/python3 -c "import sys; sys.exit(not abs(float(sys.argv[1])) <= float(sys.argv[2]))" "$1" "$2"; }
all_within() { local i; for i in 0 1 2 3; do within "${E[$i]}" "${T[$i]}" || return 1; done; }

final=
for a in a1 a2 a3; do
    if measure $a && errors $a; then
        read -r -a E <"$WORK/$a/errors"
        read -r -a T <"$WORK/$a/tolerances"
        final=$a
        [ ${#E[@]} -eq 4 ] && [ ${#T[@]} -eq 4 ] && all_within && break
    fi
    [ $a = a3 ] || echo "# attempt $a missed or failed: measuring everything again"
done
if [ -n "$final" ]; then
    read -r -a E <"$WORK/$final/errors"
    read -r -a T <"$WORK/$final/tolerances"
    pct() { /usr/bin/python3 -c "import sys; print(f'{100*float(sys.argv[1]):.0f} %')" "$1"; }
    check "... a valid result document" valid_doc "$WORK/$final/plan.json"
    check "... the six measured inputs, each described" test "$(json_get "$WORK/$final/plan.json" \
        "sum(1 for i in d['config']['inputs'] if i['source'] and i['value'] > 0)")" = 6
    check "nominal compute: predicted mean step within $(pct "${T[0]}") of the step runs' (${E[0]})" within "${E[0]}" "${T[0]}"
    check "... and with a checkpoint every 10 steps, within $(pct "${T[1]}") (${E[1]})" within "${E[1]}" "${T[1]}"
    check "measured compute: within $(pct "${T[2]}") (${E[2]})" within "${E[2]}" "${T[2]}"
    check "... and with a checkpoint every 10 steps, within $(pct "${T[3]}") (${E[3]})" within "${E[3]}" "${T[3]}"
fi
finish
