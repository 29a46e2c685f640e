#!/usr/bin/env bash
# contrib/pytorch/trainpath_record.py on real jobs (Debian's torch, CPU,
# gloo, two processes), each file checked by check_v2.py, independently of
# the recorder: the workload file's version 2 rules, and the bytes the
# recorded model implies, computed from its layers.
#  - DDP: its buckets as allreduces in firing order, their bytes DDP's own
#    (_get_ddp_logging_data) and the model's gradient; with gather=True every
#    rank's times and the skew; version 1 from the same recording.
#  - FSDP: torch 1.13's FSDP cannot run here (the import's error is printed), so
#    fsdp_mirror.py makes FSDP's FULL_SHARD communication from the same
#    places with the calls of each torch (1.13's _all_gather_base and
#    _reduce_scatter_base, 2.x FSDP1's CPU all_gather and
#    reduce_scatter_tensor, FSDP2's keyword all_gather_into_tensor and
#    reduce_scatter_tensor): all-gathers of each flat parameter's padded
#    bytes in the forward and the backward, reduce-scatters of its gradient.
#  - trainpath step replays a DDP and an FSDP-style recording, collective
#    for collective.
#  - the checker refuses damaged files: the test can fail.
. "$(dirname "$0")/../../lib.sh"
HERE=$SRC/tests/integration/contrib/recorder
PY=/usr/bin/python3

$PY -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null ||
    skip_all "python3-torch with gloo is not installed (scripts/install-deps.sh installs it)"

# checked FILE MODE ARGS...: check_v2.py's rules, each printed
checked() {
    local out=$WORK/check.out
    $PY "$HERE/check_v2.py" "$@" >"$out" 2>&1
    local rc=$?
    cat "$out"
    [ "$rc" -eq 0 ]
}

# what torch 1.13's own FSDP does on this machine (said, not asserted)
echo "# $($PY -c 'import sys, torch; print("torch", torch.__version__, "Python", sys.version.split()[0])')"
fsdp=$($PY -c 'import torch.distributed.fsdp' 2>&1 | tail -1 | cut -c1-200)
echo "# import torch.distributed.fsdp: ${fsdp:-ok}"

D=$WORK/ddp.json
check "a DDP job (2 ranks, gloo, 8 steps, gather=True) records version 2, and version 1 of the same steps" \
    run_rc 0 "$WORK/ddp.out" timeout 300 $PY "$SRC/tests/integration/step/ddp_record.py" "$D" "$(free_port)" 8 mlp gather "v1=$WORK/ddp1.json"
check "... the version 2 rules hold" checked rules "$D"
check "... DDP's buckets: allreduces, the model's gradient bytes, DDP's own sizes; both ranks; skew" \
    checked ddp "$D" 8 2 "${D%.json}.ddp.json"
check "... version 1: DDP's buckets, ready from the forward's end" \
    checked v1 "$WORK/ddp1.json" 8 "${D%.json}.ddp.json"

D1=$WORK/ddp-own.json
check "a DDP job without gather records rank 0's figures alone" \
    run_rc 0 "$WORK/ddp-own.out" timeout 300 $PY "$SRC/tests/integration/step/ddp_record.py" "$D1" "$(free_port)" 5
check "... the version 2 rules hold (one rank, no skew)" checked rules "$D1"
check "... DDP's buckets, rank 0 alone" checked ddp "$D1" 5 1 "${D1%.json}.ddp.json"

for spec in "1.13 gather 2" "2.x-cpu own 1" "fsdp2 gather 2"; do
    read -r api mode nranks <<<"$spec"
    F=$WORK/fsdp-$api.json
    check "an FSDP-style job with torch $api FSDP's calls (2 ranks, 6 steps, $mode) records its collectives" \
        run_rc 0 "$WORK/fsdp-$api.out" timeout 300 $PY "$HERE/fsdp_mirror.py" "$F" "$(free_port)" 6 "$api" "$mode"
    check "... the version 2 rules hold" checked rules "$F"
    check "... all-gathers and reduce-scatters of each unit's padded flat parameter, in FSDP's order" \
        checked fsdp "$F" 6 "$nranks" "${F%.json}.units.json"
done
shims=$($PY -c "import json, sys; print(json.load(open(sys.argv[1]))['shims'])" "$WORK/fsdp-1.13.units.json")
echo "# gloo shims the FSDP-style job needed: $shims"

# trainpath step replays what the recorder wrote: every collective of the
# recorded step, its kind and bytes, in the recorded order (step may add one
# of its own to carry its toy model's gradient: "added", left out here)
replayed() { # replayed FILE: step -n 2 runs it; its replayed collectives are the file's layout
    local f=$1 r=${1%.json}.replay.json
    run_rc 0 "${f%.json}.replay.out" "$TP" step -n 2 --workload "$f" --steps 3 --no-io -q --json "$r" || return 1
    local got want
    got=$(json_get "$r" "[(c.get('recorded_kind', c['kind']), c['bytes'])
        for c in r['workload']['replayed']['collectives'] if not c.get('added')]")
    want=$(json_get "$f" "[(c['kind'], c['bytes']) for c in d['layouts'][0]]")
    [ "$got" = "$want" ] || { echo "# replayed $got"; echo "# recorded $want"; return 1; }
}
check "step -n 2 replays the DDP recording: its buckets' allreduces, byte for byte" replayed "$D"
check "step -n 2 replays the FSDP-style recording: its all-gathers and reduce-scatters, byte for byte" \
    replayed "$WORK/fsdp-fsdp2.json"

# the checker is not a rubber stamp: a damaged file fails it
damage() { # damage OUT PYTHON: d is the good FSDP file
    $PY -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[2], 'w'))" \
        "$WORK/fsdp-1.13.json" "$1"
}
refused() {
    if $PY "$HERE/check_v2.py" "$@" >"$WORK/bad.out" 2>&1; then
        echo "# the checker passed a damaged file:"; sed 's/^/#   /' "$WORK/bad.out" | tail -3; return 1
    fi
    grep "FAIL" "$WORK/bad.out" | head -2 | sed 's/^#   FAIL/#   refused, as it should be:/'
}
damage "$WORK/bad1.json" "d['layouts'][0][0]['bytes'] += 4"
damage "$WORK/bad2.json" "d['ranks'][1]['ready_ns'][0].pop()"
damage "$WORK/bad3.json" "d['skew']['arrival_ns'][0][0] += 1"
damage "$WORK/bad4.json" "d['layouts'][0][0]['kind'] = 'all_gather'"
check "the checker refuses a collective's bytes off by 4" \
    refused fsdp "$WORK/bad1.json" 6 2 "$WORK/fsdp-1.13.units.json"
check "the checker refuses a ready_ns list one short" refused rules "$WORK/bad2.json"
check "the checker refuses a skew that is not the ranks' max - min" refused rules "$WORK/bad3.json"
check "the checker refuses a kind the spec does not name" refused rules "$WORK/bad4.json"
finish
