#!/usr/bin/env bash
# Rank 0's memory and time for the final gather of a validation: every
# node's result (its documents, 180-270 KB a node here) to rank 0, held all
# at once (tp_boot_gather, as validate did before) against one at a time
# (tp_boot_gather_each, what validate uses now). A local group of N ranks on
# this host over loopback, 256 KiB each; the peer is the old way, in the
# same program, and the ratio is rank 0's peak resident memory.
# Not a test: it prints figures and ratios.
#
# usage: bench/fleet-gather.sh [BUILD_DIR] [N...]    # default build, 8 64 256
set -euo pipefail
BUILD=${1:-build}
shift || true
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(8 64 256)
[[ -x $BUILD/fleet_gather ]] || { echo "fleet-gather: build first (ninja -C $BUILD)" >&2; exit 2; }
for n in "${SIZES[@]}"; do
    out=$("$BUILD/fleet_gather" "$n" 262144 3)
    echo "$out"
    /usr/bin/python3 - "$out" <<'PY'
import re, sys
m = [float(x) for x in re.findall(r"peak +([0-9.]+) MiB", sys.argv[1])]
t = [float(x) for x in re.findall(r"best ([0-9.]+) s", sys.argv[1])]
print(f"  ratio (all at once / one at a time): memory {m[0] / m[1]:.1f}x, time {t[0] / t[1]:.2f}x")
PY
done
