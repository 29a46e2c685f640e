#!/usr/bin/env bash
# trainpath workload import on the real public traces and logs of
# tests/fixtures/ (their sources, commits and licences in SOURCES.md
# beside them), each held to what an independent reader makes of the same
# file: expect.py (Python's json and gzip, written from the import rules of
# docs/workload.md, not from the C code) and compare.py (every step's
# collectives: kind, bytes, dtype, group, readiness, the work's start and
# duration, the forward, backward, optimizer and step). Then the ranks of
# one job together (PARAM's 8 DLRM ranks, HTA's two ranks of a 128-rank
# torchrec job): each rank held to its own file, and the skew checked
# against an independent alignment; the files the import must refuse, each
# for the reason the reader sees too; a .json.gz against the same plain;
# and the NCCL/RCCL log lines pasted in public issues.
. "$(dirname "$0")/../lib.sh"

FX=$SRC/tests/fixtures/traces
NX=$SRC/tests/fixtures/nccl
EXPECT=$SRC/tests/integration/wlimport/expect.py
COMPARE=$SRC/tests/integration/wlimport/compare.py
imp() { "$TP" workload import -q --samples 32 --sample-bytes 1024 "$@"; }

# 1. one rank's trace, held to the reader
for f in hta_nccl_ddp_ws2_r0 hta_resnet_ws1_r0 hta_dlrm_ws8_r3 hta_gloo_cpu_ws300_r34 \
    hta_torchrec_ws16_r0 hta_torchrec_ws128_r0 hta_torchrec_ws128_r1 \
    tracelens_rccl_ddp_mi300_r0 param_dlrm_ws8_r3; do
    python3 "$EXPECT" "$FX/$f.json.gz" >"$WORK/$f.exp" 2>"$WORK/$f.experr"
    if imp --out "$WORK/$f.wl" "$FX/$f.json.gz" >"$WORK/$f.out" 2>&1 &&
        python3 "$COMPARE" "$WORK/$f.exp" "$WORK/$f.wl" >"$WORK/$f.cmp"; then
        ok "$f: $(tail -1 "$WORK/$f.cmp") with the independent reader"
    else
        sed 's/^/# /' "$WORK/$f.out" "$WORK/$f.cmp" "$WORK/$f.experr" 2>/dev/null | head -12
        not_ok "$f: the import agrees with the independent reader"
    fi
done

# 2. the ranks of one job: each held to its own file; the skew against an
# independent alignment (each rank's clock offset the lower median of its
# collectives' work ends against rank 0's; a collective's arrival skew the
# last rank's call after the first's)
skew_check() { # WORKLOAD EXPECTED...
    python3 - "$@" <<'PY'
import json, statistics, sys
wl = json.load(open(sys.argv[1]))
exp = [json.load(open(p)) for p in sys.argv[2:]]
exp.sort(key=lambda d: d["rank"])
def ends(d):
    return [s["origin_ns"] + c["start_ns"] + c["duration_ns"] if c["duration_ns"] is not None else None
            for s in d["steps"] for c in s["collectives"]]
def readies(d):
    return [s["origin_ns"] + c["ready_ns"] for s in d["steps"] for c in s["collectives"]]
# the collectives lined up by group (or kind) and sequence within each step
def keyed(d):
    out = []
    for si, s in enumerate(d["steps"]):
        seen = {}
        for c in s["collectives"]:
            g = c["group_name"] if c["group_name"] is not None else c["kind"]
            seen[g] = seen.get(g, -1) + 1
            out.append(((si, g, seen[g]), s["origin_ns"], c))
    return {k: (o, c) for k, o, c in out}
k0 = keyed(exp[0])
order = [k for k, _ in sorted(k0.items(), key=lambda kv: list(k0).index(kv[0]))]
off = []
for d in exp:
    kd = keyed(d)
    diffs = [(kd[k][0] + kd[k][1]["start_ns"] + kd[k][1]["duration_ns"]) -
             (k0[k][0] + k0[k][1]["start_ns"] + k0[k][1]["duration_ns"])
             for k in order if kd[k][1]["duration_ns"] is not None and k0[k][1]["duration_ns"] is not None]
    off.append(int(statistics.median_low(sorted(diffs))) if diffs else 0)
arr = []
for k in order:
    t = [keyed(d)[k][0] + keyed(d)[k][1]["ready_ns"] - off[r] for r, d in enumerate(exp)]
    arr.append(max(t) - min(t))
got = [a for s in wl["skew"]["arrival_ns"] for a in s]
bad = [i for i, (a, b) in enumerate(zip(arr, got)) if abs(a - b) > 2000]
print(len(arr) == len(got), not bad, [abs(o - w) <= 2000 for o, w in zip(off, wl["skew"]["offset_ns"])].count(False) == 0,
      [r["rank"] for r in wl["ranks"]] == [d["rank"] for d in exp])
PY
}
ranks=()
for r in 0 1 2 3 4 5 6 7; do
    ranks+=("$FX/param_dlrm_ws8_r$r.json.gz")
    python3 "$EXPECT" "$FX/param_dlrm_ws8_r$r.json.gz" >"$WORK/dlrm$r.exp" 2>/dev/null
done
check "PARAM's 8 DLRM ranks of one job import together" imp --out "$WORK/dlrm.wl" "${ranks[@]}"
good=0
for r in 0 1 2 3 4 5 6 7; do
    python3 "$COMPARE" --rank "$r" "$WORK/dlrm$r.exp" "$WORK/dlrm.wl" >"$WORK/dlrm$r.cmp" && good=$((good + 1))
done
check "... every rank's figures are its own file's (8 of 8: $good)" test "$good" = 8
check "... the wrong rank's file does not match (rank 1's against rank 0's figures)" \
    eval "! python3 '$COMPARE' --rank 0 '$WORK/dlrm1.exp' '$WORK/dlrm.wl' >/dev/null"
s=$(skew_check "$WORK/dlrm.wl" "$WORK"/dlrm?.exp)
check "... the clock offsets and each collective's arrival skew as an independent alignment gives them ($s)" \
    test "$s" = "True True True True"
echo "# $(json_get "$WORK/dlrm.wl" "d['skew']['offset_ns'], d['skew']['slowest_rank'], max(max(s) for s in d['skew']['arrival_ns'])")"
python3 "$EXPECT" "$FX/hta_torchrec_ws128_r0.json.gz" >"$WORK/t0.exp" 2>/dev/null
python3 "$EXPECT" "$FX/hta_torchrec_ws128_r1.json.gz" >"$WORK/t1.exp" 2>/dev/null
check "HTA's two ranks of a 128-rank torchrec job import together (calls from two threads in other orders)" \
    eval "imp --out '$WORK/trec.wl' '$FX/hta_torchrec_ws128_r1.json.gz' '$FX/hta_torchrec_ws128_r0.json.gz' 2>'$WORK/trec.err'"
s=$(skew_check "$WORK/trec.wl" "$WORK/t0.exp" "$WORK/t1.exp")
check "... their skew as the independent alignment gives it ($s)" test "$s" = "True True True True"

# 3. what the import must refuse, each for the reason the reader sees too
refuse() { # FIXTURE PATTERN READER-CONDITION DESC
    local f=$1 pat=$2 cond=$3
    python3 "$EXPECT" "$FX/$f.json.gz" >"$WORK/$f.exp" 2>/dev/null
    local why
    why=$(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($cond)" "$WORK/$f.exp")
    if run_rc 2 "$WORK/out" imp --out "$WORK/$f.wl" "$FX/$f.json.gz" && grep -q -- "$pat" "$WORK/out" &&
        [ "$why" = True ] && [ ! -e "$WORK/$f.wl" ]; then ok "$f refused: $4"
    else echo "# reader: $why"; sed 's/^/#   /' "$WORK/out" | head -3; not_ok "$f refused: $4"; fi
}
refuse hta_ddp_torch113_ws2_r1 "step 1's collective 1 (allreduce) has no bytes in any file" \
    "all(c['bytes'] is None for s in d['steps'] for c in s['collectives'])" \
    "torch ~1.13: no size in any event (the reader finds none either)"
refuse hta_rocm62_mi250_1gpu "no collective in the trace's 2 steps" \
    "sum(len(s['collectives']) for s in d['steps']) == 0" "ROCm 6.2, one GPU: no collective"
refuse kineto_resnet50_torch18 "no collective in the trace's" \
    "sum(len(s['collectives']) for s in d['steps']) == 0" "torch 1.8's Kineto, one GPU: no collective"
refuse tracelens_vllm_tp8_b200_r0 "no step in the trace.*inference trace" \
    "any('no ProfilerStep' in w for w in d['warnings'])" "vLLM inference (TP 8): no step"
refuse hta_large_integer_ids "no step in the trace" "True" "ids above int64 read, then no step"

# 4. gzip or not: the same
zcat "$FX/hta_nccl_ddp_ws2_r0.json.gz" >"$WORK/plain.json"
check "a .json.gz and the same trace plain import to the same workload (but the files' SHA-256)" \
    eval "imp --out '$WORK/plain.wl' '$WORK/plain.json' && python3 -c \"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in a, b: d.pop('imported')
sys.exit(a != b)\" '$WORK/plain.wl' '$WORK/hta_nccl_ddp_ws2_r0.wl'"

# 4b. a file name with an escape sequence is printed as safe text; an
# interrupt ends an import that reads standard input: 130 within 3 s of the
# signal (before: after the whole pipe, read to its end for the hash),
# nothing written
esc="$WORK/$(printf '\033[2Jx')trace.json.gz"
cp "$FX/hta_nccl_ddp_ws2_r0.json.gz" "$esc"
"$TP" workload import --samples 32 --sample-bytes 1024 --out "$WORK/esc.wl" "$esc" >"$WORK/esc.out" 2>&1
check "a file name with an escape sequence: imported, no escape byte printed" \
    eval "[ -s '$WORK/esc.wl' ] && ! grep -q \$'\\033' '$WORK/esc.out' && grep -q 'x[a-z]*trace.json.gz' '$WORK/esc.out'"
python3 "$SRC/tests/integration/wlimport/gen_trace.py" "$FX/hta_nccl_ddp_ws2_r0.json.gz" 3e8 2>/dev/null |
    "$TP" workload import --samples 32 --sample-bytes 1024 --out "$WORK/int.wl" - >"$WORK/int.out" 2>&1 &
ipid=$!
sleep 1
kill -INT "$ipid"
t0=$(date +%s%N)
timeout 3 tail --pid="$ipid" -f /dev/null
ims=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$ipid"
irc=$?
check "SIGINT while reading standard input: exit 130 within 3 s, 'interrupted by SIGINT', nothing written (exit $irc after $ims ms)" \
    eval "[ $irc = 130 ] && [ $ims -lt 3000 ] && grep -q 'interrupted by SIGINT' '$WORK/int.out' && [ ! -e '$WORK/int.wl' ]"

# 5. NCCL and RCCL log lines from public issues: each log's first layout is
# a run of the reader's calls of that rank (its host, pid and device), in
# order, with the same kinds and bytes
for f in "$NX"/issue_*.log; do
    b=$(basename "$f" .log)
    python3 "$EXPECT" --log "$f" >"$WORK/$b.exp" 2>/dev/null
    if imp --compute-ms 10 --out "$WORK/$b.wl" "$f" >"$WORK/$b.out" 2>&1; then
        r=$(python3 - "$WORK/$b.exp" "$WORK/$b.wl" <<'PY'
import json, sys
exp, wl = (json.load(open(p)) for p in sys.argv[1:])
who = wl["imported"]["files"][0]["process"].split()  # [host] pid N
pid = int(who[-1])
host = who[0] if len(who) == 3 else None
mine = [c for c in exp["collectives"] if c["pid"] == pid and (host is None or c["host"] == host)]
devs = sorted({c["dev"] for c in mine if c["dev"] is not None})
if devs:
    mine = [c for c in mine if c["dev"] == devs[0]]
seq = [(c["kind"], c["bytes"]) for c in mine]
lay = [(c["kind"], c["bytes"]) for c in wl["layouts"][0]]
print(any(seq[i:i + len(lay)] == lay for i in range(len(seq) - len(lay) + 1)))
PY
)
        check "$b: the log's step is a run of the reader's calls of one rank" test "$r" = True
    else
        if grep -q "no usable collective line" "$WORK/$b.out" &&
            [ "$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))['collectives']))" "$WORK/$b.exp")" = 0 ]; then
            ok "$b: refused, no collective line (the reader finds none either)"
        else sed 's/^/#   /' "$WORK/$b.out" | head -3; not_ok "$b: imported or refused for its reason"; fi
    fi
done
finish
