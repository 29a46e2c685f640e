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
#   runs/refusals-*  runs of net, io, step and coll refused before they
#                measure: what each said, its exit code and its failed
#                document
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

# refusals NAME: each line of stdin the words of one run refused before it
# measures anything (bad values, ranges, choices, unknown and missing
# options, options of another subcommand), into runs/refusals-NAME.txt:
# the words, what it said and its exit code; the failed documents of the
# runs that name --json in runs/refusals-NAME-N.json
refusals() {
    local name=$1 n=0 words
    while read -ra words; do
        [ ${#words[@]} -gt 0 ] || continue
        n=$((n + 1))
        rm -f refused.json
        { echo "\$ trainpath ${words[*]}"; "$TP" "${words[@]}" 2>&1; echo "exit $?"; } |
            text_mask >>"$OUT/runs/refusals-$name.txt"
        [ -f refused.json ] && python3 "$MASK" refused.json "$WORK" "$SRC" \
            >"$OUT/runs/refusals-$name-$n.json"
    done
}
refusals net <<'EOF_NET'
net
net bogus
net lat --bogus
net lat h --bogus
net lat -p
net lat h --port
net lat h --port 0
net lat h --port 70000
net serve --port 70000
net lat h --sizes 2G
net lat h --sizes x
net lat h -s 8-4K,x
net lat h --iters 0
net lat h -n 1000000001
net lat h --time 0
net lat h -T 1x
net lat h --warmup x
net lat h --warmup 100000001
net lat h --warmup-time x
net lat h -w 0
net bw h --window 5000
net loaded h --streams 65
net loaded h --load-size 2G
net loaded h --load-size 4KB
net lat h --timeout 0
net lat h --timeout 1x
net lat h --mem gpu
net lat h --gpu 2000
net lat h --gpu 1
net lat h --cpu 99999
net lat h --cpu x
net lat h --bind 1.2.3.4
net lat h --one-off
net lat h --streams 2
net lat h -w 2
net lat h --iters 5 --time 1s
net lat h -t bogus
net lat
net lat a b
net serve x
net lat h --ti 1
net lat h --json refused.json --iters 0
net lat h --iters 0 --json refused.json
net bw h --json=refused.json --streams 2
EOF_NET
refusals io <<'EOF_IO'
io
io bogus
io checkpoint
io checkpoint d --size 0
io checkpoint d --size 1KB
io checkpoint d --shards 0
io checkpoint d --shards 5000
io checkpoint d --repeat 0
io checkpoint d --records 5
io checkpoint d --sync fsync
io dataset d --records 0
io dataset d --record-size x
io dataset d --files 9999
io dataset d --epochs 0
io dataset d --during x
io dataset d --count 1
io commit d --write-size x
io commit d --count 0
io commit d --time 0
io commit d --sync bad
io commit d --engine bad
io commit d --qd 0
io commit d --jobs 300
io commit d --bs 2G
io commit d --bs x
io commit d --batch 5000
io commit d --seed -1
io commit d --timeout 0
io commit d --bogus
io commit d --count
io commit d -q e f
io commit --device /dev/null d
io commit d --destroy-data
io commit d --verify
io dataset --device x --during checkpoint
io dataset d --dur x
io info
io info x --size 1G
io info x --mountinfo
io commit d --json refused.json --count 0
io commit d --count 0 --json refused.json
io info x --json=refused.json --qd 2
EOF_IO
refusals step <<'EOF_STEP'
step --bogus
step --steps
step --steps 0
step --scale 2
step --scale x
step --scale 0.5
step --batch 0
step --sample-size 1KB
step --samples 0
step --grad-size x
step --buckets 2000
step --compute-ms -1
step --dim 0
step --lr 0
step --lr 1e7
step --reduce fast
step --repro fast
step --re fast
step --in 1
step --verify-repro 101
step --inject-delay bad
step --ckpt-every x
step --ckpt-size 0
step --prefetch 65
step --qd 0
step --engine bad
step --seed x
step --compute tpu
step --mem gpu
step --backend mpi
step --gemm-size 8
step -n 0
step -n
step -P
step --timeout 0
step --gpu 5000
step --launcher bogus
step extra
step --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms --inject-delay comm:const:1ms
step --json refused.json --steps 0
step --steps 0 --json refused.json
step --busy-poll
step --bu
EOF_STEP
refusals coll <<'EOF_COLL'
coll --bogus
coll -t tcp
coll -o bogus
coll --op
coll -s 8G
coll -s x
coll -d f8
coll --redop xor
coll -r 2000
coll --iters 0
coll -T 0
coll -w 100001
coll --chunk 1KB
coll --repro fast
coll --re x
coll --backend bogus
coll --mem gpu
coll --inject-delay x
coll -n 0
coll -n 2000
coll -n
coll -P
coll --timeout 0
coll --gpu 5000
coll --launcher bogus
coll --intra bogus
coll --shm-stores bogus
coll extra
coll --json refused.json --iters 0
coll --iters 0 --json refused.json
EOF_COLL
exit 0
