#!/usr/bin/env bash
# Workload file version 2 replayed by trainpath step --workload
# (tests/fixtures/workload/fsdp-v2.json, written by hand: an FSDP job of two
# units, gradient accumulation over two micro-steps, so two layouts: the
# all-gathers alone, then with the reduce-scatters; two ranks, rank 1
# computing 3x slower). The comm thread runs the file's collectives, kind
# by kind, with their recorded bytes and in their order, in the first step
# of each layout (results.workload.replayed); each rank replays its own
# recorded rank's compute, so the recorded straggler is the replay's (the
# ranks swapped in the file: the other rank); a run on 3 ranks keeps every
# collective's total size; the workload's own kinds (send, recv, barrier)
# replay as coll's; plan reads the file; a bad key exits 2 naming it.
. "$(dirname "$0")/../lib.sh"

FX=$SRC/tests/fixtures/workload/fsdp-v2.json
D=$WORK/data; mkdir -p "$D"
J=$WORK/v2.json
check "step -n 2 --workload replays the FSDP file (8 steps)" run_rc 0 "$WORK/v2.out" \
    "$TP" step -n 2 --workload "$FX" --steps 8 --no-io --dir "$D" --json "$J"
check "... a valid document, version 2, 2 layouts and 2 ranks recorded, the source the file's" \
    test "$(valid_doc "$J" >/dev/null && json_get "$J" "r['workload']['version'], r['workload']['layouts'], r['workload']['recorded_ranks'], d['config']['workload']['source']")" = \
    "2 2 2 pytorch-fsdp"
# the file's collectives of a layout as (kind, bytes), and the replay's
# without the one it adds for the model's gradient
calls="f = json.load(open('$FX'))
want = lambda l: [(c['kind'], c['bytes']) for c in f['layouts'][l]]
got = lambda cs: [(c['kind'], c['bytes']) for c in cs if not c.get('added')]"
check "... the first step's collectives are the file's, kind, bytes and order (4 all-gathers)" \
    test "$(json_run "$J" "$calls
c = r['workload']['replayed']['collectives']
print(got(c) == want(f['steps']['layout'][0]), len(got(c)), sorted(set(k for k, _ in got(c))))")" = \
    "True 4 ['allgather']"
check "... no recorded allreduce holds the model's gradient: one allreduce of it added, last, and named" \
    test "$(json_run "$J" "
c = r['workload']['replayed']['collectives'][-1]
print(c['kind'], c['bytes'] == 4 * (d['config']['dim'] + 2), c.get('added'), c.get('model_gradient'), sum(1 for x in r['workload']['replayed']['collectives'] if x.get('added')))")" = \
    "allreduce True True True 1"
check "... each layout's first step ran that layout's collectives: all-gathers, then with the reduce-scatters" \
    test "$(json_run "$J" "$calls
ls = r['workload']['replayed']['layouts']
print([(x['layout'], x['step']) for x in ls], all(got(x['collectives']) == want(x['layout']) for x in ls),
      [k for k, _ in got(ls[1]['collectives'])].count('reduce-scatter'))")" = \
    "[(0, 0), (1, 1)] True 2"
check "... the gradient the reduce-scatters' bytes, the header and config say so" \
    test "$(json_get "$J" "d['config']['grad_bytes'] == 16776960 + 8388480, d['config']['buckets']") $(grep -c 'up to 6 recorded collectives a step' "$WORK/v2.out")" = \
    "True 6 1"
check "... each rank replays its own recorded rank; rank 1 recorded 3x slower, and slower in the replay" \
    test "$(json_run "$J" "
k = r['workload']['ranks']
print([x['replays'] for x in k], k[1]['recorded_compute_p50']['value'] > 2.5 * k[0]['recorded_compute_p50']['value'],
      k[1]['replayed_compute_p50']['value'] > k[0]['replayed_compute_p50']['value'])")" = \
    "[0, 1] True True"
echo "# replayed compute p50 (ms), rank 0 and 1: $(json_get "$J" "[round(x['replayed_compute_p50']['value'] / 1e6, 1) for x in r['workload']['ranks']]")"

# the same file with its ranks swapped: the straggler follows the file,
# not this machine's cores
S=$WORK/swapped.json
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['ranks'].reverse(); d['recorded']['ranks'].reverse(); json.dump(d, open(sys.argv[2], 'w'))" "$FX" "$S"
check "the ranks swapped in the file: rank 0 replays recorded rank 1, and is now the slower" \
    test "$(run_rc 0 "$WORK/sw.out" "$TP" step -n 2 --workload "$S" --steps 8 --no-io --dir "$D" -q --json "$WORK/sw.json" &&
        json_run "$WORK/sw.json" "
k = r['workload']['ranks']
print([x['replays'] for x in k], k[0]['replayed_compute_p50']['value'] > k[1]['replayed_compute_p50']['value'])")" = \
    "[1, 0] True"

check "3 ranks: rank 2 replays recorded rank 0; every collective keeps its recorded total bytes" \
    test "$(run_rc 0 "$WORK/n3.out" "$TP" step -n 3 --workload "$FX" --steps 4 --no-io --dir "$D" -q --json "$WORK/n3.json" &&
        json_run "$WORK/n3.json" "$calls
ls = r['workload']['replayed']['layouts']
print([x['replays'] for x in r['workload']['ranks']], all(got(x['collectives']) == want(x['layout']) for x in ls), len(ls))")" = \
    "[0, 1, 0] True 2"

check "--verify-repro 2: the model's gradient on its added allreduce, the same weights twice" \
    test "$(run_rc 0 "$WORK/rp.out" "$TP" step -n 2 --workload "$FX" --steps 4 --no-io --dir "$D" --verify-repro 2 -q --json "$WORK/rp.json" &&
        json_get "$WORK/rp.json" "r['reproducibility']['identical'], len(r['runs'])")" = "True 2"
check "--reduce exact on 1 and 2 ranks (one global batch): the same weights" \
    test "$(run_rc 0 "$WORK/e1.out" "$TP" step -n 1 --workload "$FX" --steps 4 --no-io --dir "$D" --batch 16 --reduce exact -q --json "$WORK/e1.json" &&
        run_rc 0 "$WORK/e2.out" "$TP" step -n 2 --workload "$FX" --steps 4 --no-io --dir "$D" --batch 16 --reduce exact -q --json "$WORK/e2.json" &&
        json_get "$WORK/e1.json" "r['reproducibility']['weights_sha256']")" = \
    "$(json_get "$WORK/e2.json" "r['reproducibility']['weights_sha256']" 2>/dev/null)"

# version 1's DDP file written as version 2: the buckets' allreduces, the
# model's gradient on the last (DDP's last bucket), nothing added
V=$WORK/ddp-v2.json
/usr/bin/python3 - "$SRC/tests/fixtures/workload/ddp-mlp.json" "$V" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b, st = d.pop('buckets'), d.pop('steps')
n = len(st['forward_ns'])
d['trainpath_workload'] = 2
d['layouts'] = [[{'kind': 'allreduce', 'bytes': x['bytes'], 'dtype': x['dtype'], 'group': -1, 'phase': 'backward'} for x in b]]
d['steps'] = {'layout': [0] * n}
d['ranks'] = [dict({k: st[k] for k in st}, rank=0,
                   ready_ns=[[st['forward_ns'][s] + x['ready_ns'][s] for x in b] for s in range(n)],
                   duration_ns=[[x['allreduce_ns'][s] for x in b] for s in range(n)])]
d['recorded']['ranks'] = [0]
json.dump(d, open(sys.argv[2], 'w'))
EOF
check "a DDP file as version 2: its buckets' allreduces in order, the model's gradient on the last, none added" \
    test "$(run_rc 0 "$WORK/ddp.out" "$TP" step -n 2 --workload "$V" --steps 3 --no-io --dir "$D" -q --json "$WORK/ddp.json" &&
        json_run "$WORK/ddp.json" "
c = r['workload']['replayed']['collectives']; b = json.load(open('$SRC/tests/fixtures/workload/ddp-mlp.json'))['buckets']
print([x['bytes'] for x in c] == [x['bytes'] for x in b], r['workload']['replayed']['bucket_bytes'] == [x['bytes'] for x in b],
      [x.get('model_gradient', False) for x in c][-1], any(x.get('added') for x in c))")" = \
    "True True True False"

# the workload's own kinds and coll's others: send and recv as sendrecv of
# the message, barrier as an allreduce of 4 bytes
K=$WORK/kinds-workload.json # (not the --json below: an output is never an input)
/usr/bin/python3 - "$FX" "$K" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
L = [{'kind': k, 'bytes': b, 'dtype': 'float32', 'group': 0, 'phase': 'forward'} for k, b in
     (('send', 48000), ('recv', 48000), ('barrier', 0), ('alltoall', 96000), ('broadcast', 24000),
      ('reduce', 24000), ('allreduce', 480000))]
d['layouts'] = [L]
d['steps']['layout'] = [0] * 4
for q in d['ranks']:
    q['ready_ns'] = [[int(q['forward_ns'][s] * (i + 1) / 8) for i in range(len(L))] for s in range(4)]
    del q['start_ns'], q['duration_ns']
json.dump(d, open(sys.argv[2], 'w'))
EOF
check "send, recv, barrier, alltoall, broadcast, reduce, allreduce: each replayed as coll's own, in order" \
    test "$(run_rc 0 "$WORK/kinds.out" "$TP" step -n 2 --workload "$K" --steps 2 --no-io --dir "$D" -q --json "$WORK/kinds.json" &&
        json_get "$WORK/kinds.json" "[(c['kind'], c['bytes'], c.get('recorded_kind', '')) for c in r['workload']['replayed']['collectives']]")" = \
    "[('sendrecv', 48000, 'send'), ('sendrecv', 48000, 'recv'), ('allreduce', 4, 'barrier'), ('alltoall', 96000, ''), ('broadcast', 24000, ''), ('reduce', 24000, ''), ('allreduce', 480000, '')]"

check "--trace: the comm thread's spans name the all-gathers as collectives, the added allreduce as a bucket" \
    test "$(run_rc 0 "$WORK/tr.out" "$TP" step -n 2 --workload "$FX" --steps 2 --no-io --dir "$D" -q --trace "$WORK/trace.json" --json "$WORK/tr.json" &&
        json_run "$WORK/trace.json" "
ev = d['traceEvents'] if isinstance(d, dict) else d
names = set(e['name'] for e in ev if e.get('ph') == 'X' and e.get('pid') == 0 and e.get('tid') == 1)
print(sorted(n for n in names if n.startswith('collective') or n.startswith('allreduce')))")" = \
    "['allreduce bucket 4', 'allreduce bucket 6', 'collective 0', 'collective 1', 'collective 2', 'collective 3', 'collective 4', 'collective 5']"

# plan's workload.from on version 2: the gradient the reduce-scatters',
# the overlap from the recorded work spans
P=$WORK/plan.yaml
{ printf 'workload:\n  from: %s\n  train_samples: 10M\n' "$FX"; sed -n '/^cluster:/,$p' "$SRC/docs/examples/plan.yaml"; } >"$P"
check "plan reads the version 2 file: its parameters, gradient bytes, batch; an overlap in (0, 1)" \
    test "$(run_rc 0 "$WORK/plan.out" "$TP" plan "$P" --json "$WORK/plan.json" &&
        json_run "$WORK/plan.json" "
w = d['config']['workload']
print(w['parameters'], round(w['gradient_bytes_per_parameter'] * w['parameters']), w['samples_per_gpu'], 0 < w['overlap'] < 1)")" = \
    "6291360.0 25165440 8.0 True"

bad() { local pat=$1; shift
    if run_rc 2 "$WORK/out" "$TP" step -n 2 --dir "$D" --no-io "$@" && grep -q -- "$pat" "$WORK/out"; then ok "bad input: $*"
    else echo "# wanted /$pat/"; sed 's/^/#   /' "$WORK/out" | head -3; not_ok "bad input: $*"; fi; }
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['layouts'][0][3]['kind']='allgatherx'; json.dump(d, open(sys.argv[2], 'w'))" "$FX" "$WORK/k.json"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['ranks'][1]['ready_ns'][1].pop(); json.dump(d, open(sys.argv[2], 'w'))" "$FX" "$WORK/r.json"
bad "\-\-workload $WORK/k.json: layouts\[0\]\[3\].kind: \"allgatherx\" is not a collective (allreduce, reduce-scatter, allgather, " --workload "$WORK/k.json"
bad "\-\-workload $WORK/r.json: ranks\[1\].ready_ns\[1\]: must have one time per collective of the step's layout (layouts\[1\]: 6)" --workload "$WORK/r.json"
finish
