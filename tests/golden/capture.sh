#!/usr/bin/env bash
# capture.sh BINARY OUTDIR: what a trainpath binary says, for a before/after
# comparison of a change that must not change behaviour (compare.sh).
#
# Written into OUTDIR (created; must not exist or be empty):
#   help/*.txt   every command's and subcommand's --help, found from the
#                binary itself: the commands from `trainpath --help`, the
#                subcommands from each command's usage lines (as
#                completions/trainpath.bash finds them), each with its exit code
#   runs/*.json  the result documents of a fixed set of fast, deterministic
#                runs on the fixtures of this tree (no root, no namespaces, no
#                network), masked by mask.py
#   runs/*.txt   each run's exit code, stdout and stderr, the work folder and
#                this tree's path masked
# The fixtures are this script's tree's, whichever binary is captured, so
# two binaries are fed the same bytes.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BINARY OUTDIR" >&2; exit 2; }
TP=$(realpath "$1") || exit 2
OUT=$2
[ -x "$TP" ] || { echo "$0: $1: not an executable" >&2; exit 2; }
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then
    echo "$0: $OUT: not empty" >&2; exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FX=$SRC/tests/fixtures
MASK=$HERE/mask.py
mkdir -p "$OUT/help" "$OUT/runs" || exit 2
WORK=$(mktemp -d /tmp/tp-golden.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 2

# masked text: the work folder and the source tree by name, not by path
text_mask() { sed -e "s|$WORK|<work>|g" -e "s|$SRC|<src>|g"; }

# help NAME ARGS...: the output of `trainpath ARGS... --help`
help() {
    local name=$1; shift
    { "$TP" "$@" --help 2>&1; echo "exit $?"; } | text_mask >"$OUT/help/$name.txt"
}

help trainpath
cmds=$("$TP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$cmds" ] || { echo "$0: no commands in '$TP --help'" >&2; exit 1; }
for c in $cmds; do
    help "$c" "$c"
    subs=$("$TP" "$c" --help 2>&1 | awk -v cmd="$c" '
        NR > 1 && /^$/ { exit }
        { for (i = 1; i < NF; i++)
              if ($i == "trainpath" && $(i + 1) == cmd && $(i + 2) ~ /^[a-z][a-z|-]*$/) {
                  n = split($(i + 2), w, "|")
                  for (j = 1; j <= n; j++) print w[j]
              } }' | sort -u)
    for s in $subs; do
        help "$c-$s" "$c" "$s"
    done
done

# run NAME DOC ARGS...: `trainpath ARGS...`; DOC is the result document it
# writes (named in ARGS, "-" for none), kept masked as runs/NAME.json
run() {
    local name=$1 doc=$2; shift 2
    { "$TP" "$@" 2>&1; echo "exit $?"; } | text_mask >"$OUT/runs/$name.txt"
    if [ "$doc" != - ]; then
        if [ -f "$doc" ]; then
            python3 "$MASK" "$doc" "$WORK" "$SRC" >"$OUT/runs/$name.json"
        else
            echo "no document" >"$OUT/runs/$name.json"
        fi
    fi
}

# plan: a plan file and the interval model
run plan-example plan.json plan "$SRC/docs/examples/plan.yaml" --json plan.json -q
run plan-gpus plan-64.json plan "$SRC/docs/examples/plan.yaml" --gpus 64 --json plan-64.json -q
run plan-interval interval.json plan interval --checkpoint-cost 30s --mtbf 24h --restart 5m \
    --json interval.json
# validate --simulate: the fleet triage on model fleets, a fixed seed
run simulate-example sim.json validate --simulate "$SRC/docs/examples/fleet.yaml" --seed 1 \
    --json sim.json -q
run simulate-noisy sim-noisy.json validate --simulate "$SRC/docs/examples/fleet-noisy.yaml" \
    --seed 7 --json sim-noisy.json -q
run simulate-screen sim-screen.json validate --simulate "$SRC/docs/examples/fleet.yaml" --seed 3 \
    --tier screen --json sim-screen.json -q
# check: the rules, facts of snapshot roots (check's, and the sysinfo and
# counters snapshots read as roots), audits of them against the policy
run check-rules - check rules
for root in check/node-rdma check/target-open sysinfo counters/ib/before counters/roce/after \
    counters/tcp/after counters/pcie/during counters/pause/after counters/reset/after; do
    [ -d "$FX/$root" ] || continue
    n=facts-${root//\//-}
    run "$n" "$n.json" check facts --root "$FX/$root" --json "$n.json"
done
run audit-node-rdma audit-rdma.json check --policy "$SRC/docs/examples/policy.yaml" \
    --root "$FX/check/node-rdma" --json audit-rdma.json
run audit-target-open audit-target.json check --policy "$SRC/docs/examples/policy.yaml" \
    --root "$FX/check/target-open" --json audit-target.json
run audit-facts audit-facts.json check --policy "$SRC/docs/examples/policy.yaml" \
    --facts "$FX/check/node-rdma.json" --json audit-facts.json
# io info: the block path of the sysfs snapshot's devices, and of this
# host's folders through a mountinfo snapshot
for dev in nvme0n1 /dev/nvme2n1 /dev/nvme3n1p1 nvme4n1 dm-0 vda1 /dev/loop0; do
    n=io-info-$(basename "$dev")
    run "$n" "$n.json" io info "$dev" --sysfs-root "$FX/blkpath/sys" --json "$n.json" -q
done
run io-info-mountinfo io-mnt.json io info / --mountinfo "$FX/blkpath/mountinfo-virtio" \
    --json io-mnt.json -q
# workload import: NCCL logs and small traces
run wl-nccl-ddp wl1.json workload import --from nccl-log --out wl1.json --samples 1000 \
    --sample-bytes 4096 --compute-ms 50 -q "$FX/nccl/ddp_2rank_v2.18.log"
run wl-nccl-fp8 wl2.json workload import --from nccl-log --out wl2.json --samples 1000 \
    --sample-bytes 4096 --compute-ms 50 -q "$FX/nccl/nccl_v2.21_bf16_fp8.log"
run wl-trace-dlrm wl4.json workload import --out wl4.json --samples 64 --sample-bytes 1024 -q \
    "$FX/traces/param_dlrm_ws8_r0.json.gz" "$FX/traces/param_dlrm_ws8_r1.json.gz"
# sdc: a short seeded screen (its hashes are the same on every run)
run sdc sdc.json sdc --steps 200 --threads 2 --seed 5 --json sdc.json -q
# report: over the documents above; io info's with its live counters
# probe taken out (the machine's other traffic moves them: counters.loss
# and the like would differ between two runs of one binary)
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d.get("results", {}).pop("counters", None)
json.dump(d, open(sys.argv[2], "w"))' io-info-nvme0n1.json io-info-still.json 2>/dev/null
run report-diff rdiff.json report diff plan.json plan.json --all --json rdiff.json
run report-add radd.json report add plan.json plan-64.json io-info-still.json --db hist.sqlite \
    --json radd.json
run report-baseline rbase.json report baseline --db hist.sqlite --json rbase.json
run report-prometheus rprom.json report prometheus --out prom.txt plan.json io-info-still.json \
    --host golden --json rprom.json
[ -f prom.txt ] && text_mask <prom.txt >"$OUT/runs/report-prometheus.prom"
exit 0
