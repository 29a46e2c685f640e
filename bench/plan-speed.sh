#!/usr/bin/env bash
# The plan's speed (issue: a 1,000,000-rank model with 1,000 steps in under
# 1 s on one core), side by side with its peer: brute-force Monte Carlo that
# draws every rank of every step, as a simulator modelling each rank does
# (ASTRA-sim and SimAI take no jitter input, so no tool of theirs can be
# run here for it). Both on one core (taskset -c 0), in this script:
#   1. bench/plan_speed: the jitter model alone, direct vs brute force;
#   2. the whole `trainpath plan` on docs/examples/plan.yaml at 1,048,576
#      GPUs (three candidates, the sweep, break-even, 1,000 simulated steps
#      each): wall time of the command.
# Not a test: it prints figures and ratios.
#
# usage: bench/plan-speed.sh [BUILD_DIR]      # default build
set -euo pipefail
BUILD=${1:-build}
die() { echo "plan-speed: $*" >&2; exit 2; }
[[ -x $BUILD/trainpath && -x $BUILD/plan_speed ]] || die "build first (ninja -C $BUILD)"
SRC=$(cd "$(dirname "$0")/.." && pwd)
PLAN=$SRC/docs/examples/plan.yaml
CPU=(taskset -c 0)
command -v taskset >/dev/null || CPU=()

"${CPU[@]}" "$BUILD/plan_speed" "$PLAN" 1000000 1000 5

best=
for _ in 1 2 3; do
    t0=$EPOCHREALTIME
    "${CPU[@]}" "$BUILD/trainpath" plan "$PLAN" --gpus 1048576 -q --json /dev/null
    t=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$EPOCHREALTIME")
    if [[ -z $best ]] || /usr/bin/python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" "$t" "$best"; then best=$t; fi
done
echo "trainpath plan docs/examples/plan.yaml --gpus 1048576 (3 candidates, sweep, break-even, 3 x 1000 steps): best of 3 $best s"
